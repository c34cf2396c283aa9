#include "ops/rolling/moving_node.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "b2lazy/ops.hpp"
#include "core/strided_copy.hpp"
#include "runtime/graph_queries.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {

// Sliding sums start again from the window's rows every this many outputs (at least
// 2 w): add/subtract rounding then grows over a bounded run, never along the whole axis.
constexpr int64_t kRestart = 512;
// Lanes (positions across the axis) a sliding sum keeps its accumulators for at once.
constexpr int64_t kLanes = 256;
// Scratch of one van Herk strip (prefix and suffix extremes, prefix counts).
constexpr int64_t kStripBytes = int64_t(1) << 20;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Rows of the extended window axis: position p (0 <= p < L + w - 1) is input row
// p - pin0 of the pulled block when 0 <= p - pin0 < lin, else outside the axis.
template <class A> struct Rows {
  const A* x;  // the block of one outer index: lin rows of `inner` lanes
  int64_t lin, pin0, inner;
  const A* row(int64_t p) const { return p < pin0 || p >= pin0 + lin ? nullptr : x + (p - pin0) * inner; }
};

// Sums, means, counts, variances. A: double (float data: NaN and ±inf counted apart,
// only finite values summed, shifted by K for variance), int64_t or uint64_t (integer
// data: exact wrapping sums, as NumPy's). R: the result type written.
template <class A, class R> void slide_sums(const MovingSpec& sp, const Rows<A>& in, int64_t L, R* res) {
  constexpr bool kFloat = std::is_floating_point_v<A>;
  using U = std::conditional_t<kFloat, double, uint64_t>;  // (integers wrap: unsigned)
  const int64_t w = sp.window, restart = std::max(kRestart, 2 * w);
  const bool var = sp.op == MovingOp::Var || sp.op == MovingOp::Std;
  U s1[kLanes], s2[kLanes];
  double K[kLanes];
  int64_t cnt[kLanes], nanc[kLanes], pinf[kLanes], ninf[kLanes];
  for (int64_t i0 = 0; i0 < in.inner; i0 += kLanes) {
    const int64_t n = std::min(kLanes, in.inner - i0);
    auto add = [&](int64_t p, int64_t sign) {
      const A* row = in.row(p);
      if (!row) return;
      row += i0;
      if constexpr (kFloat) {
        const double sg = static_cast<double>(sign);
        for (int64_t l = 0; l < n; ++l) {
          const double v = static_cast<double>(row[l]);
          const bool fin = std::isfinite(v);
          const double d = fin ? v - K[l] : 0.0;
          s1[l] += sg * d;
          s2[l] += sg * d * d;
          cnt[l] += sign * (v == v);
          nanc[l] += sign * (v != v);
          pinf[l] += sign * (v == kInf);
          ninf[l] += sign * (v == -kInf);
        }
      } else {
        for (int64_t l = 0; l < n; ++l) {
          s1[l] = sign > 0 ? s1[l] + static_cast<U>(row[l]) : s1[l] - static_cast<U>(row[l]);
          cnt[l] += sign;
        }
      }
    };
    for (int64_t j = 0; j < L; ++j) {
      if (j % restart == 0) {
        for (int64_t l = 0; l < n; ++l) s1[l] = s2[l] = 0, K[l] = 0, cnt[l] = nanc[l] = pinf[l] = ninf[l] = 0;
        if constexpr (kFloat) {
          if (var) {  // shift by the window's first finite value: small sums, little cancellation
            std::fill(K, K + n, kNaN);
            for (int64_t p = j; p < j + w; ++p)
              if (const A* row = in.row(p))
                for (int64_t l = 0; l < n; ++l)
                  if (K[l] != K[l] && std::isfinite(static_cast<double>(row[i0 + l])))
                    K[l] = static_cast<double>(row[i0 + l]);
            for (int64_t l = 0; l < n; ++l)
              if (K[l] != K[l]) K[l] = 0;
          }
        }
        for (int64_t p = j; p < j + w - 1; ++p) add(p, 1);
      }
      add(j + w - 1, 1);
      R* out = res + j * in.inner + i0;
      for (int64_t l = 0; l < n; ++l) {
        const int64_t c = cnt[l];
        if constexpr (std::is_floating_point_v<R>) {
          double v;
          if ((!sp.skipna && nanc[l] > 0) || c < sp.min_count) {
            v = kNaN;
          } else if (sp.op == MovingOp::Count) {
            v = static_cast<double>(c);
          } else if (var) {
            const double dof = static_cast<double>(c) - sp.ddof;
            if (dof <= 0 || pinf[l] || ninf[l]) {
              v = kNaN;
            } else {
              // (m2 at the rounding of s2 or below is rounding left by values gone from
              // the window: a window of equal values, or of one, has exactly 0, as NumPy's)
              const double a = static_cast<double>(s1[l]), b = static_cast<double>(s2[l]);
              double m2 = b - a * a / static_cast<double>(c);
              if (c == 1 || m2 <= 1e-12 * b) m2 = 0;
              v = sp.op == MovingOp::Std ? std::sqrt(m2 / dof) : m2 / dof;
            }
          } else {
            double s = kFloat ? static_cast<double>(s1[l]) : static_cast<double>(static_cast<A>(s1[l]));
            if (pinf[l] && ninf[l]) s = kNaN;
            else if (pinf[l]) s = kInf;
            else if (ninf[l]) s = -kInf;
            v = sp.op == MovingOp::Mean ? (c > 0 ? s / static_cast<double>(c) : kNaN) : s;
          }
          out[l] = static_cast<R>(v);
        } else {  // integer results: sums and counts of integers over whole windows
          out[l] = sp.op == MovingOp::Count ? static_cast<R>(c) : static_cast<R>(static_cast<A>(s1[l]));
        }
      }
      add(j, -1);
    }
  }
}

