// libFuzzer target for Zarr v3 shards (sharding_indexed, io/zarr/codecs.hpp): byte 0 picks
// the shard's layout (inner codecs, index at the start or the end, codecs after the
// sharding), byte 1 its shape; the rest is the shard file. It is decoded whole, and its
// index alone. Only b2lazy::Error may come out; a crash, a sanitizer report, a leak or an
// allocation past -malloc_limit_mb fails the run.
//
//   ./fuzz_zarr_shard CORPUS_DIR -max_total_time=60 -rss_limit_mb=2048
// Seeds: python tests/fuzz/zarr_seeds.py shards CORPUS_DIR (shards zarr-python wrote).
#include <cstdint>
#include <memory>
#include <vector>

#include "b2lazy/error.hpp"
#include "io/zarr/codecs.hpp"
#include "runtime/thread_state.hpp"

using namespace b2lazy;
using namespace b2lazy::zarr;

namespace {

using K = BytesCodec::Kind;

// Layouts (tests/fuzz/zarr_seeds.py writes seeds for them in this order).
struct Layout {
  std::vector<K> inner;
  bool at_end;
  std::vector<K> outer;
};
const std::vector<Layout>& layouts() {
  static const std::vector<Layout> l = {
      {{}, true, {}},
      {{K::Zstd}, true, {}},
      {{K::Blosc}, false, {}},
      {{K::Zstd, K::Blosc}, true, {}},
      {{K::Crc32c}, true, {}},
      {{}, true, {K::Zstd}},
      {{K::Blosc}, false, {K::Deflate}},
  };
  return l;
}

BytesCodec codec(K k) {
  static const char* names[] = {"blosc", "zstd", "gzip", "lz4", "crc32c"};
  return BytesCodec{k, names[static_cast<int>(k)]};
}

struct Geometry {
  Shape shard, inner;
};
const std::vector<Geometry>& geometries() {
  static const std::vector<Geometry> g = {
      {{64}, {16}}, {{8, 8}, {4, 4}}, {{4, 6, 8}, {2, 3, 4}}, {{1024}, {1}}, {{10}, {10}},
  };
  return g;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const Layout& l = layouts()[data[0] % layouts().size()];
  const Geometry& g = geometries()[data[1] % geometries().size()];
  auto s = std::make_shared<Sharding>();
  s->inner = g.inner;
  for (K k : l.inner) s->codecs.bytes_codecs.push_back(codec(k));
  s->index_codecs.bytes_codecs.push_back(codec(K::Crc32c));
  s->index_at_end = l.at_end;
  Pipeline p;
  p.sharding = s;
  for (K k : l.outer) p.bytes_codecs.push_back(codec(k));
  const uint8_t* shard = data + 2;
  const size_t n = size - 2;
  std::vector<double> out(static_cast<size_t>(prod(g.shard)));
  const double fill = 0;
  ThreadState ts;
  try {
    decode(p, shard, n, g.shard, DType::F64, out.data(), "fuzz.zarr/c/0", ts, &fill);
  } catch (const Error&) {}
  int64_t ninner = 1;
  for (size_t d = 0; d < g.shard.size(); ++d) ninner *= g.shard[d] / g.inner[d];
  const int64_t ib = s->index_bytes(ninner);
  if (static_cast<int64_t>(n) >= ib) {
    try {
      decode_index(*s, l.at_end ? shard + n - ib : shard, static_cast<size_t>(ib), ninner, "fuzz.zarr/c/0", ts);
    } catch (const Error&) {}
  }
  return 0;
}
