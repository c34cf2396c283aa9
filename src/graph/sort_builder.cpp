// sort, argsort and searchsorted: a lane that fits two runs is sorted by one node; a
// longer one by sorted runs and a merge (out of core).
#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "b2lazy/array.hpp"
#include "b2lazy/error.hpp"
#include "graph/axes.hpp"
#include "ops/sort/merge_node.hpp"
#include "ops/sort/runs_node.hpp"
#include "ops/sort/search_node.hpp"
#include "ops/sort/sort_node.hpp"

namespace b2lazy {

namespace {
std::atomic<int64_t> g_run_length{int64_t(1) << 22};

// x's lanes along `axis` sorted by runs of `run` elements and a merge (values, or
// positions as int64).
Array merge_sort(const Array& x, int axis, bool descending, bool positions, int64_t run) {
  const int last = static_cast<int>(x.ndim()) - 1;
  const Array moved = axis == last ? x : moveaxis(x, {axis}, {last});
  const int64_t n = x.shape()[static_cast<size_t>(axis)];
  const int64_t outer = n ? x.size() / n : 0;
  const NodePtr lanes = reshape(moved, {outer, n}).node();
  const int64_t every = MergeNode::sample_spacing(n, run);
  auto runs = std::make_shared<RunsNode>(lanes, run, descending, positions);
  auto samples = std::make_shared<SamplesNode>(runs, every);
  const bool flat = x.ndim() == 1;
  const Array merged(std::make_shared<MergeNode>(runs, samples, x.dtype(), n, every, descending, flat));
  const Array back = flat ? merged : reshape(merged, moved.shape());
  return axis == last ? back : moveaxis(back, {last}, {axis});
}

// A lane longer than two runs is sorted out of core (runs and a merge).
Array sorted(const Array& x, int axis, bool descending, bool indices, const char* name) {
  if (x.ndim() == 0) throw ValueError(std::string(name) + ": the array must have at least one dimension");
  const int d = normalize_axis(axis, x.ndim(), name, x.shape());
  if (is_complex(x.dtype()))  // (the standard sorts real values; NumPy orders complex ones lexicographically)
    throw TypeError(std::string(name) + " is not supported for " + dtype_name(x.dtype()) + " (real dtypes only)");
  if (x.dtype() == DType::F16) {  // keyed as float32 (exact), the values back in float16
    const Array s = sorted(x.astype(DType::F32), axis, descending, indices, name);
    return indices ? s : s.astype(DType::F16);
  }
  const int64_t run = g_run_length.load();
  if (x.shape()[static_cast<size_t>(d)] > 2 * run) return merge_sort(x, d, descending, indices, run);
  return Array(std::make_shared<SortNode>(x.node(), d, descending, indices));
}
}  // namespace

int64_t sort_run_length() { return g_run_length.load(); }

void set_sort_run_length(int64_t n) {
  if (n < 1) throw ValueError("set_sort_run_length: a run needs at least one element, got " + std::to_string(n));
  g_run_length.store(n);
}

Array sort(const Array& x, int axis, bool descending, bool stable) {
  (void)stable;  // always stable
  return sorted(x, axis, descending, false, "sort");
}

Array argsort(const Array& x, int axis, bool descending, bool stable) {
  (void)stable;
  return sorted(x, axis, descending, true, "argsort");
}

Array searchsorted(const Array& sorted, const Array& values, bool right, const std::optional<Array>& sorter) {
  if (sorted.ndim() != 1)
    throw ValueError("searchsorted: x1 must be 1-dimensional, got shape " + shape_str(sorted.shape()));
  Array a = sorted;
  if (sorter) {
    if (sorter->shape() != sorted.shape())
      throw ValueError("searchsorted: sorter of shape " + shape_str(sorter->shape()) + " does not match x1's " +
                       shape_str(sorted.shape()));
    std::vector<double> order = sorter->to_vector();  // (x1 is searched whole: it fits memory, and so does this)
    std::vector<int64_t> idx(order.begin(), order.end());
    a = take(sorted, idx, {static_cast<int64_t>(idx.size())}, 0);
  }
  DType t = promote(a.dtype(), values.dtype());
  if (is_complex(t))
    throw TypeError(std::string("searchsorted is not supported for ") + dtype_name(t) + " (real dtypes only)");
  if (t == DType::F16) t = DType::F32;  // (exact: searched as float32)
  const Array s = a.dtype() == t ? a : a.astype(t);
  const Array x = values.dtype() == t ? values : values.astype(t);
  return Array(std::make_shared<SearchNode>(s.node(), x.node(), right));
}

}  // namespace b2lazy
