#include "ops/reduce/quantile_node.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "b2lazy/error.hpp"
#include "b2lazy/ops.hpp"
#include "core/dispatch.hpp"
#include "core/saturating.hpp"
#include "ops/reduce/accumulate.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kBins = 4096;  // per pass of the selection over a slice too large to hold

// NumPy's virtual index of quantile q among n values for `method`, and the interpolation
// between the values at floor and floor + 1 (numpy/lib/_function_base_impl.py: its
// methods' get_virtual_index, _lerp), so results match NumPy's to the last bit.
struct Position {
  int64_t lo = 0, hi = 0;  // ranks of the two values (equal: one value)
  double gamma = 0;
  bool interpolate = false;  // linear, midpoint: lerp(v[lo], v[hi], gamma) even when lo == hi,
                             // as NumPy's (an infinite v[lo] then gives NaN, as there)
};
Position position(int64_t n, double q, QuantileMethod m, bool median) {
  const double nd = static_cast<double>(n);
  Position p;
  if (median) {  // np.median: the middle value, or the mean of the middle two
    p.lo = (n - 1) / 2, p.hi = n / 2;
    return p;
  }
  auto clamp = [n](double i) { return std::clamp<int64_t>(static_cast<int64_t>(i), 0, n - 1); };
  switch (m) {
    case QuantileMethod::Lower: p.lo = p.hi = clamp(std::floor((nd - 1) * q)); return p;
    case QuantileMethod::Higher: p.lo = p.hi = clamp(std::ceil((nd - 1) * q)); return p;
    case QuantileMethod::Nearest: p.lo = p.hi = clamp(std::nearbyint((nd - 1) * q)); return p;  // half to even
    case QuantileMethod::Linear:
    case QuantileMethod::Midpoint: break;
  }
  const double vi =
      m == QuantileMethod::Midpoint ? 0.5 * (std::floor((nd - 1) * q) + std::ceil((nd - 1) * q)) : (nd - 1) * q;
  p.interpolate = true;
  double prev = std::floor(vi);
  if (vi >= nd - 1) {  // NumPy takes the last value twice, its gamma from index -1
    p.lo = p.hi = n - 1;
    prev = -1;
  } else if (vi < 0) {
    p.lo = p.hi = 0;
  } else {
    p.lo = static_cast<int64_t>(prev);
    p.hi = p.lo + 1;
  }
  p.gamma = vi - prev;
  if (m == QuantileMethod::Midpoint) p.gamma = std::fmod(vi, 1.0) == 0 ? 0.0 : 0.5;
  return p;
}

double lerp(double a, double b, double t) {
  const double d = b - a;
  return t >= 0.5 ? b - d * (1 - t) : a + d * t;
}

// How the pulled values of a piece lie: each output's slice already contiguous (the
// reduced axes, of more than one element, all after the kept ones), as a (slice, outputs)
// matrix (all before), or interleaved.
enum class SliceLayout { Contiguous, Transposed, Interleaved };

SliceLayout slice_layout(const Shape& count, const std::vector<bool>& reduced) {
  int first_red = static_cast<int>(count.size()), last_red = -1, first_kept = first_red, last_kept = -1;
  for (int d = 0; d < static_cast<int>(count.size()); ++d) {
    if (count[static_cast<size_t>(d)] <= 1) continue;
    if (reduced[static_cast<size_t>(d)]) first_red = std::min(first_red, d), last_red = d;
    else first_kept = std::min(first_kept, d), last_kept = d;
  }
  if (last_kept < first_red) return SliceLayout::Contiguous;
  if (last_red < first_kept) return SliceLayout::Transposed;
  return SliceLayout::Interleaved;
}

// dst (cols x rows) = src (rows x cols) transposed, in tiles that stay in L1: one value
// scattered at a time to `cols` slices far apart ran at a third of Dask's speed on an
// Intel Xeon (every store a different page).
template <class T> void transpose(const T* src, int64_t rows, int64_t cols, T* dst) {
  constexpr int64_t kTile = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = r0; r < r1; ++r) dst[c * rows + r] = src[r * cols + c];
    }
}

