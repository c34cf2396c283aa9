// A user function called on the blocks of a fixed grid (Dask's map_blocks): each call
// sees its inputs over whole grid blocks, whatever region the evaluation pulls.
#pragma once
#include <vector>

#include "b2lazy/udf.hpp"

namespace b2lazy {

// As lazyudf, but a pull of a region reads its inputs over the union of the grid blocks
// the region meets (`grid`: one GridAxis per axis of `shape`), so that the function can
// compute every block it is asked about from whole blocks. The array's preferred chunks
// are the grid's first block when the grid is regular (every block but the last as
// long), so that plans evaluate block by block.
Array lazyudf_on_grid(UdfFunction fn, const std::vector<Array>& inputs, DType dtype, const Shape& shape,
                      const std::vector<GridAxis>& grid, const std::string& name = "udf", UdfAllocator allocate = {});

}  // namespace b2lazy