// Min and max by van Herk / Gil-Werman: over blocks of w positions, g holds each block's
// running extreme from its start, h from its end; window [j, j + w) = h[j] with g[j + w - 1].
// Positions outside the axis and skipped NaNs hold the identity; prefix counts of valid
// values and of NaNs decide NaN results.
template <class A, class R>
void van_herk(const MovingSpec& sp, const Rows<A>& in, int64_t L, R* res, Scratch& scratch) {
  ScratchScope scope(scratch);  // (released after each strip)
  constexpr bool kFloat = std::is_floating_point_v<A>;
  const bool is_max = sp.op == MovingOp::Max;
  const int64_t w = sp.window, P = L + w - 1;
  const A ident = is_max ? (kFloat ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest())
                         : (kFloat ? std::numeric_limits<A>::infinity() : std::numeric_limits<A>::max());
  const int64_t S = std::clamp<int64_t>(kStripBytes / std::max<int64_t>(1, P * 32), 1, std::max<int64_t>(1, in.inner));
  A* g = scope.alloc_n<A>(static_cast<size_t>(P * S));
  A* h = scope.alloc_n<A>(static_cast<size_t>(P * S));
  int64_t* cv = scope.alloc_n<int64_t>(static_cast<size_t>((P + 1) * S));
  int64_t* cn = scope.alloc_n<int64_t>(static_cast<size_t>((P + 1) * S));
  auto pick = [is_max](A a, A b) { return is_max ? (a < b ? b : a) : (b < a ? b : a); };
  for (int64_t i0 = 0; i0 < in.inner; i0 += S) {
    const int64_t n = std::min(S, in.inner - i0);
    std::fill(cv, cv + n, 0);
    std::fill(cn, cn + n, 0);
    for (int64_t p = 0; p < P; ++p) {
      const A* row = in.row(p);
      A* gp = g + p * S;
      const A* gq = g + (p - 1) * S;
      int64_t *v1 = cv + (p + 1) * S, *v0 = cv + p * S, *n1 = cn + (p + 1) * S, *n0 = cn + p * S;
      const bool first = p % w == 0;
      for (int64_t l = 0; l < n; ++l) {
        A v = ident;
        bool valid = false, nan = false;
        if (row) {
          v = row[i0 + l];
          nan = v != v;
          valid = !nan;
          if (nan) v = ident;
        }
        v1[l] = v0[l] + valid;
        n1[l] = n0[l] + nan;
        gp[l] = first ? v : pick(gq[l], v);
      }
    }
    for (int64_t p = P - 1; p >= 0; --p) {
      const A* row = in.row(p);
      A* hp = h + p * S;
      const A* hq = h + (p + 1) * S;
      const bool last = p % w == w - 1 || p == P - 1;
      for (int64_t l = 0; l < n; ++l) {
        A v = row ? row[i0 + l] : ident;
        if (v != v) v = ident;
        hp[l] = last ? v : pick(hq[l], v);
      }
    }
    for (int64_t j = 0; j < L; ++j) {
      R* out = res + j * in.inner + i0;
      const A* hj = h + j * S;
      const A* gj = g + (j + w - 1) * S;
      const int64_t *v1 = cv + (j + w) * S, *v0 = cv + j * S, *n1 = cn + (j + w) * S, *n0 = cn + j * S;
      for (int64_t l = 0; l < n; ++l) {
        const int64_t c = v1[l] - v0[l];
        const bool bad = (!sp.skipna && n1[l] - n0[l] > 0) || c < std::max<int64_t>(1, sp.min_count);
        if constexpr (std::is_floating_point_v<R>)
          out[l] = bad ? static_cast<R>(kNaN) : static_cast<R>(pick(hj[l], gj[l]));
        else out[l] = static_cast<R>(pick(hj[l], gj[l]));
      }
    }
  }
}

