// The Plan (b2lazy/plan.hpp): its passes' decisions, execution by task ranges, and the
// cost model keeping a source that several tasks pull whole.
#include <gtest/gtest.h>

#include <cstring>

#include "b2lazy/b2lazy.hpp"
#include "b2lazy/plan.hpp"
#include "plan/tasks.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

namespace {

std::vector<double> run_all(const Plan& p, Context& ctx, Stats* stats = nullptr) {
  std::vector<double> out(static_cast<size_t>(p.root->size()));
  Stats s = execute(p, out.data(), 0, static_cast<int64_t>(p.tasks.size()), {}, &ctx);
  if (stats) *stats = s;
  return out;
}

const PlanStage* stage_of(const Plan& p, const Node* n) {
  for (auto& s : p.stages)
    if (s.node.get() == n) return &s;
  return nullptr;
}

}  // namespace

TEST(Plan, SourcePulledWholeByEveryTaskIsKeptOnce) {
  Context ctx(2);
  const int64_t n = 128;
  Array a = stored(sin(arange(0, n * n, 1, DType::F64, {n, n})), {16, n}, {4, n}, ctx);
  Array b = stored(cos(arange(0, n * n, 1, DType::F64, {n, n})), {16, n}, {4, n}, ctx);
  Array e = matmul(a, b) + b;
  ComputeOptions strips;  // row strips of the result (the product alone prefers one tile)
  strips.chunks = {16, n};
  Plan p = e.plan(strips, &ctx);
  ASSERT_GT(p.tasks.size(), 2u);
  const PlanStage* s = stage_of(p, b.node().get());
  ASSERT_NE(s, nullptr) << p.to_string();
  EXPECT_TRUE(s->source);
  EXPECT_EQ(s->where, KeptIn::Dense);
  EXPECT_GE(s->pulled_bytes, 2 * s->once_bytes);
  EXPECT_EQ(stage_of(p, a.node().get()), nullptr);  // each task reads its own rows of a
  const std::string text = p.to_string();
  EXPECT_NE(text.find("kept in memory, dense"), std::string::npos) << text;
  EXPECT_NE(text.find("peak memory"), std::string::npos);

  Array r = e.compute(strips, &ctx);
  const Stats& st = *r.stats();
  const int64_t size = n * n * 8;
  EXPECT_LE(st.bytes_decompressed.at(b.node()->source_name()), 2 * size);
  EXPECT_LE(st.bytes_decompressed.at(a.node()->source_name()), 2 * size);
  EXPECT_EQ(st.sources_kept, 1);
  // Same values as without the plan's reuse: the product computed tile by tile.
  auto want = (matmul(a, b) + b).to_vector(&ctx);
  auto got = r.to_vector(&ctx);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9) << i;
  EXPECT_NE(r.explain(&ctx).find("measured:"), std::string::npos);
}

TEST(Plan, SourceOverTheBudgetIsNotKeptDense) {
  Context ctx(2);
  const int64_t n = 128;
  Array a = stored(sin(arange(0, n * n, 1, DType::F64, {n, n})), {16, n}, {4, n}, ctx);
  Array b = stored(cos(arange(0, n * n, 1, DType::F64, {n, n})), {16, n}, {4, n}, ctx);
  ComputeOptions o;
  o.max_memory = 64 << 10;  // b is 128 KiB: over a quarter of the budget
  Plan p = (matmul(a, b) + b).plan(o, &ctx);
  const PlanStage* s = stage_of(p, b.node().get());
  EXPECT_TRUE(s == nullptr || s->where != KeptIn::Dense) << p.to_string();
  // max_memory is a limit: this budget holds no worker's panels, so executing the plan
  // is refused before any work, naming the smallest budget that works.
  EXPECT_GT(p.projected_peak, static_cast<int64_t>(o.max_memory));
  try {
    run_all(p, ctx);
    ADD_FAILURE() << "a plan over its budget executed";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("the smallest budget that works is"), std::string::npos) << e.what();
  }
}

