#include "io/zarr/codecs.hpp"

#include <blosc2.h>
#include <isa-l/crc.h>
#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "b2lazy/error.hpp"
#include "core/saturating.hpp"
#include "core/strided_copy.hpp"
#include "io/zarr/blosc1.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy::zarr {

namespace {

// A run of bytes: in the stored data, in a holder, or in the output.
struct Span {
  const uint8_t* p;
  size_t n;
};

uint32_t get32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// CRC-32C (Castagnoli) as Zarr's crc32c codec stores it (ISA-L's iSCSI CRC, inverted in and out).
uint32_t crc32c(const uint8_t* p, size_t n) {
  uint32_t c = 0xffffffffu;
  while (n > 0) {  // (ISA-L takes an int length)
    const size_t part = std::min<size_t>(n, size_t(1) << 30);
    c = crc32_iscsi(const_cast<uint8_t*>(p), static_cast<int>(part), c);
    p += part;
    n -= part;
  }
  return c ^ 0xffffffffu;
}

struct ZstdD {
  ZSTD_DCtx* c = ZSTD_createDCtx();
  ~ZstdD() { ZSTD_freeDCtx(c); }
};
struct ZstdC {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ~ZstdC() { ZSTD_freeCCtx(c); }
};

[[noreturn]] void bad(const std::string& where, const std::string& codec, const std::string& what) {
  throw IOError("'" + where + "': " + codec + ": " + what);
}

std::string bytes_str(size_t n) { return std::to_string(n) + " bytes"; }

// Where one codec's result goes: exactly `n` bytes at `fixed`, or (no `fixed`) at most `n`
// bytes into `holder`. The most is what the next codec to undo can take (max_encoded), so
// a header that claims more is refused before anything of its size is allocated.
struct Dest {
  uint8_t* fixed;
  size_t n;
  std::vector<uint8_t>& holder;
};

// A codec's result of a size it announces (a header, a frame's content size).
uint8_t* claimed(const BytesCodec& c, size_t size, Dest& d, const std::string& where) {
  if (d.fixed) {
    if (size != d.n) bad(where, c.name, "holds " + bytes_str(size) + ", expected " + bytes_str(d.n));
    return d.fixed;
  }
  if (size > d.n)
    bad(where, c.name,
        "claims " + bytes_str(size) + ", more than the " + bytes_str(d.n) + " this chunk can hold (a damaged chunk)");
  d.holder.resize(size);
  return d.holder.data();
}

// A result of unknown size, decoded in steps into a buffer that grows up to the most the
// destination takes; one byte more than that is a damaged chunk.
struct Growing {
  Dest& d;
  uint8_t* p;
  size_t cap;
  Growing(Dest& dest, size_t guess) : d(dest) {
    if (d.fixed) {
      p = d.fixed, cap = d.n;
    } else {
      d.holder.resize(std::min(d.n, std::max<size_t>(guess, 1 << 16)));
      p = d.holder.data(), cap = d.holder.size();
    }
  }
  bool grow() {  // false at the most
    if (d.fixed || cap >= d.n) return false;
    d.holder.resize(std::min(d.n, cap * 2));
    p = d.holder.data(), cap = d.holder.size();
    return true;
  }
  Span done(size_t n, const BytesCodec& c, const std::string& where) {
    if (d.fixed && n != d.n) bad(where, c.name, "holds " + bytes_str(n) + ", expected " + bytes_str(d.n));
    if (!d.fixed) d.holder.resize(n);
    return {p, n};
  }
  [[noreturn]] void too_much(const BytesCodec& c, const std::string& where) const {
    bad(where, c.name,
        "holds more than the " + bytes_str(d.n) + (d.fixed ? " expected" : " this chunk can hold") +
            " (a damaged chunk)");
  }
};

Span undo_zstd(const BytesCodec& c, Span in, Dest& d, const std::string& where) {
  thread_local ZstdD z;
  const unsigned long long size = ZSTD_getFrameContentSize(in.p, in.n);
  if (size == ZSTD_CONTENTSIZE_ERROR) bad(where, c.name, "not a zstd frame");
  if (size != ZSTD_CONTENTSIZE_UNKNOWN && ZSTD_findFrameCompressedSize(in.p, in.n) == in.n) {  // one frame, sized
    if (!d.fixed && size > d.n)  // (before a cast to size_t)
      bad(where, c.name,
          "claims " + std::to_string(size) + " bytes, more than the " + bytes_str(d.n) +
              " this chunk can hold (a damaged chunk)");
    if (d.fixed && size != d.n)
      bad(where, c.name, "holds " + std::to_string(size) + " bytes, expected " + bytes_str(d.n));
    uint8_t* dst = claimed(c, static_cast<size_t>(size), d, where);
    const size_t r = ZSTD_decompressDCtx(z.c, dst, static_cast<size_t>(size), in.p, in.n);
    if (ZSTD_isError(r) || r != size)
      bad(where, c.name, std::string("cannot decompress (") + (ZSTD_isError(r) ? ZSTD_getErrorName(r) : "short") + ")");
    return {dst, r};
  }
  // No size in the frame, or several frames: streamed, up to the most.
  Growing g(d, in.n * 4 + 1024);
  ZSTD_DCtx_reset(z.c, ZSTD_reset_session_only);
  ZSTD_inBuffer zin{in.p, in.n, 0};
  ZSTD_outBuffer zout{g.p, g.cap, 0};
  uint8_t extra;
  bool at_most = false;  // full: only a byte more is asked for, to tell the end from more data
  while (true) {
    ZSTD_outBuffer probe{&extra, 1, 0};
    const size_t r = ZSTD_decompressStream(z.c, at_most ? &probe : &zout, &zin);
    if (ZSTD_isError(r)) bad(where, c.name, std::string("cannot decompress (") + ZSTD_getErrorName(r) + ")");
    if (probe.pos) g.too_much(c, where);
    if (r == 0 && zin.pos == zin.size) break;
    if (!at_most && zout.pos == zout.size) {
      if (g.grow()) zout.dst = g.p, zout.size = g.cap;
      else at_most = true;
      continue;
    }
    if (zin.pos == zin.size) bad(where, c.name, "truncated");
  }
  return g.done(zout.pos, c, where);
}

Span undo_deflate(const BytesCodec& c, Span in, Dest& d, const std::string& where) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) bad(where, c.name, "cannot start zlib");  // zlib or gzip header
  Growing g(d, in.n * 4 + 1024);
  z.next_in = const_cast<Bytef*>(in.p);
  z.avail_in = static_cast<uInt>(std::min<size_t>(in.n, UINT32_MAX));
  size_t done = 0;
  int rc = Z_OK;
  bool longer = false;
  while (true) {
    uint8_t extra;  // full at the most: one byte more tells the end of the stream from more data
    const bool probe = done == g.cap;
    z.next_out = probe ? &extra : g.p + done;
    z.avail_out = probe ? 1 : static_cast<uInt>(std::min<size_t>(g.cap - done, UINT32_MAX));
    rc = inflate(&z, Z_NO_FLUSH);
    if (probe) {
      longer = z.avail_out == 0;
      break;
    }
    done = static_cast<size_t>(z.next_out - g.p);
    if (rc != Z_OK) break;  // the end, an error, or no progress (Z_BUF_ERROR: input ended)
    if (done == g.cap) g.grow();
  }
  const std::string msg = z.msg ? z.msg : rc == Z_BUF_ERROR ? "truncated" : "error";
  inflateEnd(&z);
  if (longer) g.too_much(c, where);
  if (rc != Z_STREAM_END) bad(where, c.name, "cannot decompress (" + msg + ")");
  return g.done(done, c, where);
}

