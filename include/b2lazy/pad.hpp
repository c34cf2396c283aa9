// pad (NumPy's) and rechunk (Dask's) for lazy arrays.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "b2lazy/array.hpp"

namespace b2lazy {

// NumPy's pad_width forms as (before, after) per axis: `values` in C order with shape
// `shape`, broadcast to (ndim, 2) (n, (n,), (before, after), ((b0, a0), ...)).
std::vector<std::pair<int64_t, int64_t>> pad_widths(const std::vector<int64_t>& values, const Shape& shape,
                                                    size_t ndim);
// x padded by `widths` (one pair per axis, or one pair for all). Constant mode fills with
// `constant_values` (any array broadcastable to (ndim, 2): the value of each axis' before
// and after side; cast to x's dtype; later axes win in the corners, as NumPy's), Empty
// with zeros; reflect and symmetric repeat their reflection when the width exceeds the axis.
Array pad(const Array& x, const std::vector<std::pair<int64_t, int64_t>>& widths, PadMode mode = PadMode::Constant,
          const std::optional<Array>& constant_values = {});

// NumPy's sliding_window_view: windows of `window_shape` along `axes` (all axes when
// nullopt), the window axes appended; lazily, one window node per axis (what xarray's
// rolling asks of the namespace after padding; a reduction over the last window axis
// becomes one moving reduction, b2lazy/rolling.hpp).
Array sliding_window_view(const Array& x, const std::vector<int64_t>& window_shape,
                          const std::optional<std::vector<int>>& axes = {});

// One axis of rechunk's spec (Dask's): a block length, the whole axis (-1), the array's
// current chunks there (None) or the engine's choice ('auto').
struct ChunkSpec {
  enum class Kind { Length, Whole, Keep, Auto } kind = Kind::Keep;
  int64_t length = 0;
  static ChunkSpec of(int64_t n) { return {Kind::Length, n}; }
};
// Block lengths of one axis (Dask's tuple form) as a length: regular ones only (all equal
// but a shorter last one, adding up to `axis_len`); ValueError naming `axis` otherwise.
ChunkSpec chunk_spec_of_blocks(const std::vector<int64_t>& blocks, int64_t axis_len, size_t axis);
// The chunks `spec` (one entry per axis, or one for all) gives an array of x's shape.
Shape rechunk_chunks(const Array& x, const std::vector<ChunkSpec>& spec);
// x with those chunks as its preferred ones: the same values, but an evaluation of x,
// or of an elementwise expression of x's shape over it, writes these output chunks
// when compute() is not given chunks of its own.
Array rechunk(const Array& x, const std::vector<ChunkSpec>& spec);
Array rechunk(const Array& x, const Shape& chunks);

}  // namespace b2lazy
