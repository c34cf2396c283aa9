#include "storage/b2nd_writer.hpp"

#include <atomic>
#include <cstring>

#include "b2lazy/error.hpp"
#include "core/strided_copy.hpp"
#include "runtime/thread_state.hpp"
#include "storage/b2nd_source.hpp"
#include "storage/blosc2_util.hpp"
#include "storage/output_path.hpp"

namespace b2lazy {

B2ndWriter::B2ndWriter(const Shape& shape, DType dtype, const Shape& chunks, const Shape& blocks,
                       const ComputeOptions& opts)
    : dtype_(dtype), grid_(shape, chunks), blocks_(blocks) {
  ensure_blosc2();
  const size_t nd = shape.size();
  if (blocks.size() != nd) throw ValueError("blocks " + shape_str(blocks) + " do not match shape " + shape_str(shape));
  for (size_t d = 0; d < nd; ++d)
    if (blocks[d] <= 0 || blocks[d] > chunks[d])
      throw ValueError("blocks " + shape_str(blocks) + " must be positive and fit in chunks " + shape_str(chunks));
  if (prod(chunks) > ((int64_t(1) << 31) - 64) / static_cast<int64_t>(itemsize(dtype)))  // (no product to overflow)
    throw ValueError("chunks " + shape_str(chunks) + " exceed Blosc2's 2 GiB chunk limit");
  cparams_ = make_cparams(opts.cparams, dtype, 1);

  std::string path;
  bool contiguous = false;
  if (!opts.urlpath.empty()) {
    final_path_ = strip_trailing_slashes(opts.urlpath);
    const OutputKind there = classify_output(final_path_);  // before anything is created
    // Default form: a file, unless the path ends with '/' or holds a sparse directory.
    contiguous = opts.contiguous.value_or(opts.urlpath.back() != '/' && there != OutputKind::ArrayDirectory);
    temp_ = std::make_unique<OutputTemp>(final_path_);
    path = temp_->array_path();
  }
  blosc2_dparams dparams = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage storage = BLOSC2_STORAGE_DEFAULTS;
  storage.contiguous = contiguous;
  storage.urlpath = path.empty() ? nullptr : const_cast<char*>(path.c_str());
  storage.cparams = &cparams_;
  storage.dparams = &dparams;
  std::vector<int32_t> c32(chunks.begin(), chunks.end()), b32(blocks.begin(), blocks.end());
  std::string dt = numpy_dtype_str(dtype);
  b2nd_context_t* ctx = b2nd_create_ctx(&storage, static_cast<int8_t>(nd), shape.data(), c32.data(), b32.data(),
                                        dt.c_str(), 0, nullptr, 0);
  if (!ctx)
    throw ValueError("invalid output parameters: shape " + shape_str(shape) + ", chunks " + shape_str(chunks) +
                     ", blocks " + shape_str(blocks));
  int rc = b2nd_uninit(ctx, &arr_);
  b2nd_free_ctx(ctx);
  if (rc < 0 || !arr_) {
    temp_.reset();
    throw IOError("cannot create output '" + (final_path_.empty() ? std::string("<memory>") : final_path_) +
                  "': " + print_error(rc));
  }
  extchunk_ = Shape(arr_->extchunkshape, arr_->extchunkshape + nd);
  // Blocks of extent 1 along leading axes, split along one axis and whole along the rest
  // are laid out in the chunk's C order: a full C-order chunk is compressed as it is.
  size_t p = 0;
  while (p < nd && blocks_[p] == 1) ++p;
  c_order_blocks_ = true;
  for (size_t d = p + 1; d < nd; ++d) c_order_blocks_ = c_order_blocks_ && blocks_[d] == extchunk_[d];
  // The schunk's cparams carry the blocksize b2nd derived from the block shape.
  cparams_ = *arr_->sc->storage->cparams;
  cparams_.schunk = arr_->sc;
  cparams_.nthreads = 1;
}

B2ndWriter::~B2ndWriter() {
  if (arr_) b2nd_free(arr_);
  temp_.reset();  // removes the temporary (after a finish(): whatever it took out of place)
}

// Chunk `id` from its box's dense C order into block-major order (in place when that is
// the same), handed to `then`.
void B2ndWriter::to_block_major(int64_t id, const void* data, ThreadState& ts,
                                const std::function<void(const void*)>& then) const {
  const size_t nd = grid_.shape().size(), isz = itemsize(dtype_);
  Box box = grid_.chunk_box(id);
  Shape cshape = box.shape();
  if (cshape == extchunk_ && c_order_blocks_) return then(data);  // a full chunk already in block-major order
  ScratchScope scope(ts.scratch);
  const int64_t n = prod(extchunk_);
  char* chunk = static_cast<char*>(scope.alloc(n * isz));
  if (cshape != extchunk_) std::memset(chunk, 0, n * isz);  // padding compresses to nothing
  // Scatter each block's part of the C-order chunk into its block-major place.
  Shape src_strides = byte_strides(cshape, isz), bstrides = byte_strides(blocks_, isz);
  Shape bgrid(nd);
  for (size_t d = 0; d < nd; ++d) bgrid[d] = extchunk_[d] / blocks_[d];
  const int64_t block_bytes = prod(blocks_) * static_cast<int64_t>(isz);
  int64_t nblocks = prod(bgrid);
  Shape bc(nd, 0), count(nd);
  for (int64_t b = 0; b < nblocks; ++b) {
    const char* src = static_cast<const char*>(data);
    bool empty = false;
    for (size_t d = 0; d < nd; ++d) {
      int64_t lo = bc[d] * blocks_[d];
      count[d] = std::min(blocks_[d], cshape[d] - lo);
      if (count[d] <= 0) empty = true;
      src += lo * src_strides[d];
    }
    if (!empty) copy_strided(nd, count.data(), src, src_strides.data(), chunk + b * block_bytes, bstrides.data(), isz);
    for (size_t d = nd; d-- > 0;) {
      if (++bc[d] < bgrid[d]) break;
      bc[d] = 0;
    }
  }
  if (nd == 0) std::memcpy(chunk, data, isz);
  then(chunk);
}

void B2ndWriter::write_chunk(int64_t id, const void* data, ThreadState& ts) {
  to_block_major(id, data, ts, [&](const void* bm) { write_block_major(id, bm, ts); });
}

std::vector<uint8_t> B2ndWriter::compress_chunk(int64_t id, const void* data, ThreadState& ts) const {
  std::vector<uint8_t> out;
  to_block_major(id, data, ts, [&](const void* bm) {
    compress_block_major(id, bm, ts, [&](const uint8_t* c, int n) { out.assign(c, c + n); });
  });
  return out;
}

void B2ndWriter::compress_block_major(int64_t id, const void* data, ThreadState& ts,
                                      const std::function<void(const uint8_t*, int)>& use) const {
  ScratchScope scope(ts.scratch);
  const int32_t nbytes = static_cast<int32_t>(prod(extchunk_) * itemsize(dtype_));
  const int32_t cap = nbytes + BLOSC2_MAX_OVERHEAD;
  auto* dest = static_cast<uint8_t*>(scope.alloc(cap));
  int csize = blosc2_compress_ctx(ts.cctx_for(this, &cparams_, ctx_uid_), data, nbytes, dest, cap);
  check_blosc2(csize, "compressing output chunk " + std::to_string(id));
  use(dest, csize);
}

void B2ndWriter::write_block_major(int64_t id, const void* data, ThreadState& ts) {
  compress_block_major(id, data, ts, [&](const uint8_t* dest, int csize) {
    std::lock_guard<std::mutex> g(mu_);
    int64_t rc = blosc2_schunk_update_chunk(arr_->sc, id, const_cast<uint8_t*>(dest), true);
    if (rc < 0)
      throw IOError("cannot write chunk " + std::to_string(id) + " of '" +
                    (final_path_.empty() ? std::string("<memory>") : final_path_) +
                    "': " + print_error(static_cast<int>(rc)));
    bytes_written_ += csize;
  });
}

void B2ndWriter::write_compressed(int64_t id, const void* data, size_t nbytes) {
  const int64_t expected = prod(extchunk_) * static_cast<int64_t>(itemsize(dtype_));
  int32_t nb = 0, cb = 0, bs = 0;
  if (id < 0 || id >= grid_.nchunks())
    throw IndexError("chunk " + std::to_string(id) + " is not one of the output's " + std::to_string(grid_.nchunks()));
  if (nbytes < BLOSC_MIN_HEADER_LENGTH || blosc2_cbuffer_sizes(data, &nb, &cb, &bs) < 0 || nb != expected ||
      static_cast<size_t>(cb) != nbytes)
    throw ValueError("chunk " + std::to_string(id) + ": " + std::to_string(nbytes) +
                     " bytes that are not a compressed chunk of this output (" + std::to_string(expected) +
                     " bytes uncompressed)");
  std::lock_guard<std::mutex> g(mu_);
  const int64_t rc = blosc2_schunk_update_chunk(arr_->sc, id, static_cast<uint8_t*>(const_cast<void*>(data)), true);
  if (rc < 0)
    throw IOError("cannot write chunk " + std::to_string(id) + " of '" +
                  (final_path_.empty() ? std::string("<memory>") : final_path_) +
                  "': " + print_error(static_cast<int>(rc)));
  bytes_written_ += cb;
}

std::vector<uint8_t> B2ndWriter::compressed_chunk(int64_t id) const {
  uint8_t* chunk = nullptr;
  bool needs_free = false;
  const int cb = blosc2_schunk_get_chunk(arr_->sc, id, &chunk, &needs_free);
  check_blosc2(cb, "reading output chunk " + std::to_string(id));
  std::vector<uint8_t> out(chunk, chunk + cb);
  if (needs_free) std::free(chunk);
  return out;
}

std::shared_ptr<B2ndSource> B2ndWriter::finish_source(const std::string& prefix) {
  if (!temp_) {
    auto* a = arr_;
    arr_ = nullptr;
    static std::atomic<int> counter{0};
    return B2ndSource::adopt(a, prefix + "#" + std::to_string(counter++));
  }
  b2nd_free(arr_);
  arr_ = nullptr;
  // Opened from the temporary, through descriptors that follow it into place: another
  // writer replacing the path later does not change what this result reads.
  auto result = B2ndSource::open(temp_->array_path(), final_path_);
  temp_->commit();
  temp_.reset();
  return result;
}

NodePtr B2ndWriter::finish() { return finish_source("result"); }

}  // namespace b2lazy
