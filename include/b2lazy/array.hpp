// Lazy arrays: building expressions, indexing, evaluating.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "b2lazy/context.hpp"
#include "b2lazy/driver.hpp"
#include "b2lazy/dtype.hpp"
#include "b2lazy/node.hpp"
#include "b2lazy/ops.hpp"
#include "b2lazy/plan.hpp"
#include "b2lazy/stats.hpp"
#include "b2lazy/vocabulary.hpp"

namespace b2lazy {

class Array {
 public:
  Array() = default;
  explicit Array(NodePtr node) : node_(std::move(node)) {}

  DType dtype() const { return node_->dtype(); }
  const Shape& shape() const { return node_->shape(); }
  size_t ndim() const { return node_->ndim(); }
  int64_t size() const { return node_->size(); }
  const NodePtr& node() const { return node_; }

  // Basic indexing; lazy. Raises IndexError naming the axis and value.
  Array operator[](const std::vector<Index>& index) const;
  Array astype(DType t) const;

  // Evaluate into a compressed b2nd array (in memory or on disk): make_plan, then run it.
  Array compute(const ComputeOptions& opts = {}, Context* ctx = nullptr) const;
  // The plan compute(opts) runs (b2lazy/plan.hpp): stages, tasks, projected memory.
  Plan plan(const ComputeOptions& opts = {}, Context* ctx = nullptr) const;
  // Evaluate into a dense C-order buffer of size() * itemsize(dtype()) bytes.
  Stats to_buffer(void* out, const EvalOptions& opts, Context* ctx = nullptr) const;
  Stats to_buffer(void* out, Context* ctx = nullptr, size_t max_memory = size_t(1) << 30) const;
  std::vector<double> to_vector(Context* ctx = nullptr) const;  // convenience, casts to double
  // Counters of the evaluation that produced this array (compute() results only).
  const Stats* stats() const { return stats_.get(); }
  // The plan: the node tree with fused programs, what each node is asked for by a
  // typical output chunk, what is computed once (cached or spilled) and why, and
  // estimates of bytes read and written and of peak memory. On a compute() result: the
  // plan of the expression it came from, with the measured stats beside the estimates.
  std::string explain(Context* ctx = nullptr) const;

