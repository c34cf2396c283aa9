// libFuzzer target for the Zarr codec chain decoder (io/zarr/codecs.hpp). An input is a
// choice and a stored chunk: byte 0 picks the codec chain, byte 1 the chunk's shape and
// data type, the rest is the chunk as a file would hold it. It is decoded through the
// chain, and each codec of it undone alone with a small "most". Only b2lazy::Error may come
// out; a crash, a sanitizer report, a leak, or an allocation past -malloc_limit_mb (what a
// header claiming 2 GiB once asked for) fails the run.
//
//   ./fuzz_zarr_codecs CORPUS_DIR -max_total_time=60 -rss_limit_mb=2048
// Seeds: python tests/fuzz/zarr_seeds.py codecs CORPUS_DIR (chunks zarr-python wrote).
#include <cstdint>
#include <vector>

#include "b2lazy/error.hpp"
#include "io/zarr/codecs.hpp"
#include "runtime/thread_state.hpp"

using namespace b2lazy;
using namespace b2lazy::zarr;

namespace {

using K = BytesCodec::Kind;

BytesCodec codec(K k) {
  static const char* names[] = {"blosc", "zstd", "gzip", "lz4", "crc32c"};
  return BytesCodec{k, names[static_cast<int>(k)]};
}

// The chains (in encoding order, after the bytes codec); tests/fuzz/zarr_seeds.py writes
// seeds for them in this order.
struct Chain {
  std::vector<K> codecs;
  bool transpose = false, big = false;
};
const std::vector<Chain>& chains() {
  static const std::vector<Chain> c = {
      {{}},
      {{K::Blosc}},
      {{K::Zstd}},
      {{K::Deflate}},
      {{K::Lz4}},
      {{K::Zstd, K::Crc32c}},
      {{K::Zstd, K::Blosc}},
      {{K::Blosc, K::Zstd}},
      {{K::Zstd, K::Deflate}},
      {{K::Blosc, K::Zstd, K::Crc32c}},
      {{K::Blosc}, true, false},
      {{K::Zstd}, false, true},
      {{K::Deflate}, true, true},
  };
  return c;
}

struct Geometry {
  Shape shape;
  DType dtype;
};
const std::vector<Geometry>& geometries() {
  static const std::vector<Geometry> g = {
      {{64}, DType::F64},    {{8, 8}, DType::F64}, {{1000}, DType::I32},  {{3, 5, 7}, DType::U16},
      {{16, 16}, DType::U8}, {{}, DType::F64},     {{4, 4}, DType::C128}, {{0}, DType::F32},
  };
  return g;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const Chain& c = chains()[data[0] % chains().size()];
  const Geometry& g = geometries()[data[1] % geometries().size()];
  Pipeline p;
  for (K k : c.codecs) p.bytes_codecs.push_back(codec(k));
  p.big_endian = c.big;
  if (c.transpose)
    for (size_t k = 0; k < g.shape.size(); ++k) p.order.push_back(static_cast<int>(g.shape.size() - 1 - k));
  const uint8_t* chunk = data + 2;
  const size_t n = size - 2;
  std::vector<uint8_t> out(static_cast<size_t>(prod(g.shape)) * itemsize(g.dtype));
  const uint8_t fill[kMaxItemsize] = {};
  ThreadState ts;
  try {
    decode(p, chunk, n, g.shape, g.dtype, out.data(), "fuzz.zarr/c/0", ts, fill);
  } catch (const Error&) {}
  for (const BytesCodec& b : p.bytes_codecs) {
    std::vector<uint8_t> r;
    try {
      undo_bytes(b, chunk, n, r, "fuzz.zarr/c/0", ts, 1 << 16);
    } catch (const Error&) {}
  }
  return 0;
}
