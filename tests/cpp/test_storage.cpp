#include <gtest/gtest.h>

#include <filesystem>

#include "b2lazy/b2lazy.hpp"
#include "runtime/scratch.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::temp_dir;
namespace fs = std::filesystem;

TEST(Scratch, StackDisciplineReusesMemory) {
  Scratch s;
  {
    ScratchScope a(s);
    void* p = a.alloc(3 << 20);
    void* q = a.alloc(100);
    EXPECT_NE(p, q);
  }
  size_t cap = s.capacity();
  {
    ScratchScope b(s);
    b.alloc(3 << 20);
    b.alloc(100);
  }
  EXPECT_EQ(s.capacity(), cap);  // no growth on the second round
}

// Regression: a free later block was taken by the first request it fits, not the one it
// fits best, so a small request could take the block a larger one needs next, and the
// arena added a block for that one each time the pattern came round (as output chunk,
// an operand's buffer, a range read and the writer's compressed chunk did).
// Between passes the arena gives back what nothing holds (a stage pass's 16 MiB row was
// held through the output pass beside its kept bands: 98 MiB growth under 64 MiB + 32).
TEST(Scratch, TrimFreesOnlyWhatNothingHolds) {
  Scratch s;
  {
    ScratchScope pass(s);
    pass.alloc(16 << 20);
  }
  EXPECT_GE(s.held(), size_t(16) << 20);
  s.trim();
  EXPECT_EQ(s.held(), 0u);
  ScratchScope outer(s);
  auto* kept = static_cast<char*>(outer.alloc(1000));
  kept[999] = 7;
  {
    ScratchScope inner(s);
    inner.alloc(8 << 20);
  }
  s.trim();  // the outer block stays, the free 8 MiB one goes
  EXPECT_LT(s.held(), size_t(8) << 20);
  EXPECT_EQ(kept[999], 7);
  ScratchScope again(s);
  EXPECT_NE(again.alloc(4 << 20), nullptr);
}

TEST(Scratch, LaterBlocksAreTakenByBestFitAndTheArenaStopsGrowing) {
  Scratch s;
  const size_t kib = 1024;
  auto round = [&] {
    {
      ScratchScope out(s);
      out.alloc(256 * kib);  // the output chunk: a block of its own
      {
        ScratchScope op(s);
        op.alloc(256 * kib);  // an operand's buffer
        ScratchScope range(s);
        range.alloc(1018 * kib);  // a range read below it
      }
      ScratchScope dest(s);
      dest.alloc(256 * kib + 64);  // the compressed chunk: only the large block fits it
    }
  };
  round();
  const size_t cap = s.capacity();
  for (int i = 0; i < 4; ++i) round();
  EXPECT_EQ(s.capacity(), cap);
  EXPECT_LE(cap, (256 + 256 + 1018) * kib + 4096);
}

TEST(Storage, FileAndDirectoryRoundTrip) {
  fs::path d = temp_dir("roundtrip");
  Context ctx(2);
  Array x = arange(0, 37 * 23, 1, DType::I32, {37, 23});
  for (bool contiguous : {true, false}) {
    ComputeOptions o;
    o.urlpath = (d / (contiguous ? "x.b2nd" : "xdir")).string();
    o.contiguous = contiguous;
    o.chunks = {10, 7};
    o.blocks = {3, 4};
    Array r = x.compute(o, &ctx);
    EXPECT_EQ(r.stats()->output_chunks, 4 * 4);
    Array back = open(o.urlpath);
    EXPECT_EQ(back.dtype(), DType::I32);
    auto v = (back * 2)[{Index::slice(std::nullopt, std::nullopt, -5), Index::slice(std::nullopt, std::nullopt, -3)}]
                 .to_vector(&ctx);
    // First element: row 36, col 22.
    EXPECT_DOUBLE_EQ(v[0], 2.0 * (36 * 23 + 22));
  }
  // Only the two results are left: no temporaries.
  int n = 0;
  for (auto& e : fs::directory_iterator(d)) {
    (void)e;
    ++n;
  }
  EXPECT_EQ(n, 2);
  fs::remove_all(d);
}

TEST(Storage, FailedEvaluationLeavesNoFile) {
  fs::path d = temp_dir("failed");
  Context ctx(2);
  ComputeOptions o;
  o.urlpath = (d / "missing_dir" / "x.b2nd").string();
  EXPECT_THROW(zeros({10}).compute(o, &ctx), IOError);
  o.urlpath = (d / "x.b2nd").string();
  o.chunks = {4};
  o.blocks = {8};  // blocks larger than chunks
  EXPECT_THROW(zeros({10}).compute(o, &ctx), ValueError);
  EXPECT_TRUE(fs::is_empty(d));
  EXPECT_THROW(open((d / "nope.b2nd").string()), IOError);
  fs::remove_all(d);
}

TEST(Storage, ProgressCallbackSeesEveryChunk) {
  Context ctx(2);
  ComputeOptions o;
  o.chunks = {5};
  o.blocks = {5};
  int64_t last = 0, total = 0;
  o.progress = [&](int64_t done, int64_t n) {
    last = std::max(last, done);
    total = n;
  };
  zeros({23}).compute(o, &ctx);
  EXPECT_EQ(total, 5);
  EXPECT_EQ(last, 5);
}

TEST(Executor, ErrorsPropagateFromWorkers) {
  Context ctx(2);
  // Mixing a bool subtract is refused at build time, before any thread runs.
  EXPECT_THROW((void)(zeros({4}, DType::Bool) - zeros({4}, DType::Bool)), TypeError);
  // A context is reusable after a failed evaluation.
  ComputeOptions bad;
  bad.cparams.codec = "nope";
  EXPECT_THROW(zeros({4}).compute(bad, &ctx), ValueError);
  EXPECT_EQ(ones({4}).to_vector(&ctx)[3], 1.0);
}
