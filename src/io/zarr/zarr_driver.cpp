// The Zarr driver (b2lazy/driver.hpp): v2 and v3 arrays in local directory stores
// ("x.zarr", "zarr:PATH", or a directory holding zarr.json or .zarray) and in byte stores
// ("s3://bucket/x.zarr", "https://host/x.zarr"); writes v3.
#include <sys/stat.h>

#include "b2lazy/driver.hpp"
#include "io/zarr/zarr_keys.hpp"
#include "io/zarr/zarr_sink.hpp"
#include "io/zarr/zarr_source.hpp"
#include "io/zarr/zarr_store_sink.hpp"

namespace b2lazy {

namespace {

bool recognizes_dir(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  for (const char* f : {"/zarr.json", "/.zarray", "/.zgroup"})
    if (::stat((path + f).c_str(), &st) == 0) return true;
  return false;
}

}  // namespace

Driver zarr_driver() {
  Driver d;
  d.name = "zarr";
  d.schemes = {"zarr"};
  d.suffixes = {".zarr"};
  d.suite_cases = {{"zarr", ".zarr"}, {"zarr_sharded", ".zarr", true}};
  d.recognizes = recognizes_dir;
  d.open = [](const std::string& path) -> NodePtr { return ZarrSource::open(path); };
  d.create = [](const SinkSpec& s) -> std::unique_ptr<Sink> { return std::make_unique<ZarrSink>(s); };
  d.create_part = [](const SinkSpec& s, const std::string& staging) -> std::unique_ptr<Sink> {
    return std::make_unique<ZarrSink>(s, staging);
  };
  // A store of local files takes the local path (its pinned directory and checks).
  d.recognizes_in_store = [](const StorePtr& store) {
    const std::string local = store->local_path();
    return local.empty() ? zarr::store_holds_zarr(store) : recognizes_dir(local);
  };
  d.open_in_store = [](const StorePtr& store) -> NodePtr {
    const std::string local = store->local_path();
    if (!local.empty()) return ZarrSource::open(local);
    return ZarrSource::open(store);
  };
  d.create_in_store = [](const SinkSpec& s, const StorePtr& store) -> std::unique_ptr<Sink> {
    return std::make_unique<ZarrStoreSink>(s, store);
  };
  return d;
}

}  // namespace b2lazy
