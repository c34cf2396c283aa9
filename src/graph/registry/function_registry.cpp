// The function registry's table (include/b2lazy/functions.hpp). Elementwise functions and
// reductions are generated from their own registrations (the Op X-macro, reductions());
// the others are declared here, one line each, with Python's signature syntax.
#include <algorithm>
#include <map>

#include "b2lazy/error.hpp"
#include "b2lazy/functions.hpp"

namespace b2lazy {
namespace {

using F = FunctionFamily;

FunctionInfo entry(std::string name, F family, const char* signature, std::string dtype_rule,
                   std::vector<std::string> aliases = {}, bool method = false) {
  FunctionInfo f;
  f.name = std::move(name);
  f.family = family;
  f.params = parse_signature(signature);
  f.dtype_rule = std::move(dtype_rule);
  f.aliases = std::move(aliases);
  f.method = method;
  return f;
}

const char* op_dtype_rule(OpFamily family) {
  switch (family) {
    case OpFamily::Arith:
      return "the inputs' promoted dtype (NumPy's rules; abs, real, imag of complex: its part type)";
    case OpFamily::Float:
      return "the inputs' promoted dtype made floating (bool and 1-2 byte integers: float32, others float64)";
    case OpFamily::Int: return "the inputs' promoted dtype; integers and bool only";
    case OpFamily::Cmp:
    case OpFamily::Pred: return "bool";
    case OpFamily::Logic: return "bool (inputs taken as truth values)";
    case OpFamily::Special: break;
  }
  return "";
}

void elementwise(std::vector<FunctionInfo>& out) {
  std::map<std::string, std::vector<std::string>> aliases;
  for (const auto& [alias, name] : op_aliases()) aliases[name].push_back(alias);
  for (int i = 0; i < static_cast<int>(Op::Count_); ++i) {
    const Op op = static_cast<Op>(i);
    if (op_family(op) == OpFamily::Special) continue;  // where, astype, copy: below
    FunctionInfo f = entry(op_name(op), F::Elementwise, op_arity(op) == 1 ? "x, /" : "x1, x2, /",
                           op_dtype_rule(op_family(op)), aliases[op_name(op)], op == Op::Round);
    f.op = op;
    out.push_back(std::move(f));
  }
  out.push_back(entry("where", F::Elementwise, "condition, x=None, y=None",
                      "x and y promoted; with condition alone, nonzero(condition)"));
  out.back().op = Op::Where;
  out.push_back(entry("clip", F::Elementwise, "x, /, min=None, max=None", "x's dtype", {}, true));
  out.push_back(entry("astype", F::Elementwise, "x, dtype, /, *, copy=True, device=None", "dtype", {}, true));
  out.back().op = Op::Cast;
}

std::string reduction_dtype_rule(Reduction r) {
  switch (r) {
    case Reduction::Sum:
    case Reduction::Prod:
    case Reduction::NanSum:
    case Reduction::NanProd: return "dtype if given, else x's (bool and small integers widened to int64 / uint64)";
    case Reduction::Mean:
    case Reduction::Var:
    case Reduction::Std:
    case Reduction::NanMean:
    case Reduction::NanVar:
    case Reduction::NanStd: return "dtype if given, else x's made floating (integers: float64)";
    case Reduction::Any:
    case Reduction::All: return "bool";
    case Reduction::CountNonzero:
    case Reduction::Argmin:
    case Reduction::Argmax:
    case Reduction::NanArgmin:
    case Reduction::NanArgmax: return "int64";
    case Reduction::LogSumExp: return "x's made floating (integers: float64)";
    case Reduction::Min:
    case Reduction::Max:
    case Reduction::NanMin:
    case Reduction::NanMax: break;
  }
  return "x's dtype";
}

void reductions_of(std::vector<FunctionInfo>& out) {
  for (const ReductionInfo& r : reductions()) {
    std::string sig = "x, /, axis=None, *, keepdims=False";
    if (r.takes_dtype) sig += ", dtype=None";
    if (r.takes_correction) sig += ", correction=None, ddof=None";
    const bool method = std::string_view(r.name).substr(0, 3) != "nan" && r.r != Reduction::CountNonzero &&
                        r.r != Reduction::LogSumExp;  // ndarray's methods
    std::vector<std::string> aliases;
    if (r.r == Reduction::Min) aliases = {"amin"};
    if (r.r == Reduction::Max) aliases = {"amax"};
    FunctionInfo f = entry(r.name, F::Reduction, sig.c_str(), reduction_dtype_rule(r.r), aliases, method);
    f.reduction = r.r;
    out.push_back(std::move(f));
  }
  const char* q = "float64 (x's float type for float32)";
  out.push_back(entry("median", F::Holistic, "x, /, axis=None, *, keepdims=False", q));
  out.push_back(entry("quantile", F::Holistic, "x, /, q, axis=None, *, method='linear', keepdims=False", q));
  out.push_back(entry("sort", F::Holistic, "x, /, *, axis=-1, descending=False, stable=True", "x's dtype"));
  out.push_back(entry("argsort", F::Holistic, "x, /, *, axis=-1, descending=False, stable=True", "int64"));
  out.push_back(entry("searchsorted", F::Holistic, "x1, x2, /, *, side='left', sorter=None", "int64"));
  out.push_back(entry("percentile", F::Holistic, "x, /, q, axis=None, *, method='linear', keepdims=False", q));
  const char* scan = "dtype if given, else sum's / prod's rule";
  out.push_back(entry("cumsum", F::Scan, "x, axis=None, dtype=None", scan, {}, true));
  out.push_back(entry("cumprod", F::Scan, "x, axis=None, dtype=None", scan, {}, true));
  const char* cumulative = "x, /, *, axis=None, dtype=None, include_initial=False";
  out.push_back(entry("cumulative_sum", F::Scan, cumulative, scan));
  out.push_back(entry("cumulative_prod", F::Scan, cumulative, scan));
}

void linalg(std::vector<FunctionInfo>& out) {
  const char* promoted = "the inputs' promoted dtype";
  out.push_back(entry("matmul", F::Linalg, "x1, x2, /", promoted));
  out.push_back(entry("tensordot", F::Linalg, "x1, x2, /, axes=2", promoted));
  out.push_back(entry("vecdot", F::Linalg, "x1, x2, /, *, axis=-1", promoted));
  out.push_back(entry("outer", F::Linalg, "x1, x2, /", promoted));
  out.push_back(entry("trace", F::Linalg, "x, /, *, offset=0, dtype=None, axis1=-2, axis2=-1", "sum's rule"));
}

void shape(std::vector<FunctionInfo>& out) {
  const char* same = "x's dtype";
  out.push_back(entry("permute_dims", F::Shape, "x, /, axes", same));
  out.push_back(entry("transpose", F::Shape, "x, axes=None", same, {}, true));
  out.push_back(entry("matrix_transpose", F::Shape, "x, /", same));
  out.push_back(entry("expand_dims", F::Shape, "x, /, axis=0", same));
  out.push_back(entry("squeeze", F::Shape, "x, /, axis=None", same, {}, true));
  out.push_back(entry("flip", F::Shape, "x, /, *, axis=None", same));
  out.push_back(entry("moveaxis", F::Shape, "x, source, destination, /", same));
  out.push_back(entry("broadcast_to", F::Shape, "x, /, shape", same));
  out.push_back(entry("broadcast_arrays", F::Shape, "*arrays", "each array's dtype"));
  out.push_back(entry("reshape", F::Shape, "x, /, shape, *, copy=None", same, {}, true));
  out.push_back(entry("flatten", F::Shape, "x, /", same, {"ravel"}, true));
  out.push_back(entry("concat", F::Shape, "arrays, /, *, axis=0", "the arrays' promoted dtype", {"concatenate"}));
  out.push_back(entry("stack", F::Shape, "arrays, /, *, axis=0", "the arrays' promoted dtype"));
  out.push_back(entry("unstack", F::Shape, "x, /, *, axis=0", same));
  out.push_back(entry("roll", F::Shape, "x, /, shift, *, axis=None", same));
  out.push_back(entry("tile", F::Shape, "x, repetitions, /", same));
  out.push_back(entry("repeat", F::Shape, "x, repeats, /, *, axis=None", same));
  out.push_back(entry("diagonal", F::Shape, "x, /, *, offset=0, axis1=-2, axis2=-1", same));
  out.push_back(entry("tril", F::Shape, "x, /, *, k=0", same));
  out.push_back(entry("triu", F::Shape, "x, /, *, k=0", same));
  out.push_back(entry("diff", F::Shape, "x, /, *, axis=-1, n=1, prepend=None, append=None",
                      "x's promoted with prepend's and append's (bool: not_equal)"));
  out.push_back(entry("take", F::Index, "x, indices, /, axis=None", same, {}, true));
  out.push_back(entry("take_along_axis", F::Index, "x, indices, /, axis=-1", same));
  out.push_back(entry("nonzero", F::Index, "x, /", "a tuple of int64 arrays", {}, true));
}

void creation(std::vector<FunctionInfo>& out) {
  const char* float64 = "dtype if given, else float64";
  const char* filled = "shape, dtype=None, *, device=None, chunks=None";
  out.push_back(entry("zeros", F::Creation, filled, float64));
  out.push_back(entry("ones", F::Creation, filled, float64));
  out.push_back(entry("empty", F::Creation, filled, float64));
  out.push_back(entry("full", F::Creation, "shape, fill_value, dtype=None, *, device=None, chunks=None",
                      "dtype if given, else fill_value's (bool, int64, uint64 beyond int64, float64)"));
  const char* like = "dtype if given, else x's";
  out.push_back(entry("zeros_like", F::Creation, "x, /, *, dtype=None, device=None", like));
  out.push_back(entry("ones_like", F::Creation, "x, /, *, dtype=None, device=None", like));
  out.push_back(entry("empty_like", F::Creation, "x, /, *, dtype=None, device=None", like));
  out.push_back(entry("full_like", F::Creation, "x, /, fill_value, *, dtype=None, device=None", like));
  out.push_back(entry("arange", F::Creation,
                      "start, /, stop=None, step=1, dtype=None, *, device=None, shape=None, chunks=None",
                      "dtype if given, else int64 for int arguments, float64 otherwise"));
  out.push_back(entry("linspace", F::Creation,
                      "start, stop, /, num=50, endpoint=True, dtype=None, *, device=None, shape=None, chunks=None",
                      float64));
  out.push_back(entry("eye", F::Creation, "n_rows, n_cols=None, /, *, k=0, dtype=None, device=None", float64));
  out.push_back(entry("meshgrid", F::Creation, "*arrays, indexing='xy'", "the arrays' promoted dtype"));
}

// Issue #37's statistics (include/b2lazy/histogram.hpp, random.hpp; nan* quantiles):
// NumPy's signatures. The random_* rows are what b2lazy.random's Generator calls (and a
// saved expression replays): their values depend on (seed, stream, index) only.
void statistics(std::vector<FunctionInfo>& out) {
  const char* q = "float64 (x's float type for float32)";
  out.push_back(entry("nanmedian", F::Holistic, "x, /, axis=None, *, keepdims=False", q));
  out.push_back(entry("nanquantile", F::Holistic, "x, /, q, axis=None, *, method='linear', keepdims=False", q));
  out.push_back(entry("nanpercentile", F::Holistic, "x, /, q, axis=None, *, method='linear', keepdims=False", q));
  out.push_back(entry("isin", F::Index, "element, test_elements, *, assume_unique=False, invert=False", "bool"));
  out.push_back(entry("digitize", F::Index, "x, bins, right=False", "int64"));
  out.push_back(entry("bincount", F::Holistic, "x, /, weights=None, minlength=0", "int64 (float64 with weights)"));
  out.push_back(entry(
      "histogram", F::Holistic, "a, bins=10, range=None, weights=None, density=None",
      "(hist, bin_edges): hist int64 (weights' type; float64 with density), edges float64 (float32 for float32 a)"));
  out.push_back(entry("histogram2d", F::Holistic, "x, y, bins=10, range=None, weights=None, density=None",
                      "(hist, xedges, yedges): hist float64, edges float64 (float32 for float32 x and y)"));
  const char* real = "dtype if given (float32 or float64), else float64";
  const char* counter = ", *, seed=0, stream=0, dtype=None, chunks=None";
  out.push_back(
      entry("random_uniform", F::Creation, (std::string("shape, /, low=0.0, high=1.0") + counter).c_str(), real));
  out.push_back(
      entry("random_normal", F::Creation, (std::string("shape, /, loc=0.0, scale=1.0") + counter).c_str(), real));
  out.push_back(entry("random_integers", F::Creation, (std::string("shape, /, low, high=None") + counter).c_str(),
                      "dtype if given (an integer dtype), else int64"));
}

// Issue #37's einsum, pad and rechunk (src/graph/einsum_builder.cpp, pad_builder.cpp,
// rechunk_builder.cpp).
void einsum_pad_rechunk(std::vector<FunctionInfo>& out) {
  out.push_back(entry("einsum", F::Linalg, "subscripts, /, *operands, optimize=True",
                      "the operands' promoted dtype (NumPy's result_type)"));
  out.push_back(entry("pad", F::Shape, "x, /, pad_width, mode='constant', *, constant_values=0, reflect_type='even'",
                      "x's dtype"));
  out.push_back(entry("rechunk", F::Shape, "x, /, chunks='auto'", "x's dtype", {}, true));
  out.push_back(entry("sliding_window_view", F::Shape, "x, window_shape, axis=None, *, subok=False, writeable=False",
                      "x's dtype"));
}

// Issue #38's moving (rolling) reductions (src/graph/rolling_builder.cpp).
void rolling(std::vector<FunctionInfo>& out) {
  out.push_back(entry("moving_reduce", F::Scan,
                      "x, /, window, func='mean', *, axis=-1, center=False, min_periods=None, ddof=0, skipna=True",
                      "float64 for integer input and for count, else x's floating dtype"));
}

// Issue #38's segment reduction (b2lazy/groupby.hpp, src/ops/segment/): a reduction by
// group codes along one axis, the kernel families folded per group.
void groupby(std::vector<FunctionInfo>& out) {
  out.push_back(entry("segment_reduce", F::Holistic, "x, codes, /, func, *, ngroups=None, axis=-1, ddof=0",
                      "func's reduction's (NumPy's); min, max, first, last with an empty group: floating"));
}

std::vector<FunctionInfo> build() {
  std::vector<FunctionInfo> out;
  elementwise(out);
  reductions_of(out);
  linalg(out);
  shape(out);
  creation(out);
  statistics(out);
  einsum_pad_rechunk(out);
  rolling(out);
  groupby(out);
  return out;
}

}  // namespace

const std::vector<FunctionInfo>& function_registry() {
  static const std::vector<FunctionInfo> table = build();
  return table;
}

const FunctionInfo* find_function(std::string_view name) {
  static const std::map<std::string, const FunctionInfo*, std::less<>> index = [] {
    std::map<std::string, const FunctionInfo*, std::less<>> m;
    for (const FunctionInfo& f : function_registry()) {
      m[f.name] = &f;
      for (const std::string& a : f.aliases) m[a] = &f;
    }
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

const char* family_name(FunctionFamily f) {
  switch (f) {
    case F::Elementwise: return "elementwise";
    case F::Reduction: return "reduction";
    case F::Holistic: return "holistic reduction";
    case F::Scan: return "scan";
    case F::Linalg: return "linear algebra";
    case F::Shape: return "shape";
    case F::Index: return "indexing";
    case F::Creation: return "creation";
  }
  return "";
}

}  // namespace b2lazy