// Strips of lanes: each converted to A (lin rows of n lanes, contiguous), reduced into
// R, and the results cast into `out` — memory per strip, never per region.
struct Block {
  const char* raw;  // the pulled input: outer x lin x inner, dtype `in`
  DType in;
  int64_t outer, lin, pin0, inner, L;
  char* out;  // outer x L x inner, dtype `out`
  DType out_dtype;
};

template <class A, class R> void run(const MovingSpec& sp, DType acc, DType rt, const Block& b, Scratch& scratch) {
  ScratchScope scope(scratch);
  const int64_t P = b.L + sp.window - 1;
  const int64_t per_lane = (b.lin + b.L) * 8 + (sp.op == MovingOp::Min || sp.op == MovingOp::Max ? P * 32 : 0);
  const int64_t S = std::clamp<int64_t>(kStripBytes / std::max<int64_t>(1, per_lane), 1, std::max<int64_t>(1, b.inner));
  A* xa = scope.alloc_n<A>(static_cast<size_t>(std::max<int64_t>(1, b.lin * S)));
  R* ra = scope.alloc_n<R>(static_cast<size_t>(std::max<int64_t>(1, b.L * S)));
  const size_t isz = itemsize(b.in), osz = itemsize(b.out_dtype);
  const kernels::BlockFn to_acc = b.in == acc ? nullptr : kernels::lookup_cast(b.in, acc);
  const kernels::BlockFn to_out = rt == b.out_dtype ? nullptr : kernels::lookup_cast(rt, b.out_dtype);
  for (int64_t o = 0; o < b.outer; ++o)
    for (int64_t i0 = 0; i0 < b.inner; i0 += S) {
      const int64_t n = std::min(S, b.inner - i0);
      for (int64_t r = 0; r < b.lin; ++r) {
        const char* src = b.raw + ((o * b.lin + r) * b.inner + i0) * static_cast<int64_t>(isz);
        if (to_acc) {
          const void* in[1] = {src};
          to_acc(xa + r * n, in, n);
        } else {
          std::memcpy(xa + r * n, src, static_cast<size_t>(n) * sizeof(A));
        }
      }
      const Rows<A> rows{xa, b.lin, b.pin0, n};
      if (sp.op == MovingOp::Min || sp.op == MovingOp::Max) van_herk<A, R>(sp, rows, b.L, ra, scratch);
      else slide_sums<A, R>(sp, rows, b.L, ra);
      for (int64_t j = 0; j < b.L; ++j) {
        char* dst = b.out + ((o * b.L + j) * b.inner + i0) * static_cast<int64_t>(osz);
        if (to_out) {
          const void* in[1] = {ra + j * n};
          to_out(dst, in, n);
        } else {
          std::memcpy(dst, ra + j * n, static_cast<size_t>(n) * sizeof(R));
        }
      }
    }
}

