// storage_info(): a b2nd file's layout and compression, from its metadata only.
#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "storage/b2nd_source.hpp"
#include "storage/blosc2_util.hpp"

namespace b2lazy {

namespace {
std::string filter_name(uint8_t f) {
  switch (f) {
    case BLOSC_SHUFFLE: return "shuffle";
    case BLOSC_BITSHUFFLE: return "bitshuffle";
    case BLOSC_DELTA: return "delta";
    case BLOSC_TRUNC_PREC: return "trunc_prec";
    default: return "filter" + std::to_string(f);
  }
}
}  // namespace

StorageInfo storage_info(const std::string& urlpath) {
  return storage_info(open(urlpath));  // open() checks the path and the format
}

StorageInfo storage_info(const Array& stored) {
  const auto* src = dynamic_cast<const B2ndSource*>(stored.node().get());
  if (!src) throw ValueError("storage_info: the array is not a stored b2nd array (it is '" + stored.node()->kind() + "')");
  const b2nd_array_t* arr = src->raw();
  const blosc2_schunk* sc = arr->sc;
  StorageInfo info;
  info.urlpath = src->source_name();
  info.shape = src->shape();
  info.chunks = src->storage_grid()->chunks();
  info.blocks = src->blocks();
  info.dtype = src->dtype();
  const char* name = nullptr;
  info.codec = blosc2_compcode_to_compname(sc->compcode, &name) >= 0 && name ? name : std::to_string(sc->compcode);
  info.clevel = sc->clevel;
  for (int i = 0; i < BLOSC2_MAX_FILTERS; ++i)
    if (sc->filters[i] != BLOSC_NOFILTER) {
      if (!info.filters.empty()) info.filters += '+';
      info.filters += filter_name(sc->filters[i]);
    }
  if (info.filters.empty()) info.filters = "nofilter";
  info.nbytes = sc->nbytes;
  info.cbytes = sc->cbytes;
  info.contiguous = sc->storage ? sc->storage->contiguous : true;
  return info;
}

}  // namespace b2lazy
