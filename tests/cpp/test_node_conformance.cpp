// The node conformance suite (issue #13, item 6), node half: every kind of node, built
// over sources that record what is pulled of them, passes one generic test — for random
// strided regions, fill(region) equals that region of the whole result, and every read of
// a source stays inside the regions the pull rules (Node::input_regions, followed from
// the region down to the sources) say the fill needs. The planner sizes work, reuse and
// memory from those rules, so a fill that reads outside them is a planning bug even when
// its values are right. (The driver half: test_driver_conformance.cpp.)
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <utility>

#include "b2lazy/b2lazy.hpp"
#include "core/strided_copy.hpp"
#include "runtime/node_cache.hpp"
#include "runtime/thread_state.hpp"

using namespace b2lazy;

namespace {

// float64 values in C order, every pull of them recorded.
class RecordingSource : public Node {
 public:
  RecordingSource(Shape shape, uint32_t seed) : Node(DType::F64, std::move(shape)) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    values_.resize(static_cast<size_t>(size()));
    for (double& v : values_) v = u(rng);
  }
  std::string kind() const override { return "recording"; }
  void fill(const Region& r, void* out, ThreadState&) const override {
    {
      std::lock_guard<std::mutex> g(mu_);
      reads_.push_back(r);
    }
    const size_t nd = ndim();
    Shape src = byte_strides(shape(), sizeof(double)), dst = byte_strides(r.count, sizeof(double));
    int64_t first = 0;
    for (size_t d = 0; d < nd; ++d) {
      first += r.start[d] * src[d];
      src[d] *= r.step[d];
    }
    if (r.size() == 0) return;
    copy_strided(nd, r.count.data(), reinterpret_cast<const char*>(values_.data()) + first, src.data(),
                 static_cast<char*>(out), dst.data(), sizeof(double));
  }
  std::vector<Region> take_reads() const {
    std::lock_guard<std::mutex> g(mu_);
    return std::exchange(reads_, {});
  }

 private:
  std::vector<double> values_;
  mutable std::mutex mu_;
  mutable std::vector<Region> reads_;
};

using Sources = std::vector<std::shared_ptr<RecordingSource>>;

// The bounds every pull rule below `n` asks of each recording source for `r`.
void expected_reads(const Node& n, const Region& r, std::map<const Node*, std::vector<Box>>& out, int depth = 0) {
  if (r.size() == 0 || depth > 24) return;
  if (n.kind() == "recording") {
    out[&n].push_back(r.bounds());
    return;
  }
  const auto ins = n.input_regions(r);
  for (size_t i = 0; i < ins.size() && i < n.inputs().size(); ++i)
    expected_reads(*n.inputs()[i], ins[i], out, depth + 1);
  // A node that keeps state between the output chunks along the last axis (a product's
  // kept band of an expensive operand: Node::shares_rows) reports for a later chunk of a
  // row only what the band does not hold; fill() of such a chunk alone reads what the
  // row's first chunk would (the band) — the contract the planner's task rows rely on.
  if (n.shares_rows() && r.ndim() > 0 && r.start.back() != 0) {
    Region first = r;
    first.start.back() = 0;
    const auto more = n.input_regions(first);
    for (size_t i = 0; i < more.size() && i < n.inputs().size(); ++i)
      expected_reads(*n.inputs()[i], more[i], out, depth + 1);
  }
}

bool inside(const Box& a, const Box& b) {
  for (size_t d = 0; d < a.ndim(); ++d)
    if (a.start[d] < b.start[d] || a.stop[d] > b.stop[d]) return false;
  return true;
}

Region random_region(const Shape& shape, std::mt19937& rng) {
  Region r = Region::whole(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) continue;
    std::uniform_int_distribution<int64_t> start(0, shape[d] - 1), step(1, 3);
    r.start[d] = start(rng);
    r.step[d] = step(rng);
    const int64_t most = (shape[d] - 1 - r.start[d]) / r.step[d] + 1;
    r.count[d] = std::uniform_int_distribution<int64_t>(1, most)(rng);
  }
  return r;
}

struct Case {
  std::string name;
  std::vector<Shape> shapes;  // of the recording sources
  std::function<Array(const std::vector<Array>&)> build;
};