// Undoes one bytes -> bytes codec into `d`.
Span undo(const BytesCodec& c, Span in, Dest d, const std::string& where, ThreadState& ts) {
  switch (c.kind) {
    case BytesCodec::Kind::Crc32c: {
      if (in.n < 4) bad(where, c.name, "shorter than its 4-byte checksum");
      if (crc32c(in.p, in.n - 4) != get32(in.p + in.n - 4))
        bad(where, c.name, "checksum mismatch (the data is damaged)");
      if (!d.fixed) {
        if (in.n - 4 > d.n)
          bad(where, c.name,
              "holds " + bytes_str(in.n - 4) + ", more than the " + bytes_str(d.n) + " this chunk can hold");
        return {in.p, in.n - 4};  // (a part of the input: no copy)
      }
      std::memcpy(claimed(c, in.n - 4, d, where), in.p, in.n - 4);
      return {d.fixed, in.n - 4};
    }
    case BytesCodec::Kind::Blosc: {
      int32_t nbytes = 0, cbytes = 0, blocksize = 0;
      if (in.n < BLOSC_MIN_HEADER_LENGTH || in.n > size_t(INT32_MAX) ||
          blosc2_cbuffer_sizes(in.p, &nbytes, &cbytes, &blocksize) < 0 || nbytes < 0)
        bad(where, c.name, "not a Blosc buffer");
      if (static_cast<size_t>(cbytes) > in.n)
        bad(where, c.name, "truncated: " + bytes_str(in.n) + " of " + bytes_str(static_cast<size_t>(cbytes)));
      uint8_t* dst = claimed(c, static_cast<size_t>(nbytes), d, where);
      // Our own context per worker (the key is any address unique to this codec kind).
      static const char key = 0;
      const int rc =
          blosc2_decompress_ctx(ts.dctx_for(&key, nullptr, 1), in.p, static_cast<int32_t>(in.n), dst, nbytes);
      if (rc != nbytes)
        bad(where, c.name, "cannot decompress (" + std::string(rc < 0 ? print_error(rc) : "short") + ")");
      return {dst, static_cast<size_t>(nbytes)};
    }
    case BytesCodec::Kind::Zstd: return undo_zstd(c, in, d, where);
    case BytesCodec::Kind::Deflate: return undo_deflate(c, in, d, where);
    case BytesCodec::Kind::Lz4: {  // numcodecs' LZ4: a little-endian uint32 size, then an LZ4 block
      if (in.n < 4) bad(where, c.name, "shorter than its 4-byte header");
      const uint32_t size = get32(in.p);
      if (size > static_cast<uint32_t>(INT32_MAX)) bad(where, c.name, "claims " + std::to_string(size) + " bytes");
      uint8_t* dst = claimed(c, size, d, where);
      const int r =
          LZ4_decompress_safe(reinterpret_cast<const char*>(in.p + 4), reinterpret_cast<char*>(dst),
                              static_cast<int>(std::min<size_t>(in.n - 4, INT32_MAX)), static_cast<int>(size));
      if (r < 0 || static_cast<uint32_t>(r) != size) bad(where, c.name, "cannot decompress (damaged or truncated)");
      return {dst, size};
    }
  }
  return in;
}

