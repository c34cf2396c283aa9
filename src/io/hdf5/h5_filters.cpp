#include "io/hdf5/h5_filters.hpp"

#include <b2nd.h>
#include <blosc2.h>
#include <lz4.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "b2lazy/error.hpp"
#include "core/strided_copy.hpp"
#include "io/zarr/codecs.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy::h5 {

namespace {

constexpr int kDeflate = 1, kShuffle = 2, kFletcher32 = 3, kLz4 = 32004, kBlosc = 32001, kZstd = 32015, kBlosc2 = 32026;

[[noreturn]] void bad(const std::string& where, const std::string& filter, const std::string& what) {
  throw IOError("'" + where + "': HDF5 filter " + filter + ": " + what);
}

uint64_t big_endian(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}

// A step's output, whose size is known before it is decoded (`want`): straight into the
// caller's buffer when it is the last step, else into `holder`. A step claiming another
// size is damaged, refused before anything is allocated.
struct Target {
  uint8_t* dst;  // nullptr: not the last step
  size_t want;
  std::vector<uint8_t>& holder;
  uint8_t* get(size_t n, const std::string& where, const char* filter) {
    if (n != want) bad(where, filter, "decodes to " + std::to_string(n) + " bytes, expected " + std::to_string(want));
    if (!dst) {
      holder.resize(n);
      return holder.data();
    }
    return dst;
  }
};

bool is_compressor(int id) { return id == kDeflate || id == kLz4 || id == kBlosc || id == kZstd || id == kBlosc2; }

// Fletcher's checksum over 16-bit big-endian words (an odd last byte as the high byte
// of one), as HDF5's fletcher32 filter computes it.
uint32_t fletcher32(const uint8_t* p, size_t n) {
  uint32_t a = 0, b = 0;
  for (size_t words = n / 2; words > 0;) {
    const size_t run = std::min<size_t>(words, 360);  // (no overflow before folding)
    words -= run;
    for (size_t k = 0; k < run; ++k, p += 2) {
      a += static_cast<uint32_t>(p[0]) << 8 | p[1];
      b += a;
    }
    a = (a & 0xffff) + (a >> 16);
    b = (b & 0xffff) + (b >> 16);
  }
  if (n % 2) {
    a += static_cast<uint32_t>(*p) << 8;
    b += a;
    a = (a & 0xffff) + (a >> 16);
    b = (b & 0xffff) + (b >> 16);
  }
  a = (a & 0xffff) + (a >> 16);
  b = (b & 0xffff) + (b >> 16);
  return b << 16 | a;
}

// HDF5's byte shuffle: byte b of item i at b * nitems + i; the bytes past whole items stay.
void unshuffle(const uint8_t* src, size_t n, size_t isz, uint8_t* out) {
  const size_t items = isz ? n / isz : 0;
  if (isz <= 1 || items <= 1) {
    std::memcpy(out, src, n);
    return;
  }
  for (size_t b = 0; b < isz; ++b) {
    const uint8_t* s = src + b * items;
    for (size_t i = 0; i < items; ++i) out[i * isz + b] = s[i];
  }
  std::memcpy(out + items * isz, src + items * isz, n - items * isz);
}

// The LZ4 filter's layout: total size (8 bytes), block size (4), then per block its
// compressed size (4) and data, all big-endian; a block stored as is when no smaller.
void un_lz4(const uint8_t* src, size_t n, Target t, const std::string& where) {
  if (n < 12) bad(where, "lz4", "shorter than its header");
  const uint64_t total = big_endian(src, 8), block = big_endian(src + 8, 4);
  if (total > (uint64_t(1) << 40) || block == 0 || block > INT32_MAX) bad(where, "lz4", "damaged header");
  uint8_t* out = t.get(static_cast<size_t>(total), where, "lz4");
  size_t pos = 12, done = 0;
  while (done < total) {
    if (pos + 4 > n) bad(where, "lz4", "truncated");
    const uint64_t c = big_endian(src + pos, 4);
    pos += 4;
    const size_t want = static_cast<size_t>(std::min<uint64_t>(block, total - done));
    if (c > n - pos) bad(where, "lz4", "truncated");
    if (c == want) {
      std::memcpy(out + done, src + pos, want);
    } else {
      const int r = LZ4_decompress_safe(reinterpret_cast<const char*>(src + pos), reinterpret_cast<char*>(out + done),
                                        static_cast<int>(c), static_cast<int>(want));
      if (r < 0 || static_cast<size_t>(r) != want) bad(where, "lz4", "cannot decompress (damaged)");
    }
    pos += c;
    done += want;
  }
}

// A b2nd array of one chunk (what the Blosc2 filter writes): each block decoded by this
// worker's context into a block-sized scratch (it stays in cache) and copied to its place
// in C order; blocks wholly in the padding are not decoded. (Decoding the whole chunk
// first sent it through memory twice: perf showed the copy at 22 % of sum(a, axis=0);
// C-Blosc2's b2nd_to_cbuffer also allocates a fresh chunk-sized buffer per call.) False
// when the array is not one chunk or a block does not decode.
bool one_chunk_to_c_order(b2nd_array_t* arr, uint8_t* out, ThreadState& ts) {
  const size_t nd = static_cast<size_t>(arr->ndim), isz = static_cast<size_t>(arr->sc->typesize);
  if (arr->sc->nchunks != 1 || nd == 0) return false;
  Shape shape(nd), block(nd), ext(nd);
  for (size_t d = 0; d < nd; ++d) {
    if (arr->chunkshape[d] != arr->shape[d]) return false;
    shape[d] = arr->shape[d], block[d] = arr->blockshape[d], ext[d] = arr->extchunkshape[d];
    if (block[d] <= 0 || ext[d] % block[d] != 0) return false;
  }
  uint8_t* chunk = nullptr;
  bool needs_free = false;
  const int cbytes = blosc2_schunk_get_chunk(arr->sc, 0, &chunk, &needs_free);
  if (cbytes < 0) return false;
  std::unique_ptr<uint8_t, void (*)(uint8_t*)> own(needs_free ? chunk : nullptr, [](uint8_t* p) { std::free(p); });
  const int64_t block_items = prod(block), block_bytes = block_items * static_cast<int64_t>(isz);
  if (block_bytes > INT32_MAX) return false;
  ScratchScope scope(ts.scratch);
  auto* buf = scope.alloc_n<uint8_t>(static_cast<size_t>(block_bytes));
  static const char key = 0;  // this decoder's own context per worker
  blosc2_context* dctx = ts.dctx_for(&key, nullptr, 1);
  const Shape bstrides = byte_strides(block, isz), ostrides = byte_strides(shape, isz);
  Shape bgrid(nd), k(nd, 0), count(nd);
  for (size_t d = 0; d < nd; ++d) bgrid[d] = ext[d] / block[d];
  for (int64_t b = 0, nb = prod(bgrid); b < nb; ++b) {
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < nd; ++d) {
      const int64_t o = k[d] * block[d];
      count[d] = std::min(block[d], shape[d] - o);
      inside = inside && count[d] > 0;
      off += o * ostrides[d];
    }
    if (inside) {
      if (blosc2_getitem_ctx(dctx, chunk, cbytes, static_cast<int>(b * block_items), static_cast<int>(block_items), buf,
                             static_cast<int32_t>(block_bytes)) != block_bytes)
        return false;
      copy_strided(nd, count.data(), reinterpret_cast<const char*>(buf), bstrides.data(),
                   reinterpret_cast<char*>(out + off), ostrides.data(), isz);
    }
    for (size_t d = nd; d-- > 0;) {  // the next block in C order of the block grid
      if (++k[d] < bgrid[d]) break;
      k[d] = 0;
    }
  }
  return true;
}