 private:
  NodePtr node_;
  std::shared_ptr<const Stats> stats_;
  std::shared_ptr<const Plan> plan_;  // compute() results: the plan that made them
  friend Array with_stats(Array a, Stats s);
  friend Array run_compute(const std::shared_ptr<const Plan>& plan, const EvalOptions& opts, Context& ctx);
  friend class OutputCommitter;
};

using Operand = std::variant<Array, Scalar>;

// Sources. open() reads any registered format (b2lazy/driver.hpp): a b2nd file or sparse
// directory, a Zarr v2/v3 array ("x.zarr", "zarr:PATH"), chosen by scheme, suffix or content.
// Remote URLs (https://, s3://, gs://, and schemes registered with register_store) are read
// through their store, reached with `storage` (b2lazy/byte_store.hpp).
Array open(const std::string& urlpath, const StoreOptions& storage = {});
// What a stored array holds, from its metadata (b2lazy info).
StorageInfo storage_info(const std::string& urlpath);
// The same for an array opened from or computed into storage (read from that array, not
// from whatever is at its path now); ValueError for any other array.
StorageInfo storage_info(const Array& stored);
// Wraps memory the caller keeps alive via `owner`; byte strides, C order if empty.
Array from_buffer(const void* data, DType dtype, const Shape& shape, const Shape& byte_strides,
                  std::shared_ptr<const void> owner, const std::string& name = "numpy");
// Compresses a dense C-order buffer into an in-memory b2nd array.
Array from_buffer_compressed(const void* data, DType dtype, const Shape& shape, const Shape& chunks,
                             const Shape& blocks, const CParams& cparams = {});
Array from_cframe(const void* cframe, int64_t len);
// A contiguous Blosc2 frame of the array (evaluated to memory first if lazy), for
// exchange with python-blosc2.
std::vector<uint8_t> to_cframe(const Array& a, Context* ctx = nullptr);
Array scalar(Scalar v, std::optional<DType> dtype = {});
Array full(const Shape& shape, Scalar value, std::optional<DType> dtype = {}, const Shape& chunks = {});
Array zeros(const Shape& shape, DType dtype = DType::F64, const Shape& chunks = {});
Array ones(const Shape& shape, DType dtype = DType::F64, const Shape& chunks = {});
Array arange(double start, double stop, double step = 1, std::optional<DType> dtype = {}, const Shape& shape = {},
             const Shape& chunks = {});
// arange over integers, exactly (the double form rounds values and lengths beyond 2**53):
// ceil((stop - start) / step) values start + i * step, int64 unless `dtype` says otherwise.
Array arange_int(int64_t start, int64_t stop, int64_t step = 1, std::optional<DType> dtype = {},
                 const Shape& shape = {}, const Shape& chunks = {});
Array linspace(double start, double stop, int64_t num, bool endpoint = true, std::optional<DType> dtype = {},
               const Shape& shape = {}, const Shape& chunks = {});

// Elementwise functions (NumPy broadcasting and promotion).
Array elementwise(Op op, const std::vector<Operand>& args);
Array where(const Operand& cond, const Operand& x, const Operand& y);
Array clip(const Operand& x, const std::optional<Operand>& lo, const std::optional<Operand>& hi);

// Operators, each for Array/Array, Array/scalar and scalar/Array.
// clang-format off
#define B2LAZY_BINARY_OPERATOR(sym)                      \
  Array operator sym(const Array& a, const Array& b);    \
  Array operator sym(const Array& a, Scalar b);          \
  Array operator sym(Scalar a, const Array& b);
B2LAZY_BINARY_OPERATOR(+) B2LAZY_BINARY_OPERATOR(-) B2LAZY_BINARY_OPERATOR(*)
B2LAZY_BINARY_OPERATOR(/) B2LAZY_BINARY_OPERATOR(%) B2LAZY_BINARY_OPERATOR(<)
B2LAZY_BINARY_OPERATOR(<=) B2LAZY_BINARY_OPERATOR(>) B2LAZY_BINARY_OPERATOR(>=)
B2LAZY_BINARY_OPERATOR(&) B2LAZY_BINARY_OPERATOR(|) B2LAZY_BINARY_OPERATOR(^)
#undef B2LAZY_BINARY_OPERATOR
    // clang-format on
    Array
    operator-(const Array& a);
Array operator~(const Array& a);

// Named functions for the common cases; every other op via elementwise(Op, args).
Array sin(const Operand& a);
Array cos(const Operand& a);
Array exp(const Operand& a);
Array log(const Operand& a);
Array sqrt(const Operand& a);
Array abs(const Operand& a);
Array pow(const Operand& a, const Operand& b);
Array maximum(const Operand& a, const Operand& b);
Array minimum(const Operand& a, const Operand& b);

// Reductions: lazy nodes; a result that many output chunks need is computed once.
// The nan* ones skip NaN as NumPy's do; logsumexp is SciPy's log(sum(exp(x))).
struct ReduceOptions {
  std::optional<std::vector<int>> axis;  // nullopt: all axes
  bool keepdims = false;
  std::optional<DType> dtype;  // where ReductionInfo::takes_dtype
  double correction = 0;       // where ReductionInfo::takes_correction (NumPy's ddof)
};
Array reduce(Reduction r, const Array& x, const ReduceOptions& opts = {});
inline Array sum(const Array& x, const ReduceOptions& o = {}) { return reduce(Reduction::Sum, x, o); }
inline Array prod(const Array& x, const ReduceOptions& o = {}) { return reduce(Reduction::Prod, x, o); }
inline Array min(const Array& x, const ReduceOptions& o = {}) { return reduce(Reduction::Min, x, o); }
inline Array max(const Array& x, const ReduceOptions& o = {}) { return reduce(Reduction::Max, x, o); }
inline Array mean(const Array& x, const ReduceOptions& o = {}) { return reduce(Reduction::Mean, x, o); }
inline Array var(const Array& x, const ReduceOptions& o = {}) { return reduce(Reduction::Var, x, o); }
inline Array std_dev(const Array& x, const ReduceOptions& o = {}) { return reduce(Reduction::Std, x, o); }

// Holistic reductions (NumPy semantics): the q-th quantile, 0 <= q <= 1, of the values
// along `axis` (all axes: nullopt). Linear interpolation (NumPy's default method) or one
// of NumPy's "lower", "higher", "nearest", "midpoint"; a slice with a NaN gives NaN.
// Lazy: an output pulls its slices whole when they fit the budget, else selects in passes.
struct QuantileOptions {
  std::optional<std::vector<int>> axis;  // nullopt: all axes
  bool keepdims = false;
  QuantileMethod method = QuantileMethod::Linear;
  bool skip_nan = false;  // NaNs left out of each slice (the nan* functions set it)
};
Array quantile(const Array& x, double q, const QuantileOptions& opts = {});
Array percentile(const Array& x, double p, const QuantileOptions& opts = {});  // quantile p / 100
Array median(const Array& x, const QuantileOptions& opts = {});                // quantile 0.5
// NumPy's nanquantile, nanpercentile, nanmedian: NaNs left out; an all-NaN slice gives NaN.
Array nanquantile(const Array& x, double q, QuantileOptions opts = {});
Array nanpercentile(const Array& x, double p, QuantileOptions opts = {});
Array nanmedian(const Array& x, QuantileOptions opts = {});

// Cumulative sums and products (Array API and NumPy names). Totals are carried across
// chunks; per-segment totals are cached, so a region near the end costs a pass over
// totals plus the chunks it covers.
struct ScanOptions {
  std::optional<int> axis;  // required for ndim > 1 in the Array API functions
  std::optional<DType> dtype;
  bool include_initial = false;
};
Array cumulative_sum(const Array& x, const ScanOptions& opts = {});
Array cumulative_prod(const Array& x, const ScanOptions& opts = {});
// NumPy: axis=None scans the array flattened in C order.
Array cumsum(const Array& x, std::optional<int> axis = {}, std::optional<DType> dtype = {});
Array cumprod(const Array& x, std::optional<int> axis = {}, std::optional<DType> dtype = {});
// Each NaN replaced by the last non-NaN value before it along `axis` (NaN before the first):
// a scan, carried across chunks as the sums are. Real floating dtypes only.
Array forward_fill(const Array& x, int axis);

// Linear algebra (NumPy / Array API semantics). Products are lazy nodes: an output
// tile pulls the K-panels of its operands it needs, multiplied by OpenBLAS for float32
// and float64 and by an exact (wrapping) loop for integers and bool.
Array matmul(const Array& a, const Array& b);  // 1-d promotion, broadcast batch axes
// Contract a's `axes_a` with b's `axes_b`; the int form uses a's last and b's first `axes`.
Array tensordot(const Array& a, const Array& b, int axes = 2);
Array tensordot(const Array& a, const Array& b, const std::vector<int>& axes_a, const std::vector<int>& axes_b);
Array vecdot(const Array& a, const Array& b, int axis = -1);
Array outer(const Array& a, const Array& b);  // of the flattened operands
Array permute_dims(const Array& x, const std::vector<int>& axes);
Array matrix_transpose(const Array& x);  // swaps the last two axes (.mT)

// Integer-array indexing along one axis (NumPy's take): `indices` in C order with shape
// `index_shape`, negative values counted from the end; axis nullopt takes from the array
// flattened in C order. Only the input chunks the indices touch are read or computed.
Array take(const Array& x, const std::vector<int64_t>& indices, const Shape& index_shape, std::optional<int> axis = {});
// x[mask] for a boolean mask of x's shape (any lazy expression), in C order. Counts the
// True values per row strip now (one pass over the mask, so the length is known); the
// values are pulled strip by strip when the result is evaluated.
Array mask_select(const Array& x, const Array& mask, Context* ctx = nullptr);
// The counting pass alone: True values per strip of `strip`'s shape (C-contiguous strips
// of the mask, in C order), for values of `value_itemsize` bytes. A saved expression keeps
// these, so that reopening it (on each worker of a cluster) does not count again.
struct MaskCounts {
  Shape strip;
  std::vector<int64_t> counts;
};
MaskCounts count_mask(const Array& mask, size_t value_itemsize, Context* ctx = nullptr);
// x[mask] with its counts given (count_mask of this mask for x's itemsize, or a saved
// copy): checked to fit the mask's shape; a strip whose True values no longer match its
// count (the mask's operands changed since) is an error when the values are pulled.
Array mask_select(const Array& x, const Array& mask, const MaskCounts& counted);
// Coordinates of the nonzero (True) elements, one int64 array per axis, in C order.
// Counts per row strip now (one pass over x, shared by all axes); lazy otherwise.
std::vector<Array> nonzero(const Array& x, Context* ctx = nullptr);
// NumPy's take_along_axis: `indices` (C order, shape `index_shape`, as many axes as x)
// select along `axis` and broadcast against x elsewhere; axis nullopt: x flattened.
Array take_along_axis(const Array& x, const std::vector<int64_t>& indices, const Shape& index_shape,
                      std::optional<int> axis);
// NumPy indexing with index arrays among basic indices, lazy: one array is a take along
// its axis, several (and the integers among them) broadcast together select points, a
// boolean array stands for its True positions; the new axes go where NumPy puts them.
// A boolean array of x's whole shape is mask_select (its True values counted now).
Array getitem(const Array& x, const std::vector<IndexItem>& key, Context* ctx = nullptr);
// zarr's orthogonal indexing: each axis's 1-d index array applies independently.
Array oindex(const Array& x, const std::vector<IndexItem>& key);
// Pointwise selection (NumPy's advanced indexing with several arrays): indices[t] indexes
// axis `axis + t`; all have `index_shape` (already broadcast), C order. The result has
// x's axes before `axis`, then `index_shape`, then x's axes after the indexed ones.
Array take_points(const Array& x, size_t axis, const std::vector<std::vector<int64_t>>& indices,
                  const Shape& index_shape);

// Shape functions (NumPy / Array API), lazy: slices, permutations and broadcasts of x.
Array expand_dims(const Array& x, int axis);
Array squeeze(const Array& x, const std::optional<std::vector<int>>& axes = {});  // all length-1 axes
Array flip(const Array& x, const std::optional<std::vector<int>>& axes = {});     // all axes
Array moveaxis(const Array& x, const std::vector<int>& source, const std::vector<int>& destination);
Array broadcast_to(const Array& x, const Shape& shape);
Array concat(const std::vector<Array>& xs, std::optional<int> axis = 0);  // nullopt: flattened
Array stack(const std::vector<Array>& xs, int axis = 0);
// Elements shifted along each axis (wrapping); axes nullopt: along the flattened array.
Array roll(const Array& x, const std::vector<int64_t>& shifts, const std::optional<std::vector<int>>& axes = {});
// The same elements in C order with a new shape (one entry may be -1: inferred).
Array reshape(const Array& x, const std::vector<int64_t>& shape);
// x flattened in C order (reshape(x, {-1})).
Array flatten(const Array& x);
// x sorted along `axis` (the Array API's sort / argsort: the values, or their positions
// as int64), lazily: a region pulls the whole lanes it crosses. Always stable; NaNs last.
// A lane longer than two runs (sort_run_length elements each) is sorted out of core: its
// runs sorted once per evaluation (kept, compressed or spilled like any computed stage),
// then merged one output region at a time.
Array sort(const Array& x, int axis = -1, bool descending = false, bool stable = true);
Array argsort(const Array& x, int axis = -1, bool descending = false, bool stable = true);
// The Array API's unique_* (NumPy 2's results): x's distinct values, sorted (each NaN
// distinct), and when asked each one's first position in x flattened, each element's
// group (shape of x) and each group's size. Sort-based and out of core: x is sorted now
// (runs and a merge when long) into a temporary file, its groups counted; the results
// read it lazily (max_memory: that sort's budget, 0 for the default). inverse needs
// fewer than 2**31 elements.
struct Unique {
  Array values;
  std::optional<Array> indices, inverse, counts;
};
Unique unique(const Array& x, bool indices, bool inverse, bool counts, Context* ctx = nullptr, size_t max_memory = 0);
int64_t sort_run_length();
void set_sort_run_length(int64_t n);  // for graphs built after it (tests: small runs)
// The int64 positions where `values` would go in the 1-D ascending `sorted` (side
// "right" when `right`), lazily; `sorter` (argsort of an unsorted x1) reads x1 in its order.
Array searchsorted(const Array& sorted, const Array& values, bool right = false,
                   const std::optional<Array>& sorter = {});
// x with x[key] = value (a basic index: integers, slices, ..., None), lazy: value is cast
// to x's dtype and broadcast to x[key]'s shape as NumPy does; a pull of the result reads
// only the part of value its region covers. Nothing is written anywhere.
Array assign(const Array& x, const std::vector<Index>& key, const Array& value);
// x[key] = value written into the b2nd array stored at `urlpath` (what an array opened
// with mode "r+" does): only the storage chunks the key touches are read, updated and
// rewritten, one at a time. The key and value are checked, and a value that reads the
// same file evaluated, before anything is written; a write that fails midway leaves the
// chunks before it updated. Returns the number of chunks rewritten.
int64_t assign_stored(const std::string& urlpath, const std::vector<Index>& key, const Array& value,
                      Context* ctx = nullptr, size_t max_memory = size_t(1) << 30);
// x[mask] = value for that stored array: `mask` boolean of x's shape, `value` broadcast
// to x's shape; only the storage chunks where the mask holds a True are rewritten.
int64_t assign_stored_where(const std::string& urlpath, const Array& mask, const Array& value, Context* ctx = nullptr,
                            size_t max_memory = size_t(1) << 30);

// Array API creation and manipulation functions (issue #15), lazy nodes that never
// materialise their result: an output region reads only the input it maps to.
// The identity-like matrix with ones where column - row == k (NumPy's eye).
Array eye(int64_t n_rows, int64_t n_cols, int64_t k = 0, DType dtype = DType::F64);
// x with the elements above (tril) / below (triu) diagonal k of the last two axes zeroed.
Array tril(const Array& x, int64_t k = 0);
Array triu(const Array& x, int64_t k = 0);
// The diagonal `offset` of the last two axes, as the last axis (the Array API's
// linalg.diagonal; NumPy's diagonal with axis1=-2, axis2=-1).
Array diagonal(const Array& x, int64_t offset = 0);
// x repeated `reps` times along each axis; reps shorter than x's axes count from the
// last axis, longer ones add leading axes (NumPy's tile).
Array tile(const Array& x, const std::vector<int64_t>& reps);
// Each element repeated along `axis` (nullopt: x flattened): `repeats` once for all, or
// one count per element (NumPy's repeat).
Array repeat(const Array& x, int64_t repeats, std::optional<int> axis = {});
Array repeat(const Array& x, const std::vector<int64_t>& repeats, std::optional<int> axis = {});
// The sum of diagonal `offset` of the last two axes, with sum's dtype rules.
Array trace(const Array& x, int64_t offset = 0, std::optional<DType> dtype = {});
// The n-th forward difference along `axis` (not_equal for bool, as NumPy) after joining
// `prepend` and `append` to x; a 0-d prepend / append stands for one slice of it.
Array diff(const Array& x, int axis = -1, int64_t n = 1, const std::optional<Array>& prepend = {},
           const std::optional<Array>& append = {});
// Coordinate arrays of 1-d vectors, as broadcasts; xy swaps the first two axes (NumPy's
// default indexing), else "ij".
std::vector<Array> meshgrid(const std::vector<Array>& xs, bool xy = true);
// The arrays broadcast to their common shape.
std::vector<Array> broadcast_arrays(const std::vector<Array>& xs);
// The slices of x along `axis`.
std::vector<Array> unstack(const Array& x, int axis = 0);

// Shape of broadcasting `shapes` together; ValueError naming both shapes otherwise.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace b2lazy
