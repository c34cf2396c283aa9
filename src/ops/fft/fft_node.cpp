#include "ops/fft/fft_node.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <map>
#include <mutex>
#include <numbers>
#include <stdexcept>
#include <tuple>
#include <type_traits>

#include "b2lazy/error.hpp"
#include "core/saturating.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {

// FFTW's two libraries (libfftw3, libfftw3f) behind one name per precision.
template <class R> struct Fftw;

template <> struct Fftw<double> {
  using Plan = fftw_plan;
  using C = fftw_complex;
  using Dim = fftw_iodim64;
  static Plan c2c(int rank, const Dim* d, int hr, const Dim* hd, void* in, void* out, int sign) {
    return fftw_plan_guru64_dft(rank, d, hr, hd, static_cast<C*>(in), static_cast<C*>(out), sign, FFTW_ESTIMATE);
  }
  static Plan r2c(int rank, const Dim* d, int hr, const Dim* hd, void* in, void* out) {
    return fftw_plan_guru64_dft_r2c(rank, d, hr, hd, static_cast<double*>(in), static_cast<C*>(out), FFTW_ESTIMATE);
  }
  static Plan c2r(int rank, const Dim* d, int hr, const Dim* hd, void* in, void* out) {
    return fftw_plan_guru64_dft_c2r(rank, d, hr, hd, static_cast<C*>(in), static_cast<double*>(out), FFTW_ESTIMATE);
  }
  static void run_c2c(Plan p, void* in, void* out) { fftw_execute_dft(p, static_cast<C*>(in), static_cast<C*>(out)); }
  static void run_r2c(Plan p, void* in, void* out) {
    fftw_execute_dft_r2c(p, static_cast<double*>(in), static_cast<C*>(out));
  }
  static void run_c2r(Plan p, void* in, void* out) {
    fftw_execute_dft_c2r(p, static_cast<C*>(in), static_cast<double*>(out));
  }
  static int alignment(void* p) { return fftw_alignment_of(static_cast<double*>(p)); }
};

template <> struct Fftw<float> {
  using Plan = fftwf_plan;
  using C = fftwf_complex;
  using Dim = fftwf_iodim64;
  static Plan c2c(int rank, const Dim* d, int hr, const Dim* hd, void* in, void* out, int sign) {
    return fftwf_plan_guru64_dft(rank, d, hr, hd, static_cast<C*>(in), static_cast<C*>(out), sign, FFTW_ESTIMATE);
  }
  static Plan r2c(int rank, const Dim* d, int hr, const Dim* hd, void* in, void* out) {
    return fftwf_plan_guru64_dft_r2c(rank, d, hr, hd, static_cast<float*>(in), static_cast<C*>(out), FFTW_ESTIMATE);
  }
  static Plan c2r(int rank, const Dim* d, int hr, const Dim* hd, void* in, void* out) {
    return fftwf_plan_guru64_dft_c2r(rank, d, hr, hd, static_cast<C*>(in), static_cast<float*>(out), FFTW_ESTIMATE);
  }
  static void run_c2c(Plan p, void* in, void* out) { fftwf_execute_dft(p, static_cast<C*>(in), static_cast<C*>(out)); }
  static void run_r2c(Plan p, void* in, void* out) {
    fftwf_execute_dft_r2c(p, static_cast<float*>(in), static_cast<C*>(out));
  }
  static void run_c2r(Plan p, void* in, void* out) {
    fftwf_execute_dft_c2r(p, static_cast<C*>(in), static_cast<float*>(out));
  }
  static int alignment(void* p) { return fftwf_alignment_of(static_cast<float*>(p)); }
};

