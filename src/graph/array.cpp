// The public Array API: sources, constructors, evaluation and explain.
#include "b2lazy/array.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <sstream>
#include <unordered_set>

#include "b2lazy/checked.hpp"
#include "b2lazy/error.hpp"
#include "core/dispatch.hpp"
#include "core/float_to_int.hpp"
#include "core/scalar_value.hpp"
#include "graph/blosc2_lazyexpr.hpp"
#include "graph/run_compute.hpp"
#include "ops/elementwise/elementwise_node.hpp"
#include "ops/elementwise/program.hpp"
#include "plan/chunking.hpp"
#include "plan/layout.hpp"
#include "runtime/own_context.hpp"
#include "storage/b2nd_source.hpp"
#include "storage/blosc2_util.hpp"
#include "storage/buffer_source.hpp"

namespace b2lazy {

Array with_stats(Array a, Stats s) {
  a.stats_ = std::make_shared<const Stats>(std::move(s));
  return a;
}

namespace {

void check_shape(const Shape& shape, const char* what) {
  for (auto v : shape)
    if (v < 0) throw ValueError(std::string(what) + ": negative dimension in shape " + shape_str(shape));
}

}  // namespace

Array open(const std::string& urlpath, const StoreOptions& storage) {
  const Resolved r = resolve_url(urlpath, false, storage);
  if (r.store)
    return Array(r.member.empty() ? r.driver->open_in_store(r.store)
                                  : r.driver->open_member_in_store(r.store, r.member));
  NodePtr n = r.driver->open(r.path);
  // python-blosc2's saved LazyExpr (and LazyUDF...) is a b2nd frame of placeholder values.
  if (const auto* src = dynamic_cast<const B2ndSource*>(n.get()))
    if (auto o = src->persisted_object()) return open_blosc2_object(urlpath, r.path, *o, *n);
  return Array(std::move(n));
}

Array from_buffer(const void* data, DType dtype, const Shape& shape, const Shape& byte_strides,
                  std::shared_ptr<const void> owner, const std::string& name) {
  check_shape(shape, "from_buffer");
  return Array(std::make_shared<BufferSource>(data, dtype, shape, byte_strides, std::move(owner), name));
}

Array from_buffer_compressed(const void* data, DType dtype, const Shape& shape, const Shape& chunks_in,
                             const Shape& blocks_in, const CParams& cparams) {
  check_shape(shape, "asarray");
  Shape chunks = checked_chunks(shape, chunks_in, "asarray");
  if (chunks.empty()) chunks = balanced_chunks(shape, itemsize(dtype), size_t(4) << 20);
  Shape blocks = blocks_in.empty() ? balanced_chunks(chunks, itemsize(dtype), size_t(256) << 10) : blocks_in;
  ComputeOptions opts;
  opts.cparams = cparams;
  opts.chunks = chunks;
  opts.blocks = blocks;
  Array src = from_buffer(data, dtype, shape, {}, nullptr, "buffer");
  return src.compute(opts);
}

Array from_cframe(const void* cframe, int64_t len) { return Array(B2ndSource::from_cframe(cframe, len)); }

std::vector<uint8_t> to_cframe(const Array& a, Context* ctx) {
  std::vector<uint8_t> frame;
  if (a.node()->b2nd_frame(frame)) return frame;
  a.compute({}, ctx).node()->b2nd_frame(frame);  // (in memory: always b2nd)
  return frame;
}

Array scalar(Scalar v, std::optional<DType> dtype) { return full({}, v, dtype); }

Array full(const Shape& shape, Scalar value, std::optional<DType> dtype, const Shape& chunks) {
  check_shape(shape, "full");
  DType t = dtype                               ? *dtype
            : value.kind == ScalarKind::Complex ? DType::C128
            : value.kind == ScalarKind::Float   ? DType::F64
            : value.kind == ScalarKind::Int     ? DType::I64
                                                : DType::Bool;
  Shape c = checked_chunks(shape, chunks, "full");
  if (shape.empty()) {
    alignas(16) unsigned char buf[kMaxItemsize];
    dispatch(t, [&]<class T>(T*) {
      T v = t == DType::Bool ? static_cast<T>(scalar_value<bool>(value)) : scalar_value<T>(value);
      std::memcpy(buf, &v, sizeof(T));
    });
    return Array(std::make_shared<ConstantNode>(t, buf));
  }
  if (value.kind == ScalarKind::Complex && is_complex(t))  // a constant broadcast, bits kept
    return where(Scalar(true), value, full(shape, Scalar(0.0), t, c));
  if (value.kind != ScalarKind::Float && value.kind != ScalarKind::Complex && !is_inexact(t))
    return Array(std::make_shared<RangeNode>(t, shape, c, value.kind == ScalarKind::Bool ? (value.i != 0) : value.i,
                                             int64_t(0), "full"));
  const double v = t == DType::Bool ? scalar_value<bool>(value) : scalar_value<double>(value);
  return Array(std::make_shared<RangeNode>(t, shape, c, v, 0.0, "full"));
}

Array zeros(const Shape& shape, DType dtype, const Shape& chunks) {
  return full(shape, Scalar(int64_t(0)), dtype, chunks);
}
Array ones(const Shape& shape, DType dtype, const Shape& chunks) {
  return full(shape, Scalar(int64_t(1)), dtype, chunks);
}

Array arange(double start, double stop, double step, std::optional<DType> dtype, const Shape& shape_in,
             const Shape& chunks) {
  if (step == 0) throw ValueError("arange: step must not be zero");
  const double span = stop - start, q = span / step;
  if (std::isnan(q) || std::ceil(q) >= 9.2e18)  // (a cast to int64 would overflow)
    throw ValueError("arange: maximum allowed size exceeded (start " + std::to_string(start) + ", stop " +
                     std::to_string(stop) + ", step " + std::to_string(step) + ")");
  int64_t n = static_cast<int64_t>(std::ceil(q));
  // As NumPy: a quotient that underflows to 0 still holds one value when the span and
  // the step point the same way.
  if (q == 0.0 && span != 0.0 && std::signbit(span) == std::signbit(step)) n = 1;
  n = std::max<int64_t>(n, 0);
  Shape shape = shape_in.empty() ? Shape{n} : shape_in;
  if (prod(shape) != n)
    throw ValueError("arange: shape " + shape_str(shape) + " does not hold the " + std::to_string(n) + " values");
  bool integral = start == std::floor(start) && step == std::floor(step) && stop == std::floor(stop);
  DType t = dtype ? *dtype : (integral ? DType::I64 : DType::F64);
  Shape c = checked_chunks(shape, chunks, "arange");
  // Integer values are start + step * i: each must fit int64 (and so, NumPy's way, the first
  // and the last; the doubles here are exact integers below 2**63 in magnitude).
  const double last = start + step * static_cast<double>(std::max<int64_t>(n - 1, 0));
  if (!is_float(t) && integral && !(std::fabs(start) < 0x1p63 && std::fabs(step) < 0x1p63 && std::fabs(last) < 0x1p63))
    throw ValueError("arange: the values from " + std::to_string(start) + " to " + std::to_string(last) + " (step " +
                     std::to_string(step) + ") do not fit in int64");
  if (!is_float(t) && integral)
    return Array(
        std::make_shared<RangeNode>(t, shape, c, static_cast<int64_t>(start), static_cast<int64_t>(step), "arange"));
  return Array(std::make_shared<RangeNode>(t, shape, c, start, step, "arange"));
}

Array arange_int(int64_t start, int64_t stop, int64_t step, std::optional<DType> dtype, const Shape& shape_in,
                 const Shape& chunks) {
  if (step == 0) throw ValueError("arange: step must not be zero");
  const __int128 span = static_cast<__int128>(stop) - start;  // (exact: |span| < 2**64)
  __int128 n = 0;
  if ((span > 0 && step > 0) || (span < 0 && step < 0)) n = (span - (step > 0 ? 1 : -1)) / step + 1;
  const DType t = dtype.value_or(DType::I64);
  if (n * static_cast<__int128>(itemsize(t)) > INT64_MAX)  // (the values' bytes must fit int64 too)
    throw ValueError("arange: maximum allowed size exceeded (start " + std::to_string(start) + ", stop " +
                     std::to_string(stop) + ", step " + std::to_string(step) + ")");
  Shape shape = shape_in.empty() ? Shape{static_cast<int64_t>(n)} : shape_in;
  if (prod(shape) != n)
    throw ValueError("arange: shape " + shape_str(shape) + " does not hold the " +
                     std::to_string(static_cast<int64_t>(n)) + " values");
  Shape c = checked_chunks(shape, chunks, "arange");
  // The values lie between start and stop, so they fit int64 (step * i may not: the node
  // computes start + step * i modulo 2**64, which is exact then).
  if (is_float(t))
    return Array(
        std::make_shared<RangeNode>(t, shape, c, static_cast<double>(start), static_cast<double>(step), "arange"));
  return Array(std::make_shared<RangeNode>(t, shape, c, start, step, "arange"));
}

Array linspace(double start, double stop, int64_t num, bool endpoint, std::optional<DType> dtype, const Shape& shape_in,
               const Shape& chunks) {
  if (num < 0) throw ValueError("linspace: num must be non-negative, got " + std::to_string(num));
  Shape shape = shape_in.empty() ? Shape{num} : shape_in;
  if (prod(shape) != num)
    throw ValueError("linspace: shape " + shape_str(shape) + " does not hold the " + std::to_string(num) + " values");
  int64_t div = endpoint ? num - 1 : num;
  double step = div > 0 ? (stop - start) / static_cast<double>(div) : 0.0;
  DType t = dtype ? *dtype : DType::F64;
  Shape c = checked_chunks(shape, chunks, "linspace");
  return Array(std::make_shared<RangeNode>(t, shape, c, start, step, "linspace", endpoint && num > 1, stop));
}

Array Array::compute(const ComputeOptions& opts, Context* ctx) const {
  auto own = own_context(ctx);
  auto p = std::make_shared<const Plan>(make_plan(*this, opts, PlanTarget::Compressed, ctx));
  return run_compute(p, opts, *ctx);
}

Plan Array::plan(const ComputeOptions& opts, Context* ctx) const {
  return make_plan(*this, opts, PlanTarget::Compressed, ctx);
}

Stats Array::to_buffer(void* out, const EvalOptions& opts, Context* ctx) const {
  auto own = own_context(ctx);
  ComputeOptions o;
  static_cast<EvalOptions&>(o) = opts;
  const Plan p = make_plan(*this, o, PlanTarget::Dense, ctx);
  return execute(p, out, 0, static_cast<int64_t>(p.tasks.size()), opts, ctx);
}

Stats Array::to_buffer(void* out, Context* ctx, size_t max_memory) const {
  EvalOptions opts;
  opts.max_memory = max_memory;
  return to_buffer(out, opts, ctx);
}

std::vector<double> Array::to_vector(Context* ctx) const {
  std::vector<unsigned char> raw(static_cast<size_t>(size()) * itemsize(dtype()));
  to_buffer(raw.data(), ctx);
  std::vector<double> r(static_cast<size_t>(size()));
  dispatch(dtype(), [&]<class T>(T*) {
    const T* p = reinterpret_cast<const T*>(raw.data());
    for (size_t i = 0; i < r.size(); ++i) r[i] = real_double(p[i]);
  });
  return r;
}

std::string Array::explain(Context* ctx) const {
  auto own = own_context(ctx);
  if (plan_ && stats_) return plan_->to_string(stats_.get(), ctx->nthreads());  // a computed result, measured
  return make_plan(*this, ComputeOptions{}, PlanTarget::Compressed, ctx).to_string();
}

}  // namespace b2lazy
