// Several arrays evaluated together, sharing the work their graphs have in common.
#pragma once
#include <vector>

#include "b2lazy/array.hpp"
#include "b2lazy/context.hpp"

namespace b2lazy {

// Each array computed as Array::compute(opts) would (one options entry for all, or one
// per array), in order. The first computed node a later array reaches that an earlier
// array's plan also has (a factorisation, a reduction, a product) is kept by that plan (a
// stage over the part it computes) and read from there by the later plans instead of
// computed again: qr's Q and R factor once, svd_compressed's U, S and Vh share their passes
// over the matrix. A stage is kept between the evaluations only while a
// later plan reads it, and kept in memory only while it fits beside that plan's projected
// peak within max_memory. Every plan is checked against its budget before any is run.
std::vector<Array> compute_all(const std::vector<Array>& arrays, const std::vector<ComputeOptions>& opts,
                               Context* ctx = nullptr);

}  // namespace b2lazy
