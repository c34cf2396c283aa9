#include <memory>
#include <utility>

#include "b2lazy/store_units.hpp"
#include "io/store/store_units_source.hpp"

namespace b2lazy {

Array store_units_array(StorePtr store, DType dtype, Shape shape, Shape units, bool prefetch) {
  return Array(
      std::make_shared<StoreUnitsSource>(std::move(store), dtype, std::move(shape), std::move(units), prefetch));
}

}  // namespace b2lazy
