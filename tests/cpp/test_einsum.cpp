// einsum's subscript parser and contraction order; pad's index maps and reads; rechunk's
// chunks as the plan's output chunks.
#include <gtest/gtest.h>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

namespace {
int L(char c) { return c >= 'a' ? 26 + (c - 'a') : c - 'A'; }
std::vector<int> Ls(const std::string& s) {
  std::vector<int> v;
  for (char c : s) v.push_back(L(c));
  return v;
}
constexpr int E = kEinsumEllipsis;
}  // namespace

TEST(EinsumSubscripts, ExplicitAndImplicit) {
  EinsumSubscripts s = parse_einsum("ij,jk->ik", {2, 2});
  EXPECT_EQ(s.inputs, (std::vector<std::vector<int>>{Ls("ij"), Ls("jk")}));
  EXPECT_EQ(s.output, Ls("ik"));
  // implicit: the indices seen once, in ASCII order (upper case first)
  EXPECT_EQ(parse_einsum("ba,aB", {2, 2}).output, Ls("Bb"));
  EXPECT_EQ(parse_einsum("ii", {2}).output, std::vector<int>{});
  EXPECT_EQ(parse_einsum("i,i", {1, 1}).output, std::vector<int>{});
  EXPECT_EQ(parse_einsum(" i , j -> i j ", {1, 1}).output, Ls("ij"));
}

TEST(EinsumSubscripts, EllipsisBroadcastsRightAligned) {
  EinsumSubscripts s = parse_einsum("...i,...i->...", {3, 2});
  EXPECT_EQ(s.inputs[0], (std::vector<int>{E, E + 1, L('i')}));
  EXPECT_EQ(s.inputs[1], (std::vector<int>{E + 1, L('i')}));
  EXPECT_EQ(s.output, (std::vector<int>{E, E + 1}));
  // implicit output: the ellipsis's axes first
  EXPECT_EQ(parse_einsum("...ij->...ji", {4}).output, (std::vector<int>{E, E + 1, L('j'), L('i')}));
  EXPECT_EQ(parse_einsum("i...", {1}).output, Ls("i"));  // an ellipsis of no axes
}

TEST(EinsumSubscripts, Errors) {
  EXPECT_THROW(parse_einsum("ij,jk", {2}), ValueError);    // operand count
  EXPECT_THROW(parse_einsum("ij", {3}), ValueError);       // axes count
  EXPECT_THROW(parse_einsum("i1", {2}), ValueError);       // bad character
  EXPECT_THROW(parse_einsum("i->j", {1}), ValueError);     // output not in inputs
  EXPECT_THROW(parse_einsum("ij->ii", {2}), ValueError);   // repeated output
  EXPECT_THROW(parse_einsum("...i->i", {2}), ValueError);  // ellipsis axes with nowhere to go
  EXPECT_THROW(parse_einsum("i..", {1}), ValueError);      // a lone '.'
  EXPECT_THROW(parse_einsum("......", {1}), ValueError);   // two ellipses
  EXPECT_THROW(parse_einsum("i->i->i", {1}), ValueError);  // two arrows
  EXPECT_THROW(parse_einsum("i", {}), ValueError);         // no operand
  try {
    parse_einsum("i->j", {1});
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("'j'"), std::string::npos) << e.what();
  }
}

