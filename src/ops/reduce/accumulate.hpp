// Folding a dense slab into per-output accumulators. The slab has the output region's
// extent on kept axes and any extent on reduced ones; `red[d]` marks reduced axes.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "b2lazy/box.hpp"
#include "core/dispatch.hpp"

namespace b2lazy::accum {

// a + b and a * b; integers wrap modulo 2**64 as NumPy's (a signed overflow is undefined in C++).
template <class A> inline A add(A a, A b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else return A(a + b);
}
template <class A> inline A mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else return A(a * b);
}

// Accumulator offset strides over the slab's axes: 0 on reduced axes.
inline Shape acc_strides(const Shape& count, const std::vector<bool>& red) {
  Shape st(count.size(), 0);
  int64_t acc = 1;
  for (size_t d = count.size(); d-- > 0;) {
    if (red[d]) continue;
    st[d] = acc;
    acc *= count[d];
  }
  return st;
}

// Calls row(in_offset, acc_offset, n, inner_reduced) for each innermost row of the slab.
template <class Row> void for_each_row(const Shape& count, const std::vector<bool>& red, Row&& row) {
  const size_t nd = count.size();
  for (auto c : count)
    if (c == 0) return;
  if (nd == 0) {
    row(int64_t(0), int64_t(0), int64_t(1), false);
    return;
  }
  Shape ast = acc_strides(count, red);
  const int64_t inner = count[nd - 1];
  std::vector<int64_t> idx(nd, 0);
  int64_t in_off = 0, acc_off = 0;
  while (true) {
    row(in_off, acc_off, inner, static_cast<bool>(red[nd - 1]));
    in_off += inner;
    size_t d = nd - 1;
    while (d-- > 0) {
      acc_off += ast[d];
      if (++idx[d] < count[d]) break;
      acc_off -= ast[d] * count[d];
      idx[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

// acc[k] = f(acc[k], x) over the slab. Inner reductions fold into 8 partials seeded with
// `ident` (f's identity) and join them with combine(a, partial), which must be
// associative; f's own fold may differ from it (a count adds 1 per value, its partials
// add as numbers).
template <class X, class A, class F, class G>
void fold(const X* in, const Shape& count, const std::vector<bool>& red, A* acc, F f, A ident, G combine) {
  for_each_row(count, red, [&](int64_t io, int64_t ao, int64_t n, bool inner_red) {
    const X* __restrict x = in + io;
    if (inner_red) {
      A a = acc[ao];
      int64_t i = 0;
      if (n >= 16) {  // 8 independent partials: vectorises and hides the add latency
        A p[8];
        for (int j = 0; j < 8; ++j) p[j] = ident;
        for (i = 0; i + 8 <= n; i += 8)
          for (int j = 0; j < 8; ++j) p[j] = f(p[j], x[i + j]);
        for (int j = 0; j < 8; ++j) a = combine(a, p[j]);
      }
      for (; i < n; ++i) a = f(a, x[i]);
      acc[ao] = a;
    } else {
      A* __restrict a = acc + ao;
      for (int64_t i = 0; i < n; ++i) a[i] = f(a[i], x[i]);
    }
  });
}
// The same, where f combines partials too (sum, min, ...).
template <class X, class A, class F>
void fold(const X* in, const Shape& count, const std::vector<bool>& red, A* acc, F f, A ident) {
  fold(in, count, red, acc, f, ident, f);
}

// g(k, x, j) over the slab: k the accumulator index, j = j0 + sum(idx[d] * rst[d]),
// e.g. the element's flat index in the reduced sub-space of the whole input.
template <class A, class G>
void fold_indexed(const A* in, const Shape& count, const std::vector<bool>& red, const Shape& rst, int64_t j0, G g) {
  const size_t nd = count.size();
  Shape ast = acc_strides(count, red);
  std::vector<int64_t> idx(nd, 0);
  const int64_t n = prod(count);
  int64_t k = 0, j = j0;
  for (int64_t e = 0; e < n; ++e) {
    g(k, in[e], j);
    for (size_t d = nd; d-- > 0;) {
      k += ast[d];
      j += rst[d];
      if (++idx[d] < count[d]) break;
      k -= ast[d] * count[d];
      j -= rst[d] * count[d];
      idx[d] = 0;
    }
  }
}

template <class A> inline bool is_nan(A x) {
  if constexpr (std::is_floating_point_v<A>) return std::isnan(x);
  else if constexpr (is_complex_v<A>) return std::isnan(x.real()) || std::isnan(x.imag());
  else return false;
}

}  // namespace b2lazy::accum