const char* op_word(MovingOp op) { return moving_op_name(op); }

// The stored source under `input` through elementwise nodes and pads (xarray pads the
// data, or its notnull mask, before taking windows), or nullptr.
const Node* stored_under(const NodePtr& input) {
  const Node* n = input.get();
  for (int depth = 0; n && depth < 32; ++depth) {
    if (n->storage_grid()) return n;
    if (n->inputs().empty() || !(n->is_elementwise() || n->kind() == "pad")) return nullptr;
    const Node* next = nullptr;
    for (const NodePtr& in : n->inputs())
      if (in->ndim() == n->ndim() && in->size() > 1) {
        next = in.get();
        break;
      }
    n = next;
  }
  return nullptr;
}

// Output chunks: the storage's; along the axis, when a pull decompresses whole chunks
// there (Zarr), two chunks deep (or more for a window longer than a chunk), so the halo's
// extra chunk is a smaller part of each region's reads: 1.5x the data decompressed, not 2x
// (ERA t, window 8: 2.0 s against 2.7 s). Not deeper: four deep (1.25x) ran no faster and
// xarray's rolling mean, three moving sums, held 1.8x the memory (327 -> 588 MiB written).
// At most kMaxChunkBytes of float64 per chunk.
constexpr int64_t kMaxChunkBytes = int64_t(32) << 20;
Shape moving_chunks(const NodePtr& input, const MovingSpec& sp, const Shape& shape) {
  Shape c = preferred_chunks_of(input);
  const Node* src = stored_under(input);
  if (!src || src->ndim() != shape.size()) return c.size() == shape.size() ? c : Shape{};
  c = src->storage_grid()->chunks();
  const size_t k = static_cast<size_t>(sp.axis);
  const int64_t depth = read_unit(*src)[k];
  if (depth > 1 && sp.window > 1) {
    int64_t units = std::max<int64_t>(2, ceil_div(2 * (sp.window - 1), depth));
    const int64_t cross = std::max<int64_t>(1, prod(c) / std::max<int64_t>(1, c[k]));
    while (units > 1 && units * depth * cross * 8 > kMaxChunkBytes) --units;
    c[k] = units * depth;
  }
  for (size_t d = 0; d < c.size(); ++d) c[d] = std::max<int64_t>(1, std::min(c[d], shape[d]));
  return c;
}

}  // namespace

MovingNode::MovingNode(NodePtr input, const MovingSpec& spec, DType out)
    : Node(out,
           [&] {
             Shape s = input->shape();
             s[static_cast<size_t>(spec.axis)] = spec.length;
             return s;
           }(),
           {input}),
      spec_(spec) {
  const DType in = inputs()[0]->dtype();
  const bool float_math = !is_integral(in) && in != DType::Bool;
  if (float_math || spec.op == MovingOp::Var || spec.op == MovingOp::Std) acc_ = DType::F64;
  else acc_ = b2lazy::kind(in) == DKind::Unsigned ? DType::U64 : DType::I64;
  preferred_ = moving_chunks(inputs()[0], spec_, shape());
}

std::string MovingNode::describe() const {
  return std::string("moving ") + op_word(spec_.op) + (spec_.skipna ? " (skipna)" : "") + " axis " +
         std::to_string(spec_.axis) + " window " + std::to_string(spec_.window) + " offset " +
         std::to_string(spec_.offset) + " min_count " + std::to_string(spec_.min_count) + " " +
         shape_str(inputs()[0]->shape()) + " -> " + shape_str(shape());
}

