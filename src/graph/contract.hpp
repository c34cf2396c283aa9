// The contraction every product builds on (linalg_builder.cpp): a of axes
// (batch..., M..., K...) times b of axes (batch..., K..., N...) -> (batch..., M..., N...),
// in the operands' promoted dtype (float16 through float32), as one matmul node.
#pragma once
#include <cstddef>

#include "b2lazy/array.hpp"

namespace b2lazy {

Array contract(const Array& a, const Array& b, size_t nbatch, size_t nm, size_t nk, size_t nn, Shape out_shape);

}  // namespace b2lazy