TEST(EinsumPath, ChainPicksTheVectorFirst) {
  // A (n x n) . B (n x n) . v: A . (B . v) costs 2 n^2 operations, (A . B) . v n^3 + n^2.
  const int64_t n = 500;
  EinsumSubscripts s = parse_einsum("ij,jk,k->i", {2, 2, 1});
  std::vector<Shape> shapes{{n, n}, {n, n}, {n}};
  for (EinsumOptimize how : {EinsumOptimize::Greedy, EinsumOptimize::Optimal}) {
    auto path = einsum_path(s, shapes, how);
    EXPECT_EQ(path, (std::vector<EinsumStep>{{1, 2}, {0, 1}}));
    EXPECT_DOUBLE_EQ(einsum_path_flops(s, shapes, path), 2.0 * n * n);
  }
  auto naive = einsum_path(s, shapes, EinsumOptimize::LeftToRight);
  EXPECT_EQ(naive, (std::vector<EinsumStep>{{0, 1}, {0, 1}}));
  EXPECT_DOUBLE_EQ(einsum_path_flops(s, shapes, naive), double(n) * n * n + double(n) * n);
  // The vector on the left: v . A . B -> (v . A) . B.
  EinsumSubscripts t = parse_einsum("i,ij,jk->k", {1, 2, 2});
  EXPECT_EQ(einsum_path(t, {{n}, {n, n}, {n, n}}, EinsumOptimize::Greedy), (std::vector<EinsumStep>{{0, 1}, {0, 1}}));
  EXPECT_THROW(einsum_path_flops(s, shapes, {{0, 1}}), ValueError);  // one operand left over
  EXPECT_THROW(einsum_path_flops(s, shapes, {{1, 1}, {0, 1}}), ValueError);
}

TEST(EinsumPath, OptimalBeatsOrMatchesGreedy) {
  // a four-operand ring of different lengths: the optimal order costs no more than greedy's
  EinsumSubscripts s = parse_einsum("ab,bc,cd,da->", {2, 2, 2, 2});
  std::vector<Shape> shapes{{8, 64}, {64, 4}, {4, 128}, {128, 8}};
  const double g = einsum_path_flops(s, shapes, einsum_path(s, shapes, EinsumOptimize::Greedy));
  const double o = einsum_path_flops(s, shapes, einsum_path(s, shapes, EinsumOptimize::Optimal));
  EXPECT_LE(o, g);
  EXPECT_LE(o, einsum_path_flops(s, shapes, einsum_path(s, shapes, EinsumOptimize::LeftToRight)));
}

