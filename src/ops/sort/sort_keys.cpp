#include "ops/sort/sort_keys.hpp"

#include <hwy/contrib/sort/vqsort.h>

namespace b2lazy::sortkey {

static_assert(sizeof(KeyPos) == sizeof(hwy::uint128_t) && alignof(KeyPos) == alignof(hwy::uint128_t));

namespace {
// A sorter holds a buffer and is not to be shared between threads.
const hwy::Sorter& sorter() {
  thread_local hwy::Sorter s;
  return s;
}
}  // namespace

void sort_keys(uint64_t* keys, size_t n) {
  if (n > 1) sorter()(keys, n, hwy::SortAscending());
}

void sort_pairs(KeyPos* pairs, size_t n) {
  if (n > 1) sorter()(reinterpret_cast<hwy::uint128_t*>(pairs), n, hwy::SortAscending());
}

}  // namespace b2lazy::sortkey
