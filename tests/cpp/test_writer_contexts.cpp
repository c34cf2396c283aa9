// A thread's cached Blosc2 contexts belong to one writer or source (runtime/context_uid.hpp):
// a writer made at the address of one freed before it, within the same thread state (two
// stages of one evaluation), compresses with its own cparams. It compressed with the first
// one's blocksize (8 rows where the array's blocks were 1024), and partial reads of a stage
// spilled so came back shifted in an svd_compressed plan (a TSQR's Q off by 4 rows).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <new>
#include <random>
#include <vector>

#include "b2lazy/box.hpp"
#include "runtime/thread_state.hpp"
#include "storage/b2nd_source.hpp"
#include "storage/b2nd_writer.hpp"

#include <blosc2.h>

using namespace b2lazy;

namespace {

// lz4 into a b2nd file (its partial reads go through lazy chunks, block by block).
ComputeOptions lz4(const std::string& name) {
  ComputeOptions o;
  o.cparams.codec = "lz4";
  o.urlpath = (std::filesystem::path(::testing::TempDir()) / (name + std::to_string(::getpid()) + ".b2nd")).string();
  return o;
}

}  // namespace

TEST(WriterContexts, AWriterAtAFreedWritersAddressUsesItsOwnBlocks) {
  alignas(B2ndWriter) unsigned char place[sizeof(B2ndWriter)];
  ThreadState ts;  // one thread's state over both writers, as over two stages of one evaluation
  {
    auto* first = new (place) B2ndWriter({8, 20}, DType::F64, {8, 20}, {8, 20}, lz4("contexts_first"));
    std::vector<double> v(8 * 20, 1.5);
    first->write_chunk(0, v.data(), ts);
    first->~B2ndWriter();
  }
  auto* second = new (place) B2ndWriter({16384, 20}, DType::F64, {8192, 20}, {1024, 20}, lz4("contexts_second"));
  std::vector<double> values(16384 * 20);
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  for (double& x : values) x = normal(rng);
  // Its chunks carry its own blocksize (1024 rows), not the freed writer's (8 rows).
  const std::vector<uint8_t> c = second->compress_chunk(0, values.data(), ts);
  int32_t nbytes = 0, cbytes = 0, blocksize = 0;
  ASSERT_GE(blosc2_cbuffer_sizes(c.data(), &nbytes, &cbytes, &blocksize), 0);
  EXPECT_EQ(blocksize, 1024 * 20 * 8);
  for (int64_t id = 0; id < 2; ++id) second->write_chunk(id, values.data() + id * 8192 * 20, ts);
  std::shared_ptr<B2ndSource> src = second->finish_source("contexts");
  // Parts of blocks to their ends, and across blocks and chunks.
  for (auto [lo, hi] :
       {std::pair<int64_t, int64_t>{204, 1024}, {8192 + 3072 + 204, 8192 + 4096}, {100, 700}, {8000, 8300}}) {
    Region r = Region::from_box(Box{{lo, 0}, {hi, 20}});
    std::vector<double> got(static_cast<size_t>((hi - lo) * 20));
    ThreadState reader;
    src->fill(r, got.data(), reader);
    for (int64_t i = 0; i < (hi - lo) * 20; ++i)
      ASSERT_EQ(got[static_cast<size_t>(i)], values[static_cast<size_t>(lo * 20 + i)]) << "rows " << lo << ":" << hi;
  }
  src.reset();
  second->~B2ndWriter();
}

namespace {
int threads_now() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) n += e.is_directory() ? 1 : 0;
  return n;
}
}  // namespace

// C-Blosc2 gives a context of several threads a pool of its own (kept until the context is
// freed); its frames re-compress their chunk offsets with such a context for every chunk
// written. Ours run their jobs on the calling thread (storage/blosc2_util.cpp): none start.
TEST(WriterContexts, BloscContextsOfSeveralThreadsStartNone) {
  B2ndWriter w({8, 8}, DType::F64, {8, 8}, {8, 8}, lz4("contexts_threads"));  // (C-Blosc2 set up)
  std::vector<double> src(1 << 17), back(src.size());
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<double>(i % 1000) * 0.5;
  std::vector<uint8_t> dst(src.size() * sizeof(double) + BLOSC2_MAX_OVERHEAD);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = sizeof(double);
  cp.blocksize = 16 << 10;  // 64 blocks, shared among the 4 threads
  cp.nthreads = 4;
  const int before = threads_now();
  blosc2_context* c = blosc2_create_cctx(cp);
  const int csize = blosc2_compress_ctx(c, src.data(), static_cast<int32_t>(src.size() * sizeof(double)), dst.data(),
                                        static_cast<int32_t>(dst.size()));
  EXPECT_EQ(threads_now(), before);
  blosc2_free_ctx(c);
  ASSERT_GT(csize, 0);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 4;
  blosc2_context* d = blosc2_create_dctx(dp);
  ASSERT_EQ(
      blosc2_decompress_ctx(d, dst.data(), csize, back.data(), static_cast<int32_t>(back.size() * sizeof(double))),
      static_cast<int>(back.size() * sizeof(double)));
  EXPECT_EQ(threads_now(), before);
  blosc2_free_ctx(d);
  EXPECT_EQ(back, src);
}