// A Blosc2 chunk (extended header: both shuffle bits set) that declares its values
// uninitialised: C-Blosc2 then writes nothing and reports success, which would hand out
// whatever the buffer held. Never written by the HDF5 filters: damage.
bool blosc_uninit(const uint8_t* p, size_t n) {
  return n >= BLOSC_EXTENDED_HEADER_LENGTH &&
         (p[2] & (BLOSC_DOSHUFFLE | BLOSC_DOBITSHUFFLE)) == (BLOSC_DOSHUFFLE | BLOSC_DOBITSHUFFLE) &&
         ((p[BLOSC2_CHUNK_BLOSC2_FLAGS] >> 4) & BLOSC2_SPECIAL_MASK) == BLOSC2_SPECIAL_UNINIT;
}

// Every chunk of a Blosc2 filter's frame: readable and not of uninitialised values.
void check_chunks(blosc2_schunk* sc, const std::string& where) {
  for (int64_t i = 0; i < sc->nchunks; ++i) {
    uint8_t* chunk = nullptr;
    bool needs_free = false;
    const int cbytes = blosc2_schunk_get_chunk(sc, i, &chunk, &needs_free);
    const bool uninit = cbytes > 0 && blosc_uninit(chunk, static_cast<size_t>(cbytes));
    if (needs_free) std::free(chunk);
    if (cbytes <= 0) bad(where, "blosc2", "cannot read chunk " + std::to_string(i) + " of its frame (damaged)");
    if (uninit)
      bad(where, "blosc2", "chunk " + std::to_string(i) + " of its frame declares its values uninitialised (damaged)");
  }
}

