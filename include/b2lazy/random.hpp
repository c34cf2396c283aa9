// Counter-based random arrays (b2lazy.random): every element's value is a function of
// (seed, stream, its flat C-order index) alone — Philox4x32-10 (Salmon et al., SC'11,
// from Debian's Random123) keyed by the seed, its counter the index and the stream — so
// any region is computed on its own and equals the same region of the whole array,
// whatever the chunking, the thread count or the region asked for. Lazy like arange.
#pragma once
#include <array>
#include <cstdint>
#include <optional>

#include "b2lazy/array.hpp"
#include "b2lazy/philox.hpp"

namespace b2lazy {

// Uniform values in [low, high): low + (high - low) * u, u from the top 53 random bits
// (float64) or 24 (float32) of a 64-bit word: elements 2p and 2p + 1 take the two halves of
// block p (counter (p, 0, stream, 0)). dtype float32 or float64.
Array random_uniform(const Shape& shape, double low, double high, RandomKey key, DType dtype = DType::F64,
                     const Shape& chunks = {});
// Normal values loc + scale * z, z by Box–Muller on block p's 128 bits: element 2p takes
// the cosine, 2p + 1 the sine.
Array random_normal(const Shape& shape, double loc, double scale, RandomKey key, DType dtype = DType::F64,
                    const Shape& chunks = {});
// Integers in [low, low + span) (span 0: all 2**64 values), without modulo bias (Lemire's
// multiply-and-reject, its retries drawn from the element's own counters). Every value
// must fit `dtype` (an integer dtype): a ValueError names the bound that does not.
Array random_integers(const Shape& shape, int64_t low, uint64_t span, RandomKey key, DType dtype = DType::I64,
                      const Shape& chunks = {});

}  // namespace b2lazy