// A case written as an expression over operands a, b, ... (the recording sources).
Case expression_case(const std::string& text, std::vector<Shape> shapes) {
  return {text, std::move(shapes), [text](const std::vector<Array>& x) {
            std::map<std::string, Operand> operands;
            for (size_t i = 0; i < x.size(); ++i) operands.emplace(std::string(1, char('a' + i)), x[i]);
            return evaluate(text, operands);
          }};
}

// Builds with sort_run_length `n` (graphs built after it sort by runs), then restores it.
template <class F> Array with_run_length(int64_t n, F&& build) {
  const int64_t old = sort_run_length();
  set_sort_run_length(n);
  Array r = build();
  set_sort_run_length(old);
  return r;
}

// A user function with a halo: out[i] = x[i - 2] + x[i + 2] (0 beyond the edges).
void neighbours(const std::vector<UdfInput>& in, void* out, DType, const Shape& shape, const Shape& offset) {
  const double* v = static_cast<const double*>(in[0].data);
  const int64_t n = in[0].shape[0], first = in[0].start[0];
  for (int64_t k = 0; k < shape[0]; ++k) {
    const int64_t i = offset[0] + k - first;
    static_cast<double*>(out)[k] = (i >= 2 ? v[i - 2] : 0.0) + (i + 2 < n ? v[i + 2] : 0.0);
  }
}

