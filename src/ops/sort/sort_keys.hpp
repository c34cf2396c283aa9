// Sort keys: every dtype's values as uint64 whose unsigned order is the sort order
// (NaNs after every number in either direction, as NumPy puts them), sorted by Highway's
// vqsort (vectorised: AVX-512/AVX2 where the CPU has them). Argsort sorts 128-bit
// (key, position) pairs, so equal keys keep their order: stable.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace b2lazy::sortkey {

// The key every NaN gets, and what pads a run of sorted values: after everything.
constexpr uint64_t kLast = std::numeric_limits<uint64_t>::max();

// `canonical_zero`: -0.0 gets 0.0's key (argsort: NumPy keeps equal values, -0.0 == 0.0,
// in their order); a values sort keeps them apart, so from_key gives each one back.
template <class T> uint64_t to_key(T v, bool descending, bool canonical_zero = false) {
  uint64_t u;
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) return kLast;
    if (canonical_zero && v == T(0)) v = T(0);
    using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    constexpr Bits sign = Bits(1) << (sizeof(T) * 8 - 1);
    Bits b;
    std::memcpy(&b, &v, sizeof b);
    b = (b & sign) ? static_cast<Bits>(~b) : static_cast<Bits>(b | sign);
    u = b;
  } else if constexpr (std::is_signed_v<T>) {
    u = static_cast<uint64_t>(static_cast<int64_t>(v)) ^ (uint64_t(1) << 63);
  } else {
    u = static_cast<uint64_t>(v);
  }
  // Descending: the order reversed among the numbers; a float's NaN key stays last (the
  // complement of a number's key is never kLast: only a NaN's bits would give it).
  return descending ? ~u : u;
}

template <class T> T from_key(uint64_t k, bool descending) {
  if constexpr (std::is_floating_point_v<T>) {
    if (k == kLast) return std::numeric_limits<T>::quiet_NaN();
    if (descending) k = ~k;
    using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    constexpr Bits sign = Bits(1) << (sizeof(T) * 8 - 1);
    Bits b = static_cast<Bits>(k);
    b = (b & sign) ? static_cast<Bits>(b & ~sign) : static_cast<Bits>(~b);
    T v;
    std::memcpy(&v, &b, sizeof v);
    return v;
  } else {
    if (descending) k = ~k;
    if constexpr (std::is_signed_v<T>) return static_cast<T>(static_cast<int64_t>(k ^ (uint64_t(1) << 63)));
    else return static_cast<T>(k);
  }
}

// A position with its key: sorted by key, then position (little-endian: lo first, as
// Highway's uint128_t).
struct alignas(16) KeyPos {
  uint64_t pos;
  uint64_t key;
};

// Ascending, in place, on this thread (each thread keeps its own sorter).
void sort_keys(uint64_t* keys, size_t n);
void sort_pairs(KeyPos* pairs, size_t n);

// The keys of the `len` values v[0], v[stride], ..., padded with kLast to `size`, sorted.
template <class T>
void sorted_keys(const T* v, int64_t len, int64_t stride, size_t size, bool descending, std::vector<uint64_t>& keys) {
  keys.assign(size, kLast);
  for (int64_t i = 0; i < len; ++i) keys[static_cast<size_t>(i)] = to_key(v[i * stride], descending);
  sort_keys(keys.data(), keys.size());
}

// Their (first + i, key) pairs (-0.0 keyed as 0.0), padded likewise, sorted by key then
// position: a stable order.
template <class T>
void sorted_pairs(const T* v, int64_t len, int64_t stride, size_t size, uint64_t first, bool descending,
                  std::vector<KeyPos>& pairs) {
  pairs.resize(size);
  for (size_t i = 0; i < size; ++i) {
    const int64_t k = static_cast<int64_t>(i);
    pairs[i] = {first + i, k < len ? to_key(v[k * stride], descending, true) : kLast};
  }
  sort_pairs(pairs.data(), pairs.size());
}

}  // namespace b2lazy::sortkey