// The encoded (transposed) shape of a chunk of `shape`.
Shape encoded_shape(const Pipeline& p, const Shape& shape) {
  if (p.order.empty()) return shape;
  Shape t(shape.size());
  for (size_t k = 0; k < shape.size(); ++k) t[k] = shape[p.order[k]];
  return t;
}

void set_fill(void* dst, int64_t n, const void* fill, size_t isz) {
  auto* d = static_cast<uint8_t*>(dst);
  bool zero = true;
  for (size_t i = 0; i < isz; ++i) zero = zero && static_cast<const uint8_t*>(fill)[i] == 0;
  if (zero) {
    std::memset(d, 0, static_cast<size_t>(n) * isz);
    return;
  }
  for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * isz, fill, isz);
}

// Copies between a shard (dense, `outer`) and inner chunk `id` of `inner` (dense): the
// part of the inner chunk inside the shard.
void shard_copy(bool to_inner, uint8_t* shard, const Shape& outer, uint8_t* chunk, const Shape& inner, int64_t id,
                size_t isz) {
  const size_t nd = outer.size();
  const ChunkGrid g(outer, inner);
  const Box b = g.chunk_box(id);
  const Shape count = b.shape();
  const Shape os = byte_strides(outer, isz), is = byte_strides(inner, isz);
  uint8_t* s = shard;
  for (size_t d = 0; d < nd; ++d) s += b.start[d] * os[d];
  if (to_inner)
    copy_strided(nd, count.data(), reinterpret_cast<const char*>(s), os.data(), reinterpret_cast<char*>(chunk),
                 is.data(), isz);
  else
    copy_strided(nd, count.data(), reinterpret_cast<const char*>(chunk), is.data(), reinterpret_cast<char*>(s),
                 os.data(), isz);
}

Shape inner_grid(const Sharding& s, const Shape& shard) {
  Shape g(shard.size());
  for (size_t d = 0; d < shard.size(); ++d) g[d] = (shard[d] + s.inner[d] - 1) / s.inner[d];
  return g;
}

}  // namespace

