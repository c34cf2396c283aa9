// The b2nd driver (b2lazy/driver.hpp): Blosc2 NDim arrays in a contiguous file (".b2nd")
// or a sparse directory, read by B2ndSource and written by B2ndWriter. The default format.
#include <sys/stat.h>

#include <cstring>

#include "b2lazy/driver.hpp"
#include "b2lazy/error.hpp"
#include "storage/b2nd_source.hpp"
#include "storage/b2nd_store_sink.hpp"
#include "storage/b2nd_writer.hpp"
#include "storage/output_path.hpp"

namespace b2lazy {

Driver b2nd_driver() {
  Driver d;
  d.name = "b2nd";
  d.schemes = {"b2nd"};
  d.suffixes = {".b2nd"};
  d.suite_cases = {{"b2nd_file", ".b2nd"}, {"b2nd_sparse", "/"}};  // a frame file; a sparse directory
  d.recognizes = [](const std::string& path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) return false;
    try {
      return b2nd_replace_rule().holds_array(path, S_ISDIR(st.st_mode));
    } catch (const Error&) {
      return false;
    }
  };
  d.open = [](const std::string& path) -> NodePtr { return B2ndSource::open(path); };
  d.create = [](const SinkSpec& s) -> std::unique_ptr<Sink> {
    ComputeOptions o = *s.options;
    o.urlpath = s.path;
    const std::string where = s.path.empty() ? std::string("in memory") : "'" + s.path + "'";
    if (!o.shards.empty()) throw ValueError("compute: shards apply to Zarr outputs; the output " + where + " is b2nd");
    if (o.cparams.compressor != "blosc")
      throw ValueError("compute: compressor '" + o.cparams.compressor + "' applies to Zarr outputs; the output " +
                       where + " is b2nd (Blosc2: choose codec, clevel and filter)");
    return std::make_unique<B2ndWriter>(s.shape, s.dtype, s.chunks, s.blocks, o);
  };
  // Over a store (a remote URL): the object at key "" (storage/store_io.hpp).
  d.recognizes_in_store = [](const StorePtr& store) {
    try {
      // A Blosc2 frame: a msgpack array, then the string "b2frame" (bytes 2..8).
      auto parts = store->read("", {ByteRange{0, 16}});
      return parts && parts->size() == 1 && (*parts)[0].size() == 16 &&
             std::memcmp((*parts)[0].data() + 2, "b2frame", 7) == 0;
    } catch (const Error&) {
      return false;
    }
  };
  d.open_in_store = [](const StorePtr& store) -> NodePtr { return B2ndSource::open_in_store(store); };
  d.create_in_store = [](const SinkSpec& s, const StorePtr& store) { return create_b2nd_store_sink(s, store); };
  return d;
}

}  // namespace b2lazy