// The quantile of the values v[0, n) (reordered in place) into `out` (one value of
// `out_dtype`): the value itself when one rank is taken and the type is kept (int64
// values exactly), else the interpolation in float64; NaN when a value is NaN.
template <class T>
void quantile_of(T* v, int64_t n, double q, QuantileMethod m, bool median, bool skip_nan, DType in_dtype,
                 DType out_dtype, char* out) {
  auto put = [&](double r) {
    const void* src[1] = {&r};
    kernels::lookup_cast(DType::F64, out_dtype)(out, src, 1);
  };
  if (skip_nan)  // nan*: the slice's NaNs moved past its end and left out
    n = std::partition(v, v + n, [](const T& x) { return !accum::is_nan(x); }) - v;
  if (n == 0) return put(kNaN);
  for (int64_t i = 0; i < n; ++i)
    if (accum::is_nan(v[i])) return put(kNaN);
  const Position p = position(n, q, m, median);
  std::nth_element(v, v + p.lo, v + n);
  const T a = v[p.lo];
  if (p.hi == p.lo && !p.interpolate && out_dtype == in_dtype) {
    std::memcpy(out, &a, sizeof(T));
    return;
  }
  const double da = static_cast<double>(a);
  const double b = p.hi == p.lo ? da : static_cast<double>(*std::min_element(v + p.lo + 1, v + n));  // the next rank
  if (p.interpolate) return put(lerp(da, b, p.gamma));
  put(median ? (da + b) / 2 : da);  // np.median: the mean of the middle two
}

// Calls f(slab) for slabs of `in` of at most `most` elements (at least one innermost
// element line when that is more), C order: cut along the outermost axis longer than 1,
// and within one step of it recursively.
template <class F> void for_each_slab(const Region& in, int64_t most, F&& f) {
  if (in.size() <= most) return f(in);
  size_t d = 0;
  while (d < in.ndim() && in.count[d] == 1) ++d;
  if (d + 1 >= in.ndim()) {  // one axis left: cut it
    const int64_t step = std::max<int64_t>(1, most);
    for (int64_t i = 0; i < in.count[d]; i += step) {
      Region s = in;
      s.start[d] = in.start[d] + i * in.step[d];
      s.count[d] = std::min(step, in.count[d] - i);
      f(s);
    }
    return;
  }
  const int64_t per = in.size() / in.count[d];
  const int64_t rows = std::max<int64_t>(1, most / std::max<int64_t>(per, 1));
  for (int64_t i = 0; i < in.count[d]; i += rows) {
    Region s = in;
    s.start[d] = in.start[d] + i * in.step[d];
    s.count[d] = std::min(rows, in.count[d] - i);
    if (rows == 1) for_each_slab(s, most, f);
    else f(s);
  }
}

}  // namespace

QuantileMethod quantile_method(const std::string& name) {
  if (name == "linear") return QuantileMethod::Linear;
  if (name == "lower") return QuantileMethod::Lower;
  if (name == "higher") return QuantileMethod::Higher;
  if (name == "nearest") return QuantileMethod::Nearest;
  if (name == "midpoint") return QuantileMethod::Midpoint;
  throw ValueError("quantile: method '" + name + "' is not one of 'linear', 'lower', 'higher', 'nearest', 'midpoint'");
}

QuantileNode::QuantileNode(NodePtr input, double q, QuantileMethod method, bool median, std::vector<bool> reduced,
                           bool keepdims, DType out, bool skip_nan)
    : Node(out, ReducedAxes(input->shape(), reduced, keepdims).out_shape(), {input}),
      q_(q),
      method_(method),
      median_(median),
      skip_nan_(skip_nan),
      ax_(input->shape(), std::move(reduced), keepdims),
      slice_(ax_.count()) {}

std::string QuantileNode::describe() const {
  return std::string(skip_nan_ ? "nan" : "") +
         (median_ ? std::string("median(") : "quantile(q=" + std::to_string(q_) + ", ") + "axis=" + ax_.axes() +
         (ax_.keepdims ? ", keepdims" : "") + ") -> " + dtype_name(dtype()) + " " + shape_str(shape()) +
         "; pulls whole slices along the reduced axes, selects in each";
}

// A quarter of the worker's budget, between 1 MiB and 64 MiB: slices held beyond that
// make no selection faster (a piece of 64 MiB of slices is thousands of them at once),
// they only raise the peak (median(a, axis=0) of 2 GiB: 289 MiB at 128 MiB a worker).
size_t QuantileNode::share_of(size_t worker_bytes) {
  return std::clamp<size_t>(worker_bytes / 4, size_t(1) << 20, size_t(64) << 20);
}

size_t QuantileNode::share(size_t max_memory, int nworkers) {
  return share_of(max_memory / static_cast<size_t>(std::max(1, nworkers)));
}

// A slice's values are held twice: as pulled, and as float64 to select in.
int64_t QuantileNode::piece_outputs(size_t share) const {
  const int64_t per = sat_mul(slice_, static_cast<int64_t>(itemsize(inputs()[0]->dtype()) + sizeof(double)));
  return std::max<int64_t>(1, static_cast<int64_t>(share) / std::max<int64_t>(per, 1));
}

