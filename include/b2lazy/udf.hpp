// User functions called on blocks (python-blosc2's lazyudf), as lazy nodes: a pull of a
// region pulls that region of every input — widened by `depth` along each axis, within
// the array, for stencils — and calls the function once with the pieces.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "b2lazy/array.hpp"

namespace b2lazy {

// The lazy result of `fn` over `inputs` (each of shape `shape`, or 0-d), of `dtype` and
// `shape`. `depth` (one entry per axis, or one for all; empty: 0) widens what each block
// reads of its inputs: the block's neighbours up to that far, clipped at the array's
// edges (Dask's map_overlap with boundary="none"). `name` names it in explain().
// `chunks` (one entry per axis, each >= 1; empty: none): the result's preferred chunks, which
// evaluations align their output chunks to (a function reading a chunked store: its chunks).
Array lazyudf(UdfFunction fn, const std::vector<Array>& inputs, DType dtype, const Shape& shape,
              const Shape& depth = {}, const std::string& name = "udf", UdfAllocator allocate = {},
              const Shape& chunks = {});

}  // namespace b2lazy
