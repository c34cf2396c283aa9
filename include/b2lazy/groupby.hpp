// Segment reductions: reduce an array along one axis by integer group codes (what
// xarray's groupby / resample reductions and flox compute).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "b2lazy/array.hpp"

namespace b2lazy {

struct SegmentOptions {
  int axis = -1;                   // the axis the codes label (negative: from the end)
  std::optional<int64_t> ngroups;  // default: max(codes) + 1
  double ddof = 0;                 // var, std, nanvar, nanstd
};

// `x` reduced along `axis` by `codes` (one per element of that axis: a group in
// [0, ngroups), or -1 to drop the element): the result has that axis replaced by one of
// length ngroups, group g holding func over the elements whose code is g. `func`: sum,
// prod, mean, min, max, var, std, any, all, count (values that are not NaN), first, last,
// and nansum, nanprod, nanmean, nanmin, nanmax, nanvar, nanstd, nanfirst, nanlast. An
// empty group is what the reduction gives an empty slice (sum 0, mean NaN, ...); min,
// max, first and last of an empty group are NaN (integer and bool inputs then give
// float64). Dtypes: NumPy's reduction's. An output region reads the input rows of its
// groups only, each input chunk once, folded into per-group partials.
Array segment_reduce(const Array& x, const std::vector<int64_t>& codes, const std::string& func,
                     const SegmentOptions& opts = {});

// The func names segment_reduce takes.
const std::vector<std::string>& segment_functions();

}  // namespace b2lazy