size_t max_shard_bytes(const Sharding& s, const Shape& shard, DType t) {
  const int64_t n = prod(inner_grid(s, shard));
  return static_cast<size_t>(
      sat_add(s.index_bytes(n), sat_mul(n, static_cast<int64_t>(max_stored(s.codecs, s.inner, t)))));
}

namespace {

void decode_shard(const Sharding& s, Span in, const Shape& shape, DType t, uint8_t* out, const std::string& where,
                  ThreadState& ts, const void* fill) {
  const size_t isz = itemsize(t);
  const Shape grid = inner_grid(s, shape);
  const int64_t n = prod(grid);
  const int64_t ib = s.index_bytes(n);
  if (static_cast<int64_t>(in.n) < ib)
    bad(where, "sharding_indexed",
        "holds " + bytes_str(in.n) + ", less than its index of " + bytes_str(static_cast<size_t>(ib)));
  const uint8_t* idx = s.index_at_end ? in.p + in.n - ib : in.p;
  const std::vector<uint64_t> index = decode_index(s, idx, static_cast<size_t>(ib), n, where, ts);
  std::vector<uint8_t> chunk(static_cast<size_t>(prod(s.inner)) * isz);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t off = index[2 * i], len = index[2 * i + 1];
    if (off == kMissing && len == kMissing) {
      set_fill(chunk.data(), prod(s.inner), fill, isz);
    } else {
      if (off > in.n || len > in.n - off)
        bad(where, "sharding_indexed",
            "inner chunk " + std::to_string(i) + " at " + std::to_string(off) + " (+" + std::to_string(len) +
                ") lies outside the shard's " + bytes_str(in.n));
      decode(s.codecs, in.p + off, static_cast<size_t>(len), s.inner, t, chunk.data(),
             where + " (inner chunk " + std::to_string(i) + ")", ts, fill);
    }
    shard_copy(false, out, shape, chunk.data(), s.inner, i, isz);
  }
}

}  // namespace

void undo_bytes(const BytesCodec& c, const uint8_t* data, size_t n, std::vector<uint8_t>& out, const std::string& where,
                ThreadState& ts, size_t most) {
  const Span r = undo(c, {data, n}, Dest{nullptr, most, out}, where, ts);
  if (r.p != out.data()) out.assign(r.p, r.p + r.n);  // (a checksum codec returns a part of `data`)
  else out.resize(r.n);
}

void undo_bytes_into(const BytesCodec& c, const uint8_t* data, size_t n, void* dst, size_t dst_n,
                     const std::string& where, ThreadState& ts) {
  std::vector<uint8_t> holder;
  undo(c, {data, n}, Dest{static_cast<uint8_t*>(dst), dst_n, holder}, where, ts);
}

size_t max_encoded(const BytesCodec& c, size_t n) {
  const int64_t m = static_cast<int64_t>(std::min<size_t>(n, INT64_MAX));
  if (c.kind == BytesCodec::Kind::Crc32c) return static_cast<size_t>(sat_add(m, 4));
  // Compressors store what does not compress as it is, plus their headers: Blosc 16 or 32
  // bytes, zstd 3 per 128 KiB block and up to 22 for the frame, Deflate 5 per 64 KiB block
  // and 18 for a gzip wrapper, LZ4 n/255 + 16 and numcodecs' 4-byte size.
  return static_cast<size_t>(sat_add(m, m / 16 + 256));
}

size_t max_stored(const Pipeline& p, const Shape& shape, DType t) {
  const int64_t isz = static_cast<int64_t>(itemsize(t));
  size_t most = p.sharding ? max_shard_bytes(*p.sharding, encoded_shape(p, shape), t)
                           : static_cast<size_t>(sat_mul(prod(shape), isz));
  for (const BytesCodec& b : p.bytes_codecs) most = max_encoded(b, most);
  return most;
}

int64_t parts_of(DType t) { return is_complex(t) ? 2 : 1; }

void byteswap(void* data, int64_t n, size_t isz) {
  auto* p = static_cast<uint8_t*>(data);
  for (int64_t i = 0; i < n; ++i, p += isz) std::reverse(p, p + isz);
}

