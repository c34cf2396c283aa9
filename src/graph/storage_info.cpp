// storage_info(): a stored array's layout and compression, from its metadata only. Each
// driver's source answers (Node::stored_info); this is b2nd's answer.
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
  StorageInfo info;
  if (!stored.node()->stored_info(info))
    throw ValueError("storage_info: the array is not a stored array (it is '" + stored.node()->kind() + "')");
  return info;
}

bool B2ndSource::stored_info(StorageInfo& info) const {
  const blosc2_schunk* sc = arr_->sc;
  info.format = "b2nd";
  info.urlpath = source_name();
  info.shape = shape();
  info.chunks = grid_.chunks();
  info.blocks = blocks_;
  info.dtype = dtype();
  const char* name = nullptr;
  info.codec = blosc2_compcode_to_compname(sc->compcode, &name) >= 0 && name ? name : std::to_string(sc->compcode);
  info.clevel = sc->clevel;
  info.filters.clear();
  for (int i = 0; i < BLOSC2_MAX_FILTERS; ++i)
    if (sc->filters[i] != BLOSC_NOFILTER) {
      if (!info.filters.empty()) info.filters += '+';
      info.filters += filter_name(sc->filters[i]);
    }
  if (info.filters.empty()) info.filters = "nofilter";
  info.nbytes = sc->nbytes;
  info.cbytes = sc->cbytes;
  info.contiguous = sc->storage ? sc->storage->contiguous : true;
  return true;
}

}  // namespace b2lazy