// Pieces along the region's outputs in C order (runs of whole rows of the last axes), each
// as many outputs as fit `share`: contiguous in the region's C order.
std::vector<Region> QuantileNode::output_pieces(const Region& region, size_t share) const {
  std::vector<Region> pieces;
  for_each_slab(region, piece_outputs(share), [&](const Region& p) { pieces.push_back(p); });
  return pieces;
}

std::vector<Region> QuantileNode::pull_pieces(const Region& region, size_t, size_t worker_bytes) const {
  const size_t sh = share_of(worker_bytes);
  if (region.size() <= 1) return {};  // (a slice selected in passes is read a few times over)
  std::vector<Region> in;
  for (const Region& p : output_pieces(region, sh)) in.push_back(widen(p));
  return in.size() > 1 ? in : std::vector<Region>{};
}

void QuantileNode::fill(const Region& region, void* out, ThreadState& ts) const {
  const int64_t nout = region.size();
  if (nout == 0) return;
  const size_t sh = share(ts.eval ? ts.eval->max_memory() : size_t(256) << 20, ts.eval ? ts.eval->workers() : 1);
  const std::vector<Region> pieces = output_pieces(region, sh);
  const size_t osz = itemsize(dtype());
  std::vector<int64_t> offset(pieces.size());
  const Shape cs = c_strides(region.count);
  for (size_t i = 0; i < pieces.size(); ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < region.ndim(); ++d)
      off += (pieces[i].start[d] - region.start[d]) / (region.step[d] ? region.step[d] : 1) * cs[d];
    offset[i] = off;
  }
  const bool in_passes =
      sat_mul(slice_, static_cast<int64_t>(itemsize(inputs()[0]->dtype()) + sizeof(double))) > static_cast<int64_t>(sh);
  auto run = [&](int64_t i, ThreadState& t) {
    const Region& p = pieces[static_cast<size_t>(i)];
    char* dst = static_cast<char*>(out) + offset[static_cast<size_t>(i)] * static_cast<int64_t>(osz);
    if (in_passes) {  // (one output per piece)
      const double r = select_in_passes(p, sh, t);
      const void* src[1] = {&r};
      kernels::lookup_cast(DType::F64, dtype())(dst, src, 1);
    } else {
      fill_piece(p, dst, t);
    }
  };
  if (ts.can_fork && ts.eval && ts.eval->workers() > 1 && pieces.size() > 1)
    ts.eval->parallel_for(static_cast<int64_t>(pieces.size()), [&](int64_t i, int, ThreadState& w) { run(i, w); });
  else
    for (size_t i = 0; i < pieces.size(); ++i) run(static_cast<int64_t>(i), ts);
}

void QuantileNode::fill_piece(const Region& piece, char* out, ThreadState& ts) const {
  const Node& input = *inputs()[0];
  const Region in = widen(piece);
  const int64_t n = piece.size(), m = in.size();
  const size_t isz = itemsize(input.dtype()), osz = itemsize(dtype());
  ScratchScope scope(ts.scratch);
  void* raw = scope.alloc(static_cast<size_t>(m) * isz);
  input.pull(in, raw, ts);
  dispatch_real(input.dtype(), "quantile", [&]<class T>(T*) {
    // Each output's slice gathered contiguously: slice k at v[k * slice_, (k + 1) * slice_).
    T* v = static_cast<T*>(raw);
    const SliceLayout layout = slice_layout(in.count, ax_.reduced);
    if (layout != SliceLayout::Contiguous) {
      v = static_cast<T*>(scope.alloc(static_cast<size_t>(m) * sizeof(T)));
      if (layout == SliceLayout::Transposed) {
        transpose(static_cast<const T*>(raw), slice_, n, v);
      } else {
        std::vector<int64_t> pos(static_cast<size_t>(n), 0);
        const Shape zero(in.ndim(), 0);
        accum::fold_indexed(static_cast<const T*>(raw), in.count, ax_.reduced, zero, 0,
                            [&](int64_t k, T x, int64_t) { v[k * slice_ + pos[static_cast<size_t>(k)]++] = x; });
      }
    }
    for (int64_t k = 0; k < n; ++k)
      quantile_of(v + k * slice_, slice_, q_, method_, median_, skip_nan_, input.dtype(), dtype(),
                  out + k * static_cast<int64_t>(osz));
  });
}