// FFTW's planner is not thread-safe (its execution of an existing plan is, on new arrays
// through the fftw_execute_dft family): plans are made under this mutex and kept for the
// process, one per transform, layout and alignment of the arrays (the new-array interface
// wants the alignment the plan was made with). FFTW_ESTIMATE: planning reads no data.
// The table is never destroyed: a static map's destructor would run at exit while a worker
// may still be transforming, and would leave FFTW's plans unreachable (a leak report).
using PlanKey = std::tuple<int, int, int, int64_t, int64_t, int64_t, int64_t, int64_t, int, int>;
std::mutex g_plan_mutex;
std::map<PlanKey, void*>& plans() {
  static auto* table = new std::map<PlanKey, void*>;
  return *table;
}

// A batch of lanes: `outer` blocks of `inner` interleaved lanes, the input's blocks
// `idist` elements apart and the output's `odist`, a lane's elements `inner` apart.
struct Batch {
  int64_t n, outer, inner, idist, odist;
};

template <class R> void transform(FftKind kind, bool inverse, const Batch& b, void* in, void* out) {
  using F = Fftw<R>;
  const PlanKey key{std::is_same_v<R, float> ? 0 : 1,
                    static_cast<int>(kind),
                    inverse ? 1 : 0,
                    b.n,
                    b.outer,
                    b.inner,
                    b.idist,
                    b.odist,
                    F::alignment(in),
                    F::alignment(out)};
  typename F::Plan plan = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_plan_mutex);
    auto it = plans().find(key);
    if (it != plans().end()) {
      plan = static_cast<typename F::Plan>(it->second);
    } else {
      typename F::Dim dim{b.n, b.inner, b.inner};
      typename F::Dim many[2] = {{b.outer, b.idist, b.odist}, {b.inner, 1, 1}};
      switch (kind) {
        case FftKind::C2C: plan = F::c2c(1, &dim, 2, many, in, out, inverse ? FFTW_BACKWARD : FFTW_FORWARD); break;
        case FftKind::R2C: plan = F::r2c(1, &dim, 2, many, in, out); break;
        case FftKind::C2R: plan = F::c2r(1, &dim, 2, many, in, out); break;
      }
      if (!plan) throw std::runtime_error("FFTW could not plan a transform of length " + std::to_string(b.n));
      plans().emplace(key, static_cast<void*>(plan));
    }
  }
  switch (kind) {
    case FftKind::C2C: F::run_c2c(plan, in, out); break;
    case FftKind::R2C: F::run_r2c(plan, in, out); break;
    case FftKind::C2R: F::run_c2r(plan, in, out); break;
  }
}

}  // namespace

FftNode::FftNode(NodePtr input, int axis, FftKind kind, int64_t n, bool inverse, double scale)
    : Node(output_dtype(input->dtype(), kind),
           [&] {
             Shape s = input->shape();
             s[static_cast<size_t>(axis)] = kind == FftKind::R2C ? n / 2 + 1 : n;
             return s;
           }(),
           {input}),
      axis_(axis),
      kind_(kind),
      n_(n),
      inverse_(inverse),
      scale_(scale) {
  const DType t = inputs()[0]->dtype();
  const bool want_complex = kind != FftKind::R2C;
  if ((want_complex && t != DType::C64 && t != DType::C128) || (!want_complex && t != DType::F32 && t != DType::F64))
    throw std::logic_error("FftNode: input dtype " + std::string(dtype_name(t)) + " (a builder must cast it)");
  if (n < 1) throw std::logic_error("FftNode: length " + std::to_string(n));
}

DType FftNode::output_dtype(DType input, FftKind kind) {
  const bool single = input == DType::F32 || input == DType::C64;
  if (kind == FftKind::C2R) return single ? DType::F32 : DType::F64;
  return single ? DType::C64 : DType::C128;
}

std::string FftNode::kind() const {
  switch (kind_) {
    case FftKind::C2C: return inverse_ ? "ifft" : "fft";
    case FftKind::R2C: return "rfft";
    case FftKind::C2R: return "irfft";
  }
  return "fft";
}

std::string FftNode::describe() const {
  std::string s = kind() + " axis=" + std::to_string(axis_) + " n=" + std::to_string(n_);
  if (scale_ != 1) s += " scale=" + std::to_string(scale_);
  return s + " -> " + std::string(dtype_name(dtype())) + " " + shape_str(shape());
}