// Does the b2nd array's metadata agree with its chunks? Blocks no larger than chunks, the
// padded chunk shape what they make, and every chunk holding that many items: a damaged
// metalayer (blocks wider than the chunk) otherwise decodes to garbage or to zeros.
bool b2nd_consistent(b2nd_array_t* arr) {
  const int64_t isz = arr->sc->typesize;
  int64_t ext_items = 1;
  for (int d = 0; d < arr->ndim; ++d) {
    const int64_t c = arr->chunkshape[d], b = arr->blockshape[d];
    if (c <= 0 || b <= 0 || b > c || arr->extchunkshape[d] != (c + b - 1) / b * b) return false;
    ext_items *= arr->extchunkshape[d];
  }
  for (int64_t i = 0; i < arr->sc->nchunks; ++i) {
    uint8_t* chunk = nullptr;
    bool needs_free = false;
    const int cbytes = blosc2_schunk_get_chunk(arr->sc, i, &chunk, &needs_free);
    int32_t nbytes = -1, cb = 0, blocksize = 0;
    const bool ok =
        cbytes > 0 && blosc2_cbuffer_sizes(chunk, &nbytes, &cb, &blocksize) >= 0 && nbytes == ext_items * isz;
    if (needs_free) std::free(chunk);
    if (!ok) return false;
  }
  return true;
}

// The Blosc2 filter stores each chunk as a Blosc2 frame (of a b2nd array when the filter
// was given the chunk's shape): its items in C order.
void un_blosc2(const uint8_t* src, size_t n, Target t, const std::string& where, ThreadState& ts) {
  // (No copy: `src` outlives the super-chunk.)
  blosc2_schunk* sc = blosc2_schunk_from_buffer(const_cast<uint8_t*>(src), static_cast<int64_t>(n), false);
  if (!sc) bad(where, "blosc2", "not a Blosc2 frame");
  if (blosc2_meta_exists(sc, "b2nd") >= 0) {
    b2nd_array_t* arr = nullptr;
    if (b2nd_from_schunk(sc, &arr) < 0) {
      blosc2_schunk_free(sc);
      bad(where, "blosc2", "its b2nd metalayer cannot be read");
    }
    std::unique_ptr<b2nd_array_t, int (*)(b2nd_array_t*)> hold(arr, b2nd_free);  // (frees the super-chunk too)
    check_chunks(arr->sc, where);
    if (!b2nd_consistent(arr)) bad(where, "blosc2", "its b2nd metalayer disagrees with its chunks (damaged)");
    const int64_t bytes = arr->nitems * arr->sc->typesize;
    uint8_t* out = t.get(static_cast<size_t>(bytes), where, "blosc2");
    if (!one_chunk_to_c_order(arr, out, ts) && b2nd_to_cbuffer(arr, out, bytes) < 0)
      bad(where, "blosc2", "cannot decompress");
    return;
  }
  std::unique_ptr<blosc2_schunk, int (*)(blosc2_schunk*)> hold(sc, blosc2_schunk_free);
  check_chunks(sc, where);
  uint8_t* out = t.get(static_cast<size_t>(sc->nbytes), where, "blosc2");
  int64_t done = 0;
  for (int64_t i = 0; i < sc->nchunks; ++i) {
    const int r = blosc2_schunk_decompress_chunk(sc, i, out + done,
                                                 static_cast<int32_t>(std::min<int64_t>(sc->nbytes - done, INT32_MAX)));
    if (r < 0) bad(where, "blosc2", "cannot decompress chunk " + std::to_string(i));
    done += r;
  }
  if (done != sc->nbytes) bad(where, "blosc2", "holds fewer bytes than it says");
}

}  // namespace