TEST(Plan, DisjointTaskRangesFillTheResult) {
  Context ctx(2);
  Array a = stored(arange(0, 60 * 50, 1, DType::F64, {60, 50}), {7, 9}, {7, 3}, ctx);
  Array e = a - mean(a, {std::vector<int>{0}}) + sum(a);
  ComputeOptions o;
  o.chunks = {8, 10};
  Plan p = e.plan(o, &ctx);
  ASSERT_GE(p.tasks.size(), 4u);
  EXPECT_GE(p.stages.size(), 1u);
  const auto want = run_all(p, ctx);
  const int64_t nt = static_cast<int64_t>(p.tasks.size()), k = nt / 3;
  std::vector<double> got(want.size(), -1.0);
  // The first range computes the stages and keeps them with the plan (run_all, a run of
  // every task, computed its own and kept none).
  const Stats first = execute(p, got.data(), k, nt, {}, &ctx);  // any order
  EXPECT_EQ(first.cache_misses + first.sources_kept, static_cast<int64_t>(p.stages.size()));
  EXPECT_EQ(first.stages_reused, 0);
  // The second range reads the stages the first kept with the plan (and so does a copy).
  const Plan copy = p;
  const Stats second = execute(copy, got.data(), 0, k, {}, &ctx);
  EXPECT_EQ(second.cache_misses + second.sources_kept, 0);
  EXPECT_EQ(second.stages_reused, static_cast<int64_t>(p.stages.size()));
  EXPECT_GT(second.cache_hits, 0);
  EXPECT_EQ(got, want);
  // An empty range writes nothing; a range beyond the tasks is refused before any work.
  std::vector<double> none(want.size(), -1.0);
  Stats s = execute(p, none.data(), 2, 2, {}, &ctx);
  EXPECT_EQ(s.output_chunks, 0);
  EXPECT_EQ(none, std::vector<double>(want.size(), -1.0));
  EXPECT_THROW(execute(p, got.data(), 0, nt + 1, {}, &ctx), IndexError);
  EXPECT_THROW(execute(p, got.data(), 3, 2, {}, &ctx), IndexError);
  // Tasks cover the chunks once, in order.
  int64_t next = 0;
  for (auto& t : p.tasks) {
    EXPECT_EQ(t.first_chunk, next);
    next = t.last_chunk;
  }
  EXPECT_EQ(next, p.nchunks);
}

TEST(Plan, ProjectionsAndLayout) {
  Context ctx(2);
  Array a = stored(arange(0, 64 * 64, 1, DType::F64, {64, 64}), {16, 64}, {4, 64}, ctx);
  Plan p = (sin(a) + 1.0).plan({}, &ctx);
  EXPECT_EQ(p.chunks, (Shape{16, 64}));  // the stored operand's chunks and blocks
  EXPECT_EQ(p.blocks, (Shape{4, 64}));
  EXPECT_TRUE(p.block_major);
  EXPECT_TRUE(p.stages.empty());
  EXPECT_EQ(p.tasks.size(), 4u);
  for (auto& t : p.tasks) EXPECT_GT(t.projected_bytes, 0);
  EXPECT_GE(p.projected_peak, p.tasks[0].projected_bytes);
  EXPECT_EQ(p.source_bytes.at(a.node()->source_name()), 64 * 64 * 8);
  // A dense plan (to_buffer's) runs into a buffer; a compressed plan computes.
  Plan d = make_plan(sin(a), {}, PlanTarget::Dense, &ctx);
  EXPECT_EQ(d.target, PlanTarget::Dense);
  EXPECT_THROW(compute(d, {}, &ctx), ValueError);
  Array r = compute(p, {}, &ctx);
  EXPECT_EQ(r.to_vector(&ctx), (sin(a) + 1.0).to_vector(&ctx));
}

// A node reached along many paths of one output chunk is computed once even when nothing
// marks it cacheable: e = flip(e) + e, repeated, pulled the innermost node 2**depth times.
TEST(Plan, NodesOnManyPathsAreComputedOnce) {
  Context ctx(2);
  const int depth = 24;
  Array e = stored(arange(0, 64, 1, DType::F64, {8, 8}), {4, 4}, {2, 4}, ctx);
  std::vector<double> want(64);
  for (int i = 0; i < 64; ++i) want[i] = i;
  for (int k = 0; k < depth; ++k) {
    e = flip(e) + e;
    std::vector<double> next(64);
    for (int i = 0; i < 64; ++i) next[i] = want[63 - i] + want[i];
    want = next;
  }
  Plan p = e.plan({}, &ctx);
  EXPECT_GE(p.stages.size(), static_cast<size_t>(depth / 2 - 1));
  std::vector<double> got(64);
  Stats s = execute(p, got.data(), 0, static_cast<int64_t>(p.tasks.size()), {}, &ctx);
  for (int i = 0; i < 64; ++i) EXPECT_DOUBLE_EQ(got[i], want[i]);
  // Each kept level is read along a few paths per chunk of the level above (423 reads in
  // all here), not along the 2**depth paths of the graph (the source alone was read
  // about 4 * 2**24 times).
  EXPECT_LE(s.cache_hits, int64_t(8) * depth * 4) << p.to_string(&s);
  EXPECT_LE(s.chunks_decompressed_total, 64);
}

