// An array whose units (a fixed grid of `units`) are the objects "u/<id>" of a byte store,
// each the unit's raw items in C order, padded at the edges (src/io/store/
// store_units_source.hpp): the test source of the plan's prefetch. prefetch false: the
// source does not opt in (the comparison of the tests and bench/bench_prefetch.py).
#pragma once
#include "b2lazy/array.hpp"
#include "b2lazy/byte_store.hpp"

namespace b2lazy {

Array store_units_array(StorePtr store, DType dtype, Shape shape, Shape units, bool prefetch = true);

}  // namespace b2lazy