int64_t Sharding::index_bytes(int64_t n) const {
  return 16 * n + 4 * static_cast<int64_t>(index_codecs.bytes_codecs.size());  // (only crc32c: checked at parse)
}

std::string Pipeline::describe() const {
  std::string s;
  if (!order.empty()) s += "transpose+";
  if (sharding) s += "sharding(" + shape_str(sharding->inner) + ": " + sharding->codecs.describe() + ")";
  else s += big_endian ? "bytes(big)" : "bytes";
  for (const BytesCodec& b : bytes_codecs) s += "+" + b.name + (b.cname.empty() ? "" : "(" + b.cname + ")");
  return s;
}

std::vector<uint64_t> decode_index(const Sharding& s, const uint8_t* data, size_t n, int64_t ninner,
                                   const std::string& where, ThreadState& ts) {
  std::vector<uint64_t> index(static_cast<size_t>(2 * ninner));
  static const uint64_t none = 0;
  decode(s.index_codecs, data, n, Shape{ninner, 2}, DType::U64, index.data(), where + " (shard index)", ts, &none);
  return index;
}

void decode(const Pipeline& p, const uint8_t* data, size_t n, const Shape& shape, DType t, void* out,
            const std::string& where, ThreadState& ts, const void* fill) {
  const size_t isz = itemsize(t);
  const size_t nbytes = static_cast<size_t>(prod(shape)) * isz;
  const bool direct = !p.sharding && p.order.empty();  // the bytes codec's input is the chunk itself
  // The most each codec's result may hold: the chunk's bytes exactly for the one undone last
  // (at most a shard's when sharded), then what encoding that can grow to, outwards.
  std::vector<size_t> most(p.bytes_codecs.size());
  size_t m = p.sharding ? max_shard_bytes(*p.sharding, encoded_shape(p, shape), t) : nbytes;
  for (size_t i = 0; i < most.size(); ++i) {
    most[i] = m;
    m = max_encoded(p.bytes_codecs[i], m);
  }
  std::vector<uint8_t> h1, h2, arr;
  Span cur{data, n};
  for (size_t i = p.bytes_codecs.size(); i-- > 0;) {
    const bool last = i == 0 && !p.sharding;  // its output is the array's bytes: size known
    std::vector<uint8_t>& holder = (i % 2) ? h1 : h2;
    cur = undo(p.bytes_codecs[i], cur, Dest{last && direct ? static_cast<uint8_t*>(out) : nullptr, most[i], holder},
               where, ts);
    if (last && !direct && cur.n != nbytes)
      bad(where, p.bytes_codecs[i].name, "holds " + bytes_str(cur.n) + ", expected " + bytes_str(nbytes));
  }
  const Shape enc = encoded_shape(p, shape);
  uint8_t* dst = static_cast<uint8_t*>(out);
  if (!p.order.empty()) {
    arr.resize(nbytes);
    dst = arr.data();
  }
  if (p.sharding) {
    decode_shard(*p.sharding, cur, enc, t, dst, where, ts, fill);
  } else {
    if (cur.n != nbytes)
      throw IOError("'" + where + "': holds " + bytes_str(cur.n) + ", expected " + bytes_str(nbytes) + " (chunk " +
                    shape_str(shape) + " of " + dtype_name(t) + ")");
    if (nbytes && cur.p != dst) std::memcpy(dst, cur.p, nbytes);
    if (p.big_endian && isz > 1) byteswap(dst, prod(shape) * parts_of(t), isz / parts_of(t));
  }
  if (!p.order.empty()) {  // chunk axis order[k] is encoded axis k
    const Shape es = byte_strides(enc, isz), os = byte_strides(shape, isz);
    Shape src(shape.size());
    for (size_t k = 0; k < shape.size(); ++k) src[p.order[k]] = es[k];
    copy_strided(shape.size(), shape.data(), reinterpret_cast<const char*>(arr.data()), src.data(),
                 static_cast<char*>(out), os.data(), isz);
  }
}

