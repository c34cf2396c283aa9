#include "b2lazy/checked.hpp"

#include <string>

#include "b2lazy/error.hpp"

namespace b2lazy {

namespace {
// The product of the nonzero extents (as NumPy, a zero extent does not excuse the others
// from fitting: strides are products of them), or false when it overflows.
bool extents_product(const Shape& shape, int64_t& p, bool& zero) {
  p = 1;
  zero = false;
  for (int64_t v : shape) {
    if (v == 0) zero = true;
    else if (__builtin_mul_overflow(p, v, &p)) return false;
  }
  return true;
}
}  // namespace

void throw_int64_overflow(std::string_view what) { throw ValueError(std::string(what) + " does not fit in int64"); }

int64_t checked_prod(const Shape& shape, std::string_view what) {
  int64_t p;
  bool zero;
  if (!extents_product(shape, p, zero))
    throw ValueError(std::string(what) + " " + shape_str(shape) + " has more elements than fit in int64");
  return zero ? 0 : p;
}

int64_t checked_nbytes(const Shape& shape, size_t itemsize, std::string_view what) {
  int64_t p, bytes;
  bool zero;
  if (!extents_product(shape, p, zero))
    throw ValueError(std::string(what) + " " + shape_str(shape) + " has more elements than fit in int64");
  if (__builtin_mul_overflow(p, static_cast<int64_t>(itemsize), &bytes))
    throw ValueError(std::string(what) + " " + shape_str(shape) + " of " + std::to_string(itemsize) +
                     "-byte items has more bytes than fit in int64");
  return zero ? 0 : bytes;
}

void check_array_size(const Shape& shape, DType dtype) {
  for (int64_t v : shape)
    if (v < 0) throw ValueError("negative dimensions are not allowed: shape " + shape_str(shape));
  int64_t p, bytes;
  bool zero;
  if (!extents_product(shape, p, zero))
    throw ValueError("shape " + shape_str(shape) + " has more elements than fit in int64");
  if (__builtin_mul_overflow(p, static_cast<int64_t>(itemsize(dtype)), &bytes))
    throw ValueError("an array of shape " + shape_str(shape) + " and dtype " + dtype_name(dtype) +
                     " has more bytes than fit in int64");
}

}  // namespace b2lazy