std::vector<Region> FftNode::input_regions(const Region& region) const {
  Region in = region;
  const auto a = static_cast<size_t>(axis_);
  in.start[a] = 0;
  in.step[a] = 1;
  in.count[a] = region.size() ? std::min(lane_in(), inputs()[0]->shape()[a]) : 0;
  return {in};
}

Region FftNode::computed_region(const Region& region) const {
  Region r = region;
  const auto a = static_cast<size_t>(axis_);
  r.start[a] = 0;
  r.step[a] = 1;
  r.count[a] = region.size() ? shape()[a] : 0;
  return r;
}

// Whole along the axis, the other axes cut from the input's chunks so that a chunk stays
// near `bytes` (at least one lane).
Shape FftNode::lane_chunks(int64_t bytes) const {
  Shape c = inputs()[0]->preferred_chunks();
  if (c.size() != shape().size()) c = shape();
  const auto a = static_cast<size_t>(axis_);
  c[a] = std::max<int64_t>(1, shape()[a]);
  const int64_t item = static_cast<int64_t>(std::max(itemsize(dtype()), itemsize(inputs()[0]->dtype())));
  const int64_t most = std::max<int64_t>(1, bytes / item);
  for (size_t d = 0; d < c.size(); ++d) c[d] = std::max<int64_t>(1, std::min(c[d], std::max<int64_t>(1, shape()[d])));
  for (size_t d = 0; d < c.size() && prod(c) > most; ++d)
    if (d != a) c[d] = std::max<int64_t>(1, c[d] / std::max<int64_t>(1, prod(c) / most));
  return c;
}

Shape FftNode::preferred_chunks() const { return lane_chunks(int64_t(8) << 20); }

// A kept stage's chunks: whole lanes, a quarter of `most` bytes when a lane fits that (a fill
// holds its input and its output lanes and what its pull holds below).
Shape FftNode::kept_chunks(const Shape&, size_t, size_t most) const {
  return lane_chunks(std::min<int64_t>(int64_t(8) << 20, static_cast<int64_t>(most) / 4));
}

// The pulled lanes, a padded copy when they are shorter than the transform reads, the
// transformed lanes when the region takes part of them, and what the pull holds below.
int64_t FftNode::fill_bytes(const Region& region, const MemoryModel& m) const {
  if (region.size() == 0) return 0;
  const Region in = input_regions(region)[0];
  const auto a = static_cast<size_t>(axis_);
  const int64_t lanes = in.count[a] ? in.size() / in.count[a] : 0;
  const int64_t in_item = static_cast<int64_t>(itemsize(inputs()[0]->dtype()));
  int64_t held = MemoryModel::region_bytes(*inputs()[0], in);
  if (in.count[a] < lane_in()) held = sat_add(held, sat_mul(sat_mul(lanes, lane_in()), in_item));
  const bool whole = region.start[a] == 0 && region.step[a] == 1 && region.count[a] == shape()[a];
  if (!whole) held = sat_add(held, sat_mul(sat_mul(lanes, shape()[a]), static_cast<int64_t>(itemsize(dtype()))));
  return sat_add(held, m.pull_bytes(*inputs()[0], in));
}

void FftNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const Node& in = *inputs()[0];
  const auto a = static_cast<size_t>(axis_);
  const Region ir = input_regions(region)[0];
  const size_t isz = itemsize(in.dtype()), osz = itemsize(dtype());
  ScratchScope scope(ts.scratch);
  char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(ir.size()) * isz));
  in.pull(ir, buf, ts);
  int64_t inner = 1, outer = 1;
  for (size_t d = a + 1; d < ndim(); ++d) inner *= region.count[d];
  for (size_t d = 0; d < a; ++d) outer *= region.count[d];
  const int64_t have = ir.count[a], len = lane_in(), m = shape()[a];
  // Lanes shorter than the transform reads: padded with zeros.
  char* src = buf;
  if (have < len) {
    src = static_cast<char*>(scope.alloc(static_cast<size_t>(outer * len * inner) * isz));
    const size_t part = static_cast<size_t>(have * inner) * isz, rest = static_cast<size_t>((len - have) * inner) * isz;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(src + static_cast<size_t>(o * len * inner) * isz, buf + static_cast<size_t>(o) * part, part);
      std::memset(src + static_cast<size_t>(o * len * inner) * isz + part, 0, rest);
    }
  }
  const bool whole = region.start[a] == 0 && region.step[a] == 1 && region.count[a] == m;
  char* dst =
      whole ? static_cast<char*>(out) : static_cast<char*>(scope.alloc(static_cast<size_t>(outer * m * inner) * osz));
  const Batch b{n_, outer, inner, len * inner, m * inner};
  const bool single = dtype() == DType::C64 || dtype() == DType::F32;
  auto run = [&]<class R>(R*) {
    if (kind_ == FftKind::C2R) {
      // The imaginary parts of the zero frequency (and of n / 2, for an even n) do not
      // contribute to a real result: set to zero, as NumPy ignores them.
      auto* c = reinterpret_cast<std::complex<R>*>(src);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          c[o * len * inner + i].imag(0);
          if (n_ % 2 == 0 && n_ / 2 < len) c[o * len * inner + (n_ / 2) * inner + i].imag(0);
        }
    }
    transform<R>(kind_, inverse_, b, src, dst);
    // scaled, only the part the region takes when it takes part
    const int64_t comps = is_complex(dtype()) ? 2 : 1;
    R* v = reinterpret_cast<R*>(dst);
    const R s = static_cast<R>(scale_);
    if (whole) {
      if (scale_ != 1)
        for (int64_t k = 0, e = outer * m * inner * comps; k < e; ++k) v[k] *= s;
      return;
    }
    const int64_t cnt = region.count[a], first = region.start[a], step = region.step[a];
    R* o_ = static_cast<R*>(out);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < cnt; ++k) {
        const R* from = v + ((o * m + first + k * step) * inner) * comps;
        R* to = o_ + ((o * cnt + k) * inner) * comps;
        for (int64_t e = 0; e < inner * comps; ++e) to[e] = from[e] * s;
      }
  };
  if (single) run(static_cast<float*>(nullptr));
  else run(static_cast<double*>(nullptr));
}

TwiddleNode::TwiddleNode(DType dtype, int64_t rows, int64_t cols, int64_t n, bool inverse)
    : Node(dtype, {rows, cols}), n_(n), inverse_(inverse) {}

std::string TwiddleNode::describe() const {
  return "twiddle n=" + std::to_string(n_) + (inverse_ ? " inverse" : "") + " -> " + std::string(dtype_name(dtype())) +
         " " + shape_str(shape());
}

void TwiddleNode::fill(const Region& region, void* out, ThreadState&) const {
  if (region.size() == 0) return;
  const double sign = inverse_ ? 1.0 : -1.0;
  const double w = 2.0 * std::numbers::pi / static_cast<double>(n_);
  auto run = [&]<class R>(R*) {
    auto* o = static_cast<std::complex<R>*>(out);
    for (int64_t i = 0; i < region.count[0]; ++i) {
      const int64_t r = region.start[0] + i * region.step[0];
      for (int64_t j = 0; j < region.count[1]; ++j) {
        const int64_t c = region.start[1] + j * region.step[1];
        const auto rc = static_cast<int64_t>((static_cast<__int128>(r) * c) % n_);
        // the angle's smaller form (rc or rc - n): sin and cos of it are more accurate
        const double t = sign * w * static_cast<double>(2 * rc > n_ ? rc - n_ : rc);
        *o++ = std::complex<R>(static_cast<R>(std::cos(t)), static_cast<R>(std::sin(t)));
      }
    }
  };
  if (dtype() == DType::C64) run(static_cast<float*>(nullptr));
  else run(static_cast<double*>(nullptr));
}

}  // namespace b2lazy