// Scans in one pass: the segment totals are carried from output chunk to output chunk when
// every task runs in order (the input decompressed once), and computed as a stage when
// only part of the tasks run; the values are the same.
TEST(Plan, ScanTotalsCarriedBetweenChunks) {
  Context ctx(2);
  const int64_t n = 96;
  Array a = stored(sin(arange(0, n * n, 1, DType::F64, {n, n})), {12, n}, {12, n}, ctx);
  for (std::optional<int> axis : {std::optional<int>{}, std::optional<int>{0}}) {
    Array e = cumsum(a, axis) * 2.0;
    Plan p = e.plan({}, &ctx);
    ASSERT_GT(p.tasks.size(), 2u) << p.to_string();
    const PlanStage* carried = nullptr;
    for (auto& s : p.stages)
      if (s.carried_by) carried = &s;
    ASSERT_NE(carried, nullptr) << p.to_string();
    EXPECT_NE(p.to_string().find("passes its carry from output chunk to output chunk"), std::string::npos);
    Stats all;
    std::vector<double> got = run_all(p, ctx, &all);
    EXPECT_EQ(all.bytes_decompressed.at(a.node()->source_name()), n * n * 8);  // once
    // In two ranges, the later first: the totals are computed as a stage.
    Plan q = e.plan({}, &ctx);
    std::vector<double> parts(got.size());
    const int64_t mid = static_cast<int64_t>(q.tasks.size()) / 2;
    execute(q, parts.data(), mid, static_cast<int64_t>(q.tasks.size()), {}, &ctx);
    execute(q, parts.data(), 0, mid, {}, &ctx);
    std::vector<double> want = e.to_vector(&ctx);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-9 * (1 + std::abs(want[i]))) << i;
      ASSERT_NEAR(parts[i], want[i], 1e-9 * (1 + std::abs(want[i]))) << i;
    }
  }
}

// A stage computes only the chunks the passes after it ask for: x^T x's upper triangle,
// spilled in tiles (kept dense it is one region, filled in one pass), leaves out the
// tiles below the diagonal in its hull.
TEST(Plan, StageComputesOnlyTheChunksAskedFor) {
  Context ctx(2);
  const int64_t n = 2048;  // a triangle of several tiles (stages are cut in tiles of about 8 MiB)
  Array x = stored(sin(arange(0, n * n, 1, DType::F64, {n, n})), {256, 256}, {64, 64}, ctx);
  Array e = matmul(matrix_transpose(x), x);
  ComputeOptions tiles;
  tiles.chunks = {512, 512};
  tiles.max_memory = size_t(32) << 20;
  Plan p = e.plan(tiles, &ctx);
  int64_t partial = 0;
  for (auto& s : p.stages) {
    if (s.needed.empty()) continue;
    int64_t asked = 0;
    for (bool b : s.needed) asked += b;
    EXPECT_LT(asked, static_cast<int64_t>(s.needed.size()));
    ++partial;
  }
  EXPECT_EQ(partial, 1) << p.to_string();
  std::vector<double> got = run_all(p, ctx);
  std::vector<double> xs = x.to_vector(&ctx);
  for (int64_t i = 0; i < n; i += 371)
    for (int64_t j = 0; j < n; j += 293) {
      double want = 0;
      for (int64_t k = 0; k < n; ++k) want += xs[static_cast<size_t>(k * n + i)] * xs[static_cast<size_t>(k * n + j)];
      ASSERT_NEAR(got[static_cast<size_t>(i * n + j)], want, 1e-9 * n) << i << "," << j;
    }
}

namespace b2lazy {

// Groups of a stage's chunks (PlanStage::fill_group): boxes clipped at the grid's end,
// chunk ids in C order, every chunk in exactly one group.
TEST(Plan, ChunkGroupsCoverTheGridOnce) {
  const ChunkGrid grid(Shape{100, 70}, Shape{16, 32});  // 7 x 3 chunks, the last clipped
  const ChunkGroups groups(grid, Shape{4, 1});          // 2 x 3 groups
  EXPECT_EQ(groups.count(), 6);
  EXPECT_EQ(groups.box(0), (Box{Shape{0, 0}, Shape{64, 32}}));
  EXPECT_EQ(groups.box(5), (Box{Shape{64, 64}, Shape{100, 70}}));
  EXPECT_EQ(groups.chunks(1), (std::vector<int64_t>{1, 4, 7, 10}));
  EXPECT_EQ(groups.chunks(5), (std::vector<int64_t>{14, 17, 20}));
  std::vector<int> seen(static_cast<size_t>(grid.nchunks()), 0);
  for (int64_t k = 0; k < groups.count(); ++k)
    for (int64_t id : groups.chunks(k)) {
      ++seen[static_cast<size_t>(id)];
      const Box c = grid.chunk_box(id), g = groups.box(k);
      for (size_t d = 0; d < 2; ++d) EXPECT_TRUE(c.start[d] >= g.start[d] && c.stop[d] <= g.stop[d]);
    }
  EXPECT_EQ(seen, std::vector<int>(seen.size(), 1));
}

}  // namespace b2lazy