Region MovingNode::input_region(const Region& u) const {
  const size_t k = static_cast<size_t>(spec_.axis);
  const int64_t n = inputs()[0]->shape()[k];
  const int64_t e0 = u.start[k] + spec_.offset, e1 = e0 + u.count[k] + spec_.window - 1;
  const int64_t q0 = std::clamp<int64_t>(e0, 0, n), q1 = std::clamp<int64_t>(e1, 0, n);
  Region in = u;
  in.start[k] = q0;
  in.step[k] = 1;
  in.count[k] = std::max<int64_t>(0, q1 - q0);
  return in;
}

std::vector<Region> MovingNode::input_regions(const Region& region) const {
  if (region.size() == 0) return {};
  return {input_region(unit_along(region, spec_.axis))};
}

int64_t MovingNode::fill_bytes(const Region& region, const MemoryModel& m) const {
  if (region.size() == 0) return 0;
  const Region u = unit_along(region, spec_.axis);
  const Region in = input_region(u);
  const DType t = inputs()[0]->dtype();
  // The pulled block, a strided region's dense copy, one strip's scratch (at most about
  // kStripBytes beyond one lane's rows), and what the pull holds below.
  const int64_t dense =
      region.step[static_cast<size_t>(spec_.axis)] == 1 ? 0 : u.size() * static_cast<int64_t>(itemsize(dtype()));
  const int64_t lane =
      (in.count[static_cast<size_t>(spec_.axis)] + u.count[static_cast<size_t>(spec_.axis)] + spec_.window) * 40;
  return in.size() * static_cast<int64_t>(itemsize(t)) + dense + kStripBytes + lane + m.pull_bytes(*inputs()[0], in);
}

void MovingNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const size_t k = static_cast<size_t>(spec_.axis), isz = itemsize(dtype());
  if (region.step[k] == 1) return fill_unit(region, out, ts);
  const Region u = unit_along(region, spec_.axis);
  ScratchScope scope(ts.scratch);
  char* dense = static_cast<char*>(scope.alloc(static_cast<size_t>(u.size()) * isz));
  fill_unit(u, dense, ts);
  pick_along(region, u, spec_.axis, dense, out, isz);
}

void MovingNode::fill_unit(const Region& u, void* out, ThreadState& ts) const {
  const size_t k = static_cast<size_t>(spec_.axis);
  const Region in = input_region(u);
  const DType t = inputs()[0]->dtype();
  ScratchScope scope(ts.scratch);
  const int64_t m = in.size();
  void* raw = scope.alloc(static_cast<size_t>(std::max<int64_t>(m, 1)) * itemsize(t));
  if (m) inputs()[0]->pull(in, raw, ts);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < u.ndim(); ++d) {
    if (d < k) outer *= u.count[d];
    else if (d > k) inner *= u.count[d];
  }
  const int64_t L = u.count[k], lin = in.count[k], pin0 = in.start[k] - (u.start[k] + spec_.offset);
  const DType rt = is_inexact(dtype()) ? DType::F64 : acc_;
  const Block b{static_cast<const char*>(raw), t, outer, lin, pin0, inner, L, static_cast<char*>(out), dtype()};
  if (acc_ == DType::F64) run<double, double>(spec_, acc_, rt, b, ts.scratch);
  else if (acc_ == DType::I64)
    rt == DType::F64 ? run<int64_t, double>(spec_, acc_, rt, b, ts.scratch)
                     : run<int64_t, int64_t>(spec_, acc_, rt, b, ts.scratch);
  else
    rt == DType::F64 ? run<uint64_t, double>(spec_, acc_, rt, b, ts.scratch)
                     : run<uint64_t, uint64_t>(spec_, acc_, rt, b, ts.scratch);
}

}  // namespace b2lazy