TEST(Einsum, ValuesOfSmallCases) {
  Context ctx(1);
  Array a = arange(0, 6, 1, DType::F64, {2, 3});
  Array b = arange(0, 12, 1, DType::F64, {3, 4});
  EXPECT_EQ(einsum("ij,jk->ik", {a, b}).to_vector(&ctx), matmul(a, b).to_vector(&ctx));
  EXPECT_EQ(einsum("ij->ji", {a}).to_vector(&ctx), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(einsum("ij->", {a}).to_vector(&ctx), (std::vector<double>{15}));
  Array m = arange(0, 9, 1, DType::I32, {3, 3});
  EXPECT_EQ(einsum("ii->i", {m}).to_vector(&ctx), (std::vector<double>{0, 4, 8}));
  EXPECT_EQ(einsum("ii", {m}).to_vector(&ctx), (std::vector<double>{12}));
  EXPECT_EQ(einsum("ii", {m}).dtype(), DType::I32);
  EXPECT_EQ(einsum("i,j->ij", {arange(1, 3), arange(1, 4)}).to_vector(&ctx), (std::vector<double>{1, 2, 3, 2, 4, 6}));
  EXPECT_THROW(einsum("ij,jk->ik", {a, a}), ValueError);  // j: 3 vs 2
}

TEST(Pad, IndexMapsMatchNumPy) {
  Context ctx(1);
  Array x = arange(0, 3, 1, DType::I64);
  // np.pad(np.arange(3), 4, mode) for each mode
  EXPECT_EQ(pad(x, {{4, 4}}, PadMode::Reflect).to_vector(&ctx), (std::vector<double>{0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2}));
  EXPECT_EQ(pad(x, {{4, 4}}, PadMode::Symmetric).to_vector(&ctx),
            (std::vector<double>{2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0}));
  EXPECT_EQ(pad(x, {{4, 4}}, PadMode::Wrap).to_vector(&ctx), (std::vector<double>{2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(pad(x, {{2, 1}}, PadMode::Edge).to_vector(&ctx), (std::vector<double>{0, 0, 0, 1, 2, 2}));
  EXPECT_EQ(pad(x, {{1, 2}}, PadMode::Constant, scalar(7)).to_vector(&ctx), (std::vector<double>{7, 0, 1, 2, 7, 7}));
  // per axis and side: the later axis wins in the corners
  Array c = full({2, 2}, Scalar(0), DType::F64);
  Array vals = arange(1, 5, 1, DType::F64, {2, 2});  // ((1, 2), (3, 4))
  EXPECT_EQ(pad(c, {{1, 0}, {1, 0}}, PadMode::Constant, vals).to_vector(&ctx),
            (std::vector<double>{3, 1, 1, 3, 0, 0, 3, 0, 0}));
  EXPECT_THROW(pad(x, {{1, 1}}, pad_mode("median")), ValueError);
  EXPECT_THROW(pad(arange(0, 0), {{1, 1}}, PadMode::Wrap), ValueError);
  EXPECT_THROW(pad_widths({-1}, {}, 2), ValueError);
  EXPECT_THROW(pad_widths({1, 2, 3}, {3}, 2), ValueError);
}

TEST(Pad, SmallRegionReadsOnlyItsChunks) {
  Context ctx(2);
  Array a = stored(arange(0, 400 * 400, 1, DType::F64, {400, 400}), {50, 50}, {50, 50}, ctx);
  // the top left 10 x 10 of a wrap pad: the input's four corner chunks
  Array p = pad(a, {{5, 5}, {5, 5}}, PadMode::Wrap)[{Index::slice(0, 10), Index::slice(0, 10)}];
  ComputeOptions defaults;
  Array r = p.compute(defaults, &ctx);
  auto v = r.to_vector(&ctx);
  EXPECT_DOUBLE_EQ(v[0], 395.0 * 400 + 395);  // (-5, -5) wraps to (395, 395)
  EXPECT_DOUBLE_EQ(v[5 * 10 + 5], 0.0);       // (0, 0)
  EXPECT_EQ(r.stats()->distinct_chunks_decompressed.begin()->second, 4);
}

TEST(Rechunk, PlanWritesTheAskedChunks) {
  Context ctx(1);
  Array a = stored(arange(0, 100 * 60, 1, DType::F64, {100, 60}), {50, 60}, {50, 60}, ctx);
  Array r = rechunk(a, std::vector<ChunkSpec>{ChunkSpec::of(30), {ChunkSpec::Kind::Whole, 0}});
  EXPECT_EQ(r.node()->preferred_chunks(), (Shape{30, 60}));
  ComputeOptions defaults;
  EXPECT_EQ(r.plan(defaults, &ctx).chunks, (Shape{30, 60}));
  EXPECT_EQ((r + 1.0).plan(defaults, &ctx).chunks, (Shape{30, 60}));  // elementwise over it: its chunks
  ComputeOptions o;
  o.chunks = {10, 10};
  EXPECT_EQ(r.plan(o, &ctx).chunks, (Shape{10, 10}));  // compute's own chunks first
  EXPECT_EQ(r.to_vector(&ctx), a.to_vector(&ctx));
  // None keeps the current chunks, block lengths must be regular
  EXPECT_EQ(rechunk_chunks(a, {{ChunkSpec::Kind::Keep, 0}, ChunkSpec::of(7)}), (Shape{50, 7}));
  EXPECT_EQ(chunk_spec_of_blocks({40, 40, 20}, 100, 0).length, 40);
  EXPECT_THROW(chunk_spec_of_blocks({20, 40, 40}, 100, 0), ValueError);
  EXPECT_THROW(chunk_spec_of_blocks({40, 40}, 100, 0), ValueError);
  EXPECT_THROW(rechunk(a, Shape{0, 5}), ValueError);
}

TEST(Rechunk, AskedChunksWinOverAStoredOperandsAndPassThroughReshape) {
  Context ctx(1);
  Array a = stored(arange(0, 100 * 60, 1, DType::F64, {100, 60}), {50, 60}, {50, 60}, ctx);
  Array r = rechunk(a, Shape{10, 60});
  ComputeOptions defaults;
  EXPECT_EQ((a + r).plan(defaults, &ctx).chunks, (Shape{10, 60}));                           // the first rechunk found
  EXPECT_EQ(make_plan(r * 2.0, defaults, PlanTarget::Dense, &ctx).chunks, (Shape{10, 60}));  // to_numpy's
  EXPECT_EQ(reshape(r, {100, 6, 10}).node()->preferred_chunks(), (Shape{10, 6, 10}));
}