std::vector<Case> cases() {
  using V = const std::vector<Array>&;
  ReduceOptions ax0, ax1, keep;
  ax0.axis = std::vector<int>{0};
  ax1.axis = std::vector<int>{1};
  keep.axis = std::vector<int>{1};
  keep.keepdims = true;
  std::vector<Case> out = {
      {"fused elementwise", {{13, 17}, {13, 17}}, [](V x) { return sin(x[0]) * 2.0 + x[1]; }},
      {"broadcast elementwise", {{13, 17}, {17}}, [](V x) { return x[0] - x[1]; }},
      {"where", {{9, 11}, {9, 11}}, [](V x) { return where(x[0] > 0.0, x[0], x[1]); }},
      {"sum axis 0", {{19, 23}}, [ax0](V x) { return sum(x[0], ax0); }},
      {"mean axis 1", {{19, 23}}, [ax1](V x) { return mean(x[0], ax1); }},
      {"var keepdims", {{7, 9, 11}}, [keep](V x) { return var(x[0], keep); }},
      {"max of all", {{15, 6}}, [](V x) { return max(x[0]); }},
      {"nanvar axis 0", {{19, 23}}, [ax0](V x) { return reduce(Reduction::NanVar, x[0], ax0); }},
      {"logsumexp axis 1", {{19, 23}}, [ax1](V x) { return reduce(Reduction::LogSumExp, x[0], ax1); }},
      {"nanargmax of all", {{15, 6}}, [](V x) { return reduce(Reduction::NanArgmax, x[0]); }},
      {"median axis 0", {{19, 23}}, [](V x) { return median(x[0], QuantileOptions{std::vector<int>{0}}); }},
      {"quantile of all", {{15, 6}}, [](V x) { return quantile(x[0], 0.3); }},
      {"a - mean(a, 0)", {{21, 13}}, [ax0](V x) { return x[0] - mean(x[0], ax0); }},
      {"cumsum axis 0", {{29, 7}}, [](V x) { return cumsum(x[0], 0); }},
      {"cumsum axis 1", {{7, 29}}, [](V x) { return cumsum(x[0], 1); }},
      {"cumsum flattened", {{11, 13}}, [](V x) { return cumsum(x[0]); }},
      {"cumprod axis 0", {{12, 5}}, [](V x) { return cumprod(x[0], 0); }},
      {"matmul", {{17, 13}, {13, 19}}, [](V x) { return matmul(x[0], x[1]); }},
      {"batched matmul", {{3, 7, 5}, {3, 5, 6}}, [](V x) { return matmul(x[0], x[1]); }},
      {"a.T @ a", {{15, 9}}, [](V x) { return matmul(matrix_transpose(x[0]), x[0]); }},
      // Lanes longer than two runs sort out of core: RunsNode, SamplesNode and MergeNode.
      {"sort by runs and a merge", {{37, 3}}, [](V x) { return with_run_length(4, [&] { return sort(x[0], 0); }); }},
      {"argsort by runs, descending",
       {{5, 29}},
       [](V x) { return with_run_length(3, [&] { return argsort(x[0], 1, true); }); }},
      {"sort flattened by runs", {{41}}, [](V x) { return with_run_length(5, [&] { return sort(x[0]); }); }},
      {"assign a slice",
       {{9, 9}, {5, 4}},
       [](V x) {
         return assign(x[0], {Index::slice(2, 7), Index::slice(1, 9, 2)}, x[1]);
       }},
      {"lazyudf with a halo", {{23}}, [](V x) { return lazyudf(neighbours, {x[0]}, DType::F64, {23}, {2}); }},
      {"matmul of a sum", {{9, 4, 11}, {11, 8}}, [ax1](V x) { return matmul(sum(x[0], ax1), x[1]); }},
      {"vecdot", {{8, 10}, {8, 10}}, [](V x) { return vecdot(x[0], x[1]); }},
      {"tensordot", {{4, 5, 6}, {5, 6, 3}}, [](V x) { return tensordot(x[0], x[1], 2); }},
      {"outer", {{7}, {9}}, [](V x) { return outer(x[0], x[1]); }},
      {"permute_dims",
       {{4, 5, 6}},
       [](V x) {
         return permute_dims(x[0], {2, 0, 1});
       }},
      {"flip", {{9, 8}}, [](V x) { return flip(x[0]); }},
      {"reshape",
       {{6, 10}},
       [](V x) {
         return reshape(x[0], {4, 15});
       }},
      {"flatten", {{6, 7}}, [](V x) { return flatten(x[0]); }},
      {"roll",
       {{9, 8}},
       [](V x) {
         return roll(x[0], {3, -2}, std::vector<int>{0, 1});
       }},
      {"concat",
       {{5, 6}, {4, 6}},
       [](V x) {
         return concat({x[0], x[1]}, 0);
       }},
      {"stack",
       {{5, 6}, {5, 6}},
       [](V x) {
         return stack({x[0], x[1]}, 1);
       }},
      {"broadcast_to",
       {{1, 6}},
       [](V x) {
         return broadcast_to(x[0], {5, 6});
       }},
      {"expand_dims + squeeze", {{5, 6}}, [](V x) { return squeeze(expand_dims(x[0], 1)); }},
      {"take",
       {{12, 7}},
       [](V x) {
         return take(x[0], {3, 0, 11, 3, 5}, {5}, 0);
       }},
      {"getitem",
       {{20, 15}},
       [](V x) {
         return x[0][{Index::slice(2, 19, 3), Index::slice(std::nullopt, std::nullopt, -2)}];
       }},
      {"tril", {{9, 9}}, [](V x) { return tril(x[0], -1); }},
      {"triu", {{8, 11}}, [](V x) { return triu(x[0], 2); }},
      {"diagonal", {{9, 12}}, [](V x) { return diagonal(x[0], 1); }},
      {"trace", {{3, 9, 9}}, [](V x) { return trace(x[0]); }},
      {"tile",
       {{3, 4}},
       [](V x) {
         return tile(x[0], {2, 3});
       }},
      {"repeat", {{5, 4}}, [](V x) { return repeat(x[0], 3, 1); }},
      {"diff", {{6, 11}}, [](V x) { return diff(x[0], 1, 2); }},
      {"astype", {{6, 5}}, [](V x) { return (x[0] * 10.0).astype(DType::I32); }},
      {"clip", {{7, 6}}, [](V x) { return clip(x[0], Operand(Scalar(-0.5)), Operand(Scalar(0.5))); }},
      {"mask_select", {{13, 9}}, [](V x) { return mask_select(x[0], x[0] > 0.0); }},
      {"concat flattened",
       {{3, 4}, {5}},
       [](V x) {
         return concat({x[0], x[1]}, std::nullopt);
       }},
      {"oindex",
       {{10, 9}},
       [](V x) {
         return oindex(x[0], {IndexItem(IndexArray{{7, 1, 1, 4}, {4}}), IndexItem(Index::slice(1, 8, 2))});
       }},
      {"sum of a product", {{6, 8}, {8, 5}}, [](V x) { return sum(matmul(x[0], x[1])); }},
      {"eye", {}, [](V) { return eye(7, 9, 1); }},
      {"arange and linspace",
       {},
       [](V) {
         return reshape(arange(0, 24), {4, 6}) * linspace(0, 1, 6);
       }},
      {"full plus a source",
       {{5, 4}},
       [](V x) {
         return full({5, 4}, Scalar(1.5)) + x[0];
       }},
      {"pad reflect",
       {{9, 8}},
       [](V x) {
         return pad(x[0], {{3, 11}, {0, 2}}, PadMode::Reflect);
       }},
      {"pad wrap",
       {{9, 8}},
       [](V x) {
         return pad(x[0], {{4, 4}}, PadMode::Wrap);
       }},
      {"pad constant",
       {{9, 8}},
       [](V x) {
         return pad(x[0], {{1, 2}, {3, 0}}, PadMode::Constant, scalar(2.5));
       }},
      {"rechunk",
       {{13, 17}},
       [](V x) {
         return rechunk(x[0], Shape{4, 5}) * 2.0;
       }},
      {"moving mean centred",
       {{23, 6}},
       [](V x) {
         MovingOptions o;
         o.axis = 0, o.center = true, o.min_periods = 2;
         return moving_reduce(x[0], 5, MovingOp::Mean, o);
       }},
      {"moving max window beyond the axis",
       {{7, 9}},
       [](V x) {
         MovingOptions o;
         o.axis = 1, o.min_periods = 1;
         return moving_reduce(x[0], 12, MovingOp::Max, o);
       }},
      {"sliding_window_view",
       {{11, 6}},
       [](V x) {
         return sliding_window_view(x[0], {3, 2}, std::vector<int>{0, 1});
       }},
      {"var over a window view",
       {{19, 4}},
       [](V x) {
         ReduceOptions o;
         o.axis = std::vector<int>{-1};
         return var(sliding_window_view(x[0], {4}, std::vector<int>{0}), o);
       }},
      {"segment_reduce interleaved",
       {{13, 7}},
       [](V x) {
         return segment_reduce(x[0], {0, 2, 1, 0, 2, 1, -1, 3, 4, 4, 0, 1, 2}, "nanvar", {.axis = 0, .ngroups = 5});
       }},
      {"segment_reduce contiguous",
       {{5, 11, 3}},
       [](V x) {
         return segment_reduce(x[0] * 2.0, {0, 0, 0, 1, 1, 2, 3, 3, 3, 3, -1}, "mean", {.axis = 1});
       }},
      {"segment_reduce last",
       {{6, 9}},
       [](V x) {
         return segment_reduce(x[0], {2, 2, 0, 1, 0, 1, 2, 0, 0}, "last");
       }},
      {"einsum batched",
       {{3, 4, 5, 6}, {3, 6, 5, 2}},
       [](V x) {
         return einsum("bijk,bkjl->bli", {x[0], x[1]});
       }},
      {"linalg_qr Q batched", {{2, 9, 5}}, [](V x) { return linalg_qr(x[0])[0]; }},
      {"linalg_svd Vh", {{7, 5}}, [](V x) { return linalg_svd(x[0])[2]; }},
      {"linalg_svd_compressed U, one power iteration",
       {{9, 6}},
       [](V x) { return linalg_svd_compressed(x[0], 3, 1, 2, 7)[0]; }},
      {"linalg_svd_compressed Vh of the wide", {{4, 11}}, [](V x) { return linalg_svd_compressed(x[0], 2)[2]; }},
      {"linalg_cholesky upper of one matrix (cholesky_tiles)",
       {{7, 7}},
       [](V x) { return linalg_cholesky(matmul(x[0], matrix_transpose(x[0])) + eye(7, 7, 0) * 7.0, true); }},
      {"linalg_solve of one matrix (cholesky_tiles)",
       {{6, 6}, {6, 3}},
       [](V x) { return linalg_solve(x[0] + eye(6, 6, 0) * 10.0, x[1]); }},
      {"linalg_solve broadcast",
       {{2, 6, 6}, {6, 3}},
       [](V x) { return linalg_solve(x[0] + eye(6, 6, 0) * 10.0, x[1]); }},
      {"linalg_slogdet", {{4, 5, 5}}, [](V x) { return linalg_slogdet(x[0])[1]; }},
      {"linalg_eigh", {{6, 6}}, [](V x) { return linalg_eigh(x[0] + matrix_transpose(x[0]))[1]; }},
  };
  // Cases written as expression strings over operands a, b (recording sources of the given
  // shapes): every call goes through the function's registry row, as Python's and the
  // command's do.
  const std::vector<std::pair<std::string, std::vector<Shape>>> expressions = {
      {"sort(a, axis=0)", {{9, 7}}},
      {"argsort(a, axis=1, descending=True)", {{6, 11}}},
      {"searchsorted(sort(flatten(b), axis=0), a, side='right')", {{5, 4}, {3, 6}}},
      {"percentile(a, 30, axis=1)", {{7, 9}}},
      {"cumulative_sum(a, axis=1, include_initial=True)", {{5, 8}}},
      {"cumulative_prod(a, axis=0)", {{6, 5}}},
      {"transpose(a)", {{4, 7}}},
      {"matrix_transpose(a)", {{3, 4, 5}}},
      {"moveaxis(a, 0, 2)", {{3, 4, 5}}},
      {"broadcast_arrays(a, b)[1]", {{4, 1}, {1, 6}}},
      {"unstack(a, axis=1)[2]", {{5, 4}}},
      {"take_along_axis(a, argsort(a, axis=0), axis=0)", {{7, 5}}},
      {"nonzero(a > 0)[1]", {{6, 7}}},
      {"zeros((4, 5)) + ones((4, 5)) + empty((4, 5)) + a", {{4, 5}}},
      {"zeros_like(a) + ones_like(a) + full_like(a, 2.5) + empty_like(a) + a", {{5, 3}}},
      {"meshgrid(a[0], b[:, 1], indexing='ij')[1]", {{4, 6}, {5, 3}}},
      {"nanmedian(a, axis=0)", {{9, 4}}},
      {"nanquantile(a, 0.3, axis=1)", {{5, 8}}},
      {"nanpercentile(a, 70)", {{6, 6}}},
      {"isin(round(a), [0, 1])", {{7, 5}}},
      {"digitize(a, [-1.0, 0.0, 1.0])", {{6, 5}}},
      {"bincount(astype(abs(flatten(a)) * 3, 'int64'))", {{5, 4}}},
      {"histogram(a, bins=5)[0]", {{8, 6}}},
      {"histogram2d(flatten(a), flatten(b), bins=4)[0]", {{5, 4}, {4, 5}}},
      {"random_uniform((5, 6), seed=3) + random_normal((5, 6), seed=4) + a", {{5, 6}}},
      {"astype(random_integers((5, 6), 0, 10), 'float64') + a", {{5, 6}}},
      {"moving_reduce(a, 3, 'sum', axis=0)", {{9, 4}}},
      // the fft extension (complex results compared as float64 parts: FFTW's rounding may
      // differ with the batch's layout)
      {"real(fft_fft(a, axis=0)) + imag(fft_ifft(a, norm='ortho'))", {{6, 6}}},
      {"real(fft_rfft(a, n=10)) + fft_irfft(fft_rfft(a), n=6)", {{5, 6}}},
      {"fft_hfft(a, n=8) + abs(fft_ihfft(a, n=14))", {{4, 5}}},
      {"abs(fft_fftn(a, s=(4, 6))) + real(fft_ifftn(a, axes=(0,)))[:4]", {{5, 6}}},
      {"fft_irfftn(fft_rfftn(a), s=(6, 6)) + imag(fft_rfftn(a, s=(6, 10)))", {{6, 6}}},
      {"fft_fftshift(a, axes=0) + fft_ifftshift(a) + fft_fftfreq(6, d=0.5) + fft_rfftfreq(10)", {{5, 6}}},
      {"linalg_cholesky(matmul(a, matrix_transpose(a)) + eye(5) * 5)", {{5, 5}}},
      {"linalg_eigvalsh(a + matrix_transpose(a))", {{6, 6}}},
      {"linalg_svdvals(a)", {{3, 7, 4}}},
      {"linalg_det(a)", {{3, 5, 5}}},
      {"linalg_inv(a + eye(5) * 10)", {{5, 5}}},
      {"imag(linalg_eig(a)[1])", {{4, 4}}},
      {"real(linalg_eigvals(a))", {{2, 4, 4}}},
  };
  for (const auto& [text, shapes] : expressions) out.push_back(expression_case(text, shapes));
  // Every elementwise function and every reduction of the registry, generated from its row:
  // a function added there is in this suite without a line here.
  for (const FunctionInfo& f : function_registry()) {
    if (f.op && op_family(*f.op) != OpFamily::Special) {
      std::string args = op_arity(*f.op) == 1 ? "a" : "a, b";
      if (op_family(*f.op) == OpFamily::Int)  // integers only: shifts by 0..5
        args =
            op_arity(*f.op) == 1 ? "astype(a * 10, 'int64')" : "astype(a * 10, 'int64'), astype(abs(b) * 2, 'int64')";
      out.push_back(expression_case(f.name + "(" + args + ")", {{6, 7}, {6, 7}}));
    } else if (f.reduction) {
      out.push_back(expression_case(f.name + "(a, axis=0)", {{7, 6}}));
    }
  }
  return out;
}