void encode(const Pipeline& p, const void* chunk, const Shape& shape, DType t, std::vector<uint8_t>& out,
            const void* fill) {
  const size_t isz = itemsize(t);
  const size_t nbytes = static_cast<size_t>(prod(shape)) * isz;
  const uint8_t* src = static_cast<const uint8_t*>(chunk);
  std::vector<uint8_t> arr, cur;
  const Shape enc = encoded_shape(p, shape);
  if (!p.order.empty()) {
    arr.resize(nbytes);
    const Shape es = byte_strides(enc, isz), os = byte_strides(shape, isz);
    Shape from(shape.size());
    for (size_t k = 0; k < shape.size(); ++k) from[k] = os[p.order[k]];
    copy_strided(shape.size(), enc.data(), reinterpret_cast<const char*>(src), from.data(),
                 reinterpret_cast<char*>(arr.data()), es.data(), isz);
    src = arr.data();
  }
  if (p.sharding) {
    const Sharding& s = *p.sharding;
    const Shape grid = inner_grid(s, enc);
    const int64_t n = prod(grid);
    const int64_t ib = s.index_bytes(n);
    std::vector<uint64_t> index(static_cast<size_t>(2 * n), kMissing);
    std::vector<uint8_t> inner(static_cast<size_t>(prod(s.inner)) * isz), enc_index;
    if (!s.index_at_end) cur.resize(static_cast<size_t>(ib));
    for (int64_t i = 0; i < n; ++i) {
      set_fill(inner.data(), prod(s.inner), fill, isz);
      shard_copy(true, const_cast<uint8_t*>(src), enc, inner.data(), s.inner, i, isz);
      bool all_fill = true;  // left out, as zarr-python does: it reads as the fill value
      for (size_t k = 0; k < inner.size() && all_fill; k += isz) all_fill = std::memcmp(&inner[k], fill, isz) == 0;
      if (all_fill) continue;
      const size_t at = cur.size();
      encode(s.codecs, inner.data(), s.inner, t, cur, fill);
      index[2 * i] = at;
      index[2 * i + 1] = cur.size() - at;
    }
    static const uint64_t none = 0;
    encode(s.index_codecs, index.data(), Shape{n, 2}, DType::U64, enc_index, &none);
    if (s.index_at_end) cur.insert(cur.end(), enc_index.begin(), enc_index.end());
    else std::memcpy(cur.data(), enc_index.data(), enc_index.size());
  } else if (p.big_endian && isz > 1) {
    cur.assign(src, src + nbytes);
    byteswap(cur.data(), prod(shape) * parts_of(t), isz / parts_of(t));
  }
  // The bytes so far: the chunk itself until a step makes its own (no copy of a chunk
  // that goes straight to its compressor); the last codec appends to `out` directly.
  const uint8_t* data = p.sharding || (p.big_endian && isz > 1) ? cur.data() : src;
  size_t n = p.sharding || (p.big_endian && isz > 1) ? cur.size() : nbytes;
  std::vector<uint8_t> next;
  for (size_t i = 0; i < p.bytes_codecs.size(); ++i) {
    const BytesCodec& b = p.bytes_codecs[i];
    const bool last = i + 1 == p.bytes_codecs.size();
    std::vector<uint8_t>& to = last ? out : next;
    const size_t base = last ? out.size() : 0;
    if (!last) next.clear();
    switch (b.kind) {
      case BytesCodec::Kind::Blosc: blosc1_compress(data, n, isz, b.cname, b.level, b.shuffle, to); break;
      case BytesCodec::Kind::Zstd: {
        thread_local ZstdC c;
        to.resize(base + ZSTD_compressBound(n));
        const size_t r = ZSTD_compressCCtx(c.c, to.data() + base, to.size() - base, data, n, b.level);
        if (ZSTD_isError(r)) throw IOError(std::string("zstd: ") + ZSTD_getErrorName(r));
        to.resize(base + r);
        break;
      }
      case BytesCodec::Kind::Crc32c: {
        const uint32_t c = crc32c(data, n);
        to.insert(to.end(), data, data + n);
        for (int k = 0; k < 4; ++k) to.push_back(static_cast<uint8_t>(c >> (8 * k)));
        break;
      }
      case BytesCodec::Kind::Deflate:
      case BytesCodec::Kind::Lz4: throw Error("internal: b2lazy does not write codec '" + b.name + "'");
    }
    if (last) return;
    cur.swap(next);  // (data may point into cur: swapped, not freed, until the next step)
    data = cur.data();
    n = cur.size();
  }
  out.insert(out.end(), data, data + n);  // no bytes codec
}

}  // namespace b2lazy::zarr