double decode_cost(const std::vector<Filter>& pipeline) {
  if (!decodes(pipeline)) return 3.0;
  for (const Filter& f : pipeline)
    if (f.id == kDeflate) return 3.0;
  return 1.0;
}

bool decodes(const std::vector<Filter>& pipeline) {
  int compressors = 0;
  for (const Filter& f : pipeline) compressors += is_compressor(f.id);
  if (compressors > 1) return false;
  for (const Filter& f : pipeline) switch (f.id) {
      case kDeflate:
      case kShuffle:
      case kFletcher32:
      case kLz4:
      case kBlosc:
      case kZstd:
      case kBlosc2: break;
      default: return false;
    }
  return true;
}

void decode(const std::vector<Filter>& pipeline, unsigned mask, size_t itemsize, const uint8_t* data, size_t n,
            void* dst, size_t dst_n, const std::string& where, ThreadState& ts) {
  size_t last = pipeline.size();  // the step undone last: the first filter applied
  for (size_t i = 0; i < pipeline.size() && last == pipeline.size(); ++i)
    if (!(mask & (1u << i))) last = i;
  if (last == pipeline.size()) {  // stored as is
    if (n != dst_n) bad(where, "(none)", "holds " + std::to_string(n) + " bytes, expected " + std::to_string(dst_n));
    std::memcpy(dst, data, n);
    return;
  }
  // The size of each filter's input when it was applied: the values, 4 bytes more after
  // each checksum (decodes(): no second compressor, whose input size is not known).
  std::vector<size_t> input(pipeline.size(), dst_n);
  for (size_t i = 0, at = dst_n; i < pipeline.size(); ++i) {
    input[i] = at;
    if (!(mask & (1u << i)) && pipeline[i].id == kFletcher32) at += 4;
  }
  std::vector<uint8_t> a, b;  // the intermediate results, in turn
  const uint8_t* cur = data;
  for (size_t i = pipeline.size(); i-- > last;) {
    if (mask & (1u << i)) continue;  // not applied to this chunk
    const Filter& f = pipeline[i];
    std::vector<uint8_t>& holder = cur == a.data() && !a.empty() ? b : a;
    Target t{i == last ? static_cast<uint8_t*>(dst) : nullptr, input[i], holder};
    switch (f.id) {
      case kFletcher32: {
        if (n < 4) bad(where, "fletcher32", "shorter than its checksum");
        n -= 4;
        // Stored little-endian after the data; files of HDF5 before 1.6.3 have the bytes of
        // each half swapped (libhdf5 accepts both).
        const uint32_t stored =
            uint32_t(cur[n]) | uint32_t(cur[n + 1]) << 8 | uint32_t(cur[n + 2]) << 16 | uint32_t(cur[n + 3]) << 24;
        const uint32_t sum = fletcher32(cur, n), swapped = (sum & 0x00ff00ffu) << 8 | (sum >> 8 & 0x00ff00ffu);
        if (stored != sum && stored != swapped) bad(where, "fletcher32", "checksum mismatch (damaged)");
        if (i == last) std::memcpy(t.get(n, where, "fletcher32"), cur, n);
        continue;
      }
      case kShuffle: {
        uint8_t* out = t.get(n, where, "shuffle");
        unshuffle(cur, n, f.cd.empty() ? itemsize : f.cd[0], out);
        break;
      }
      case kLz4: un_lz4(cur, n, t, where); break;
      case kBlosc2: un_blosc2(cur, n, t, where, ts); break;
      case kDeflate:
      case kZstd:
      case kBlosc: {
        if (f.id == kBlosc && blosc_uninit(cur, n)) bad(where, "blosc", "declares its values uninitialised (damaged)");
        using K = zarr::BytesCodec::Kind;
        zarr::BytesCodec c{f.id == kDeflate ? K::Deflate : f.id == kZstd ? K::Zstd : K::Blosc, f.name};
        zarr::undo_bytes_into(c, cur, n, t.get(input[i], where, f.name.c_str()), input[i], where, ts);
        break;
      }
      default: bad(where, f.name.empty() ? std::to_string(f.id) : f.name, "not decoded by b2lazy");
    }
    if (i != last) cur = holder.data(), n = holder.size();
  }
}

}  // namespace b2lazy::h5
