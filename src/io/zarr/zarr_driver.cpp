// The Zarr driver (b2lazy/driver.hpp): v2 and v3 arrays in local directory stores
// ("x.zarr", "zarr:PATH", or a directory holding zarr.json or .zarray); writes v3.
#include <sys/stat.h>

#include "b2lazy/driver.hpp"
#include "io/zarr/zarr_sink.hpp"
#include "io/zarr/zarr_source.hpp"

namespace b2lazy {

Driver zarr_driver() {
  Driver d;
  d.name = "zarr";
  d.schemes = {"zarr"};
  d.suffixes = {".zarr"};
  d.recognizes = [](const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    for (const char* f : {"/zarr.json", "/.zarray", "/.zgroup"})
      if (::stat((path + f).c_str(), &st) == 0) return true;
    return false;
  };
  d.open = [](const std::string& path) -> NodePtr { return ZarrSource::open(path); };
  d.create = [](const SinkSpec& s) -> std::unique_ptr<Sink> { return std::make_unique<ZarrSink>(s); };
  d.create_part = [](const SinkSpec& s, const std::string& staging) -> std::unique_ptr<Sink> {
    return std::make_unique<ZarrSink>(s, staging);
  };
  return d;
}

}  // namespace b2lazy
