// The words the API and the nodes share — scalars, index entries, reductions, quantile
// methods, pad modes, random keys, moving-window kinds, user-function types — without the
// Array they describe: nodes and drivers include this, never b2lazy/array.hpp
// (scripts/check_layers.py).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "b2lazy/box.hpp"
#include "b2lazy/dtype.hpp"

namespace b2lazy {

// A Python-like scalar: weakly typed when combined with an array (NEP 50).
struct Scalar {
  ScalarKind kind;
  double f = 0;
  int64_t i = 0;
  Scalar(double v) : kind(ScalarKind::Float), f(v) {}
  Scalar(int v) : kind(ScalarKind::Int), i(v) {}
  Scalar(int64_t v) : kind(ScalarKind::Int), i(v) {}
  Scalar(bool v) : kind(ScalarKind::Bool), i(v) {}
  // A Python complex: f is its real part, im its imaginary part.
  static Scalar complex(double re, double im) {
    Scalar s(re);
    s.kind = ScalarKind::Complex;
    s.im = im;
    return s;
  }
  double im = 0;
  // A Python int above INT64_MAX that fits uint64 (usable with uint64 arrays only).
  static Scalar uint64(uint64_t v) {
    Scalar s(static_cast<int64_t>(v));
    s.above_int64 = v > static_cast<uint64_t>(INT64_MAX);
    return s;
  }
  bool above_int64 = false;
};

// One entry of a basic index: integer, slice (any step), ..., or None (new axis).
struct Index {
  enum class Kind { Int, Slice, Ellipsis, NewAxis } kind = Kind::Slice;
  int64_t i = 0;
  std::optional<int64_t> start, stop, step;
  static Index at(int64_t i) { return {Kind::Int, i, {}, {}, {}}; }
  static Index slice(std::optional<int64_t> start = {}, std::optional<int64_t> stop = {},
                     std::optional<int64_t> step = {}) {
    return {Kind::Slice, 0, start, stop, step};
  }
  static Index ellipsis() { return {Kind::Ellipsis, 0, {}, {}, {}}; }
  static Index newaxis() { return {Kind::NewAxis, 0, {}, {}, {}}; }
};

// An index array: integers (negative ones count from the end) or booleans (0/1), in C
// order with their shape. `invalid_dtype` names a dtype that cannot index (reported with
// the axis it was given for).
struct IndexArray {
  std::vector<int64_t> values;
  Shape shape;
  bool boolean = false;
  std::string invalid_dtype;
};
// One entry of a NumPy index: basic (integer, slice, ..., None) or an array.
using IndexItem = std::variant<Index, IndexArray>;

// Reductions (b2lazy/array.hpp builds them: reduce, sum, ...); the nan* ones skip NaN as
// NumPy's do; logsumexp is SciPy's log(sum(exp(x))).
enum class Reduction : uint8_t {
  Sum,
  Prod,
  Min,
  Max,
  Mean,
  Var,
  Std,
  Any,
  All,
  CountNonzero,
  Argmin,
  Argmax,
  NanSum,
  NanProd,
  NanMin,
  NanMax,
  NanMean,
  NanVar,
  NanStd,
  NanArgmin,
  NanArgmax,
  LogSumExp,
  Ptp
};
// What a reduction's result is, from its input's dtype x (and dtype= when it takes one).
enum class ReductionResult : uint8_t {
  Widened,   // dtype, else x's with bool and small integers widened to int64 / uint64 (sum)
  Floating,  // dtype (floating), else x's made floating, integers float64 (mean)
  Same,      // x's dtype (min)
  Index,     // int64 positions (argmin)
  Bool,      // bool (any)
  Count,     // int64 counts (count_nonzero)
};
namespace reduction {
class Family;  // a reduction's kernels (ops/reduce/kernels/)
}
// The registry of reductions: one row per Reduction (ops/reduce/kernels/registry.cpp) with
// everything about it, read by the expression parser, the Python module and the builders,
// so names, arguments, dtypes and kernels cannot drift.
struct ReductionInfo {
  Reduction r;
  const char* name;
  ReductionResult result;
  bool takes_dtype;       // dtype= (sum, prod, mean, var, std and their nan* forms)
  bool takes_correction;  // correction= / ddof= (var, std, nanvar, nanstd)
  bool no_identity;       // a zero-size reduction is an error (min, max, arg*)
  bool single_axis;       // axis is None or one int (argmin, argmax, nanarg*)
  bool complex_ok;        // complex inputs are taken (sum, mean, any, ...)
  bool bool_ok;           // bool inputs are taken (all but ptp: NumPy does not subtract booleans)
  bool method;            // also an Array method, as ndarray's
  std::vector<std::string> aliases;
  const reduction::Family* family;  // makes its kernel for an accumulator type
};
// Its result and accumulator dtypes for an input of dtype `x` (TypeError naming the
// reduction for a dtype= it cannot take).
struct ReductionDTypes {
  DType out, acc;
};
ReductionDTypes reduction_dtypes(const ReductionInfo& info, DType x, std::optional<DType> dtype = std::nullopt);
std::string reduction_dtype_rule(const ReductionInfo& info);  // the rule in words (`b2lazy functions`)
const std::vector<ReductionInfo>& reductions();
const ReductionInfo& reduction_info(Reduction r);
const ReductionInfo* find_reduction(const std::string& name);  // nullptr: no such reduction
const char* reduction_name(Reduction r);

// Methods of quantile (NumPy's): linear interpolation (the default), "lower", "higher",
// "nearest", "midpoint".
enum class QuantileMethod : uint8_t { Linear, Lower, Higher, Nearest, Midpoint };
QuantileMethod quantile_method(const std::string& name);  // throws ValueError naming the choices

// pad's modes (b2lazy/pad.hpp).
// NumPy's pad modes b2lazy has. Every one is an index map of each axis (constant and
// empty: no input index), so an output region reads only the input it maps to.
enum class PadMode { Constant, Edge, Reflect, Symmetric, Wrap, Empty };
// "constant", "edge", ...; ValueError naming the mode and the supported ones otherwise
// (NumPy's linear_ramp, maximum, mean, median and minimum included).
PadMode pad_mode(const std::string& name);

// Random values (b2lazy/random.hpp).
// Which values: the seed keys the generator; the stream tells apart the calls of one
// b2lazy.random.Generator (two calls with one seed differ).
struct RandomKey {
  uint64_t seed = 0;
  uint32_t stream = 0;
};

// Moving-window reductions (b2lazy/rolling.hpp).
enum class MovingOp : uint8_t { Sum, Mean, Min, Max, Var, Std, Count };
// "sum", "mean", ...; ValueError naming the supported ones otherwise.
MovingOp moving_op(const std::string& name);
const char* moving_op_name(MovingOp op);

struct MovingOptions {
  int axis = -1;
  bool center = false;                 // the window centred on i (xarray: start w // 2 before)
  std::optional<int64_t> min_periods;  // default: the window; at least 1
  double ddof = 0;                     // var, std
  bool skipna = true;                  // false: a NaN in the window gives NaN
};

// User functions on blocks (b2lazy/udf.hpp).
// One input as the function sees it: dense C-order values of `shape`, starting at
// `start` in the input (a 0-d input: its one value).
struct UdfInput {
  const void* data;
  DType dtype;
  Shape shape;
  Shape start;
  std::shared_ptr<void> owner;  // `data`'s buffer when a UdfAllocator gave it (else empty)
};

// Gives the buffers a function's inputs are pulled into, of `nbytes` each. By default they
// are the evaluation's scratch, reused once the call returns; a binding whose function may
// keep what it is shown (Python's lazyudf) gives buffers it owns, released when it says.
using UdfAllocator = std::function<std::shared_ptr<void>(size_t nbytes)>;

// Fills `out` (dense C order, `out_shape`, dtype `dtype`) with the function's values for
// the output block starting at `offset`. Called from several worker threads at once; an
// exception it throws ends the evaluation.
using UdfFunction = std::function<void(const std::vector<UdfInput>& inputs, void* out, DType dtype,
                                       const Shape& out_shape, const Shape& offset)>;
// Block boundaries along one axis: 0 = b[0] < b[1] < ... < b.back() = the axis's length.
using GridAxis = std::vector<int64_t>;

}  // namespace b2lazy
