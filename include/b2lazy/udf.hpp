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
