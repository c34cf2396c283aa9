// Helpers shared by the C++ tests.
#pragma once
#include "b2lazy/b2lazy.hpp"

namespace b2lazy::test {

// `x` evaluated into an in-memory b2nd array with the given chunks and blocks.
inline Array stored(const Array& x, Shape chunks, Shape blocks, Context& ctx) {
  ComputeOptions o;
  o.chunks = std::move(chunks);
  o.blocks = std::move(blocks);
  return x.compute(o, &ctx);
}

}  // namespace b2lazy::test