// Exact selection over a slice too large to hold: each pass over it (in slabs of the
// share) counts the values in question — those in [lo, hi] — into kBins bins between
// fixed edges, and keeps the bin of the wanted rank, until they fit the share and are
// selected directly. The edges are stored values, so a value falls in one bin in every
// pass. int64 / uint64 values beyond 2**53 are compared as float64.
double QuantileNode::select_in_passes(const Region& one, size_t sh, ThreadState& ts) const {
  const Node& input = *inputs()[0];
  const Region in = widen(one);
  const int64_t slab = std::max<int64_t>(1, static_cast<int64_t>(sh / 2 / itemsize(input.dtype())));
  auto each = [&](auto&& use) {  // use(value) for every value of the slice
    for_each_slab(in, slab, [&](const Region& s) {
      if (ts.eval) ts.eval->check_cancel();
      ScratchScope scope(ts.scratch);
      void* buf = scope.alloc(static_cast<size_t>(s.size()) * itemsize(input.dtype()));
      input.pull(s, buf, ts);
      dispatch_real(input.dtype(), "quantile", [&]<class T>(T*) {
        const T* x = static_cast<const T*>(buf);
        for (int64_t i = 0; i < s.size(); ++i) use(static_cast<double>(x[i]));
      });
    });
  };
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double lo = kInf, hi = -kInf;  // the finite values' range
  int64_t neg_inf = 0, pos_inf = 0, nans = 0;
  each([&](double x) {
    if (std::isnan(x)) ++nans;
    else if (x == -kInf) ++neg_inf;
    else if (x == kInf) ++pos_inf;
    else lo = std::min(lo, x), hi = std::max(hi, x);
  });
  if (nans && !skip_nan_) return kNaN;
  const int64_t n = slice_ - nans;  // the values ranked (nan*: NaNs left out)
  if (n == 0) return kNaN;
  const int64_t gather = std::max<int64_t>(1, static_cast<int64_t>(sh / 2 / sizeof(double)));
  // The value of rank r (0-based) among the slice's values.
  auto rank = [&](int64_t r) {
    if (r < neg_inf) return -kInf;
    if (r >= n - pos_inf) return kInf;
    double a = lo, b = hi;    // the values in question: a <= x <= b
    int64_t below = neg_inf;  // values under a
    int64_t count = n - neg_inf - pos_inf;
    while (true) {
      if (a == b) return a;
      if (count <= gather) {
        std::vector<double> v;
        v.reserve(static_cast<size_t>(count));
        each([&](double x) {
          if (x >= a && x <= b) v.push_back(x);
        });
        std::nth_element(v.begin(), v.begin() + (r - below), v.end());
        return v[static_cast<size_t>(r - below)];
      }
      std::vector<double> edges(kBins + 1);  // (as a(1 - t) + bt: b - a may overflow)
      for (int64_t j = 0; j <= kBins; ++j) {
        const double t = static_cast<double>(j) / kBins;
        edges[j] = std::clamp(a * (1 - t) + b * t, j ? edges[j - 1] : a, b);
      }
      edges[kBins] = b;
      std::vector<int64_t> hist(kBins, 0);
      each([&](double x) {
        if (!(x >= a && x <= b)) return;
        const auto j = std::upper_bound(edges.begin(), edges.end() - 1, x) - edges.begin() - 1;
        ++hist[static_cast<size_t>(std::clamp<int64_t>(j, 0, kBins - 1))];
      });
      int64_t j = 0;
      while (j < kBins - 1 && below + hist[j] <= r) below += hist[j++];
      // Bin j holds [edges[j], edges[j + 1]) (the last one b too).
      a = edges[j];
      b = j == kBins - 1 ? b : std::max(a, std::nextafter(edges[j + 1], -kInf));
      count = hist[j];
    }
  };
  const Position p = position(n, q_, method_, median_);
  const double a = rank(p.lo);
  const double b = p.hi == p.lo ? a : rank(p.hi);
  if (p.interpolate) return lerp(a, b, p.gamma);
  return median_ ? (a + b) / 2 : a;
}

int64_t QuantileNode::fill_bytes(const Region& region, const MemoryModel& m) const {
  if (region.size() == 0) return 0;
  const size_t sh = share(m.max_memory(), m.nworkers());
  const int64_t per = sat_mul(slice_, static_cast<int64_t>(itemsize(inputs()[0]->dtype()) + sizeof(double)));
  const int64_t n = std::min(region.size(), piece_outputs(sh));
  const int64_t held = std::min<int64_t>(sat_mul(per, n), static_cast<int64_t>(sh));  // one piece, or a pass's slab
  return region.size() > n ? m.spread(held) : held;
}

}  // namespace b2lazy
