// kernels::lookup / lookup_cast: a [op][dtype] table filled once by the kernels_*.cpp files.
#include "kernel_util.hpp"

namespace b2lazy::kernels {

static const detail::Table& table() {
  static const detail::Table tab = [] {
    detail::Table t;
    detail::register_arith(t);
    detail::register_math(t);
    detail::register_compare(t);
    detail::register_special(t);
    detail::register_complex(t);
    detail::register_half(t);
    return t;
  }();
  return tab;
}

BlockFn lookup(Op op, DType t) {
  if (op >= Op::Count_ || static_cast<int>(t) >= kNumDTypes) return nullptr;
  return table().fn[static_cast<size_t>(op)][static_cast<size_t>(t)];
}

BlockFn lookup_cast(DType from, DType to) {
  if (static_cast<int>(from) >= kNumDTypes || static_cast<int>(to) >= kNumDTypes) return nullptr;
  return table().cast[static_cast<size_t>(from)][static_cast<size_t>(to)];
}

}  // namespace b2lazy::kernels