class NodeConformance : public ::testing::TestWithParam<Case> {};

TEST_P(NodeConformance, FillsEqualTheWholeAndReadOnlyWhatThePullRulesSay) {
  const Case& c = GetParam();
  Sources sources;
  std::vector<Array> xs;
  uint32_t seed = 1;
  for (const Shape& s : c.shapes) {
    sources.push_back(std::make_shared<RecordingSource>(s, seed++));
    xs.emplace_back(sources.back());
  }
  const Array e = c.build(xs);
  const Node& root = *e.node();
  const size_t isz = itemsize(root.dtype());
  std::vector<char> whole(static_cast<size_t>(std::max<int64_t>(1, root.size())) * isz);
  Context ctx(1);
  e.to_buffer(whole.data(), &ctx);
  for (auto& s : sources) s->take_reads();

  std::mt19937 rng(12345);
  NodeCache cache;
  for (int trial = 0; trial < 40; ++trial) {
    const Region r = trial == 0 ? Region::whole(root.shape()) : random_region(root.shape(), rng);
    SCOPED_TRACE(c.name + ": region start " + shape_str(r.start) + " step " + shape_str(r.step) + " count " +
                 shape_str(r.count));
    std::vector<char> got(static_cast<size_t>(std::max<int64_t>(1, r.size())) * isz), want(got.size());
    ThreadState ts;
    ts.nodes = &cache;
    root.fill(r, got.data(), ts);
    // The region of the whole result.
    Shape src = byte_strides(root.shape(), isz), dst = byte_strides(r.count, isz);
    int64_t first = 0;
    for (size_t d = 0; d < r.ndim(); ++d) first += r.start[d] * src[d], src[d] *= r.step[d];
    if (r.size() > 0)
      copy_strided(r.ndim(), r.count.data(), whole.data() + first, src.data(), want.data(), dst.data(), isz);
    if (root.dtype() == DType::F64) {
      const auto* g = reinterpret_cast<const double*>(got.data());
      const auto* w = reinterpret_cast<const double*>(want.data());
      for (int64_t i = 0; i < r.size(); ++i) {
        if (std::isnan(w[i])) ASSERT_TRUE(std::isnan(g[i])) << "element " << i;
        else if (std::isinf(w[i])) ASSERT_EQ(g[i], w[i]) << "element " << i;
        else ASSERT_NEAR(g[i], w[i], 1e-9 * (1 + std::abs(w[i]))) << "element " << i;
      }
    } else {
      ASSERT_EQ(0, std::memcmp(got.data(), want.data(), static_cast<size_t>(r.size()) * isz));
    }
    // Reads inside what the pull rules say.
    std::map<const Node*, std::vector<Box>> expected;
    expected_reads(root, r, expected);
    for (auto& s : sources)
      for (const Region& read : s->take_reads()) {
        if (read.size() == 0) continue;
        const Box b = read.bounds();
        bool ok = false;
        for (const Box& x : expected[s.get()]) ok = ok || inside(b, x);
        EXPECT_TRUE(ok) << "read [" << shape_str(b.start) << ", " << shape_str(b.stop) << ") of a source outside "
                        << expected[s.get()].size() << " expected boxes";
      }
  }
}

// Every function of the registry has a case above (its name among a case's words): a
// function added without one fails here.
TEST(NodeConformanceCoverage, EveryRegistryFunctionHasACase) {
  std::set<std::string> words;
  for (const Case& c : cases()) {
    std::string w;
    for (char ch : c.name + " ") {
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') w += ch;
      else if (!w.empty()) words.insert(std::exchange(w, ""));
    }
  }
  for (const FunctionInfo& f : function_registry()) EXPECT_TRUE(words.count(f.name)) << f.name << " has no case";
}

INSTANTIATE_TEST_SUITE_P(EveryNodeKind, NodeConformance, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           std::string n = std::to_string(i.index) + "_";
                           for (char ch : i.param.name) n += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return n;
                         });

}  // namespace
