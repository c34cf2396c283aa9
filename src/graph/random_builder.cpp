// Builders of b2lazy/random.hpp: argument checks, then one RandomNode.
#include <cmath>
#include <limits>

#include "b2lazy/error.hpp"
#include "b2lazy/random.hpp"
#include "ops/random/random_node.hpp"
#include "plan/layout.hpp"

namespace b2lazy {

namespace {
Array make(const char* fn, const Shape& shape, const Shape& chunks, DType t, RandomParams p) {
  for (int64_t s : shape)
    if (s < 0)
      throw ValueError(std::string(fn) + ": negative dimensions are not allowed, got shape " + shape_str(shape));
  Shape c = checked_chunks(shape, chunks, fn);
  return Array(std::make_shared<RandomNode>(t, shape, c, p));
}

void check_float(const char* fn, DType t) {
  if (t != DType::F32 && t != DType::F64)
    throw TypeError(std::string(fn) + ": dtype must be float32 or float64, got " + dtype_name(t));
}
}  // namespace

Array random_uniform(const Shape& shape, double low, double high, RandomKey key, DType dtype, const Shape& chunks) {
  check_float("random_uniform", dtype);
  if (!std::isfinite(low) || !std::isfinite(high) || !std::isfinite(high - low))
    throw ValueError("random_uniform: low and high must be finite and high - low too, got low=" + std::to_string(low) +
                     ", high=" + std::to_string(high));
  RandomParams p;
  p.dist = RandomDist::Uniform, p.key = key, p.a = low, p.b = high;
  return make("random_uniform", shape, chunks, dtype, p);
}

Array random_normal(const Shape& shape, double loc, double scale, RandomKey key, DType dtype, const Shape& chunks) {
  check_float("random_normal", dtype);
  if (!(scale >= 0) || !std::isfinite(scale) || !std::isfinite(loc))
    throw ValueError("random_normal: loc must be finite and scale finite and >= 0, got loc=" + std::to_string(loc) +
                     ", scale=" + std::to_string(scale));
  RandomParams p;
  p.dist = RandomDist::Normal, p.key = key, p.a = loc, p.b = scale;
  return make("random_normal", shape, chunks, dtype, p);
}

Array random_integers(const Shape& shape, int64_t low, uint64_t span, RandomKey key, DType dtype, const Shape& chunks) {
  if (!is_integral(dtype))
    throw TypeError(std::string("random_integers: dtype must be an integer dtype, got ") + dtype_name(dtype));
  // The values low .. low + span - 1 must fit the dtype.
  const bool is_unsigned = kind(dtype) == DKind::Unsigned;  // (a uint64 low above 2**63: its two's complement)
  const __int128 lo = is_unsigned ? static_cast<__int128>(static_cast<uint64_t>(low)) : static_cast<__int128>(low);
  const __int128 hi = lo + (span ? static_cast<__int128>(span) : (__int128(1) << 64)) - 1;
  __int128 tmin, tmax;
  if (kind(dtype) == DKind::Signed) {
    const int bits = static_cast<int>(itemsize(dtype)) * 8;
    tmin = -(__int128(1) << (bits - 1)), tmax = (__int128(1) << (bits - 1)) - 1;
  } else {
    tmin = 0, tmax = (__int128(1) << (itemsize(dtype) * 8)) - 1;
  }
  auto str = [](__int128 v) {
    const bool neg = v < 0;
    unsigned __int128 u = neg ? static_cast<unsigned __int128>(-v) : static_cast<unsigned __int128>(v);
    std::string s;
    do s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10))), u /= 10;
    while (u);
    return neg ? "-" + s : s;
  };
  if (lo < tmin) throw ValueError("random_integers: low=" + str(lo) + " is out of bounds for " + dtype_name(dtype));
  if (hi > tmax)
    throw ValueError("random_integers: high=" + str(hi + 1) + " is out of bounds for " + dtype_name(dtype));
  RandomParams p;
  p.dist = RandomDist::Integers, p.key = key, p.low = static_cast<uint64_t>(low), p.span = span;
  return make("random_integers", shape, chunks, dtype, p);
}

}  // namespace b2lazy
