#include "io/store/store_units_source.hpp"

#include <cstring>

#include "b2lazy/error.hpp"
#include "core/saturating.hpp"
#include "runtime/fetch_cache.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

StoreUnitsSource::StoreUnitsSource(StorePtr store, DType dtype, Shape shape, Shape units, bool prefetch)
    : UnitSource(dtype, std::move(shape)), store_(std::move(store)), name_(store_->root()), prefetch_(prefetch) {
  if (units.size() != ndim())
    throw ValueError("store units: units of " + std::to_string(units.size()) + " axes for " + std::to_string(ndim()));
  for (int64_t u : units)
    if (u <= 0) throw ValueError("store units: a unit's extent must be positive");
  read_grid_ = ChunkGrid(this->shape(), units);
  unit_bytes_ = sat_mul(prod(units), static_cast<int64_t>(itemsize(dtype)));
}

void StoreUnitsSource::store_reads(const Region& region, std::vector<StoreRead>& out) const {
  std::vector<int64_t> ids;
  blocks_touched(region, ids);  // the units, in the order fill() reads them
  for (int64_t id : ids) out.push_back({store_, unit_key(id), {{0, -1}}});
}

void StoreUnitsSource::read_unit(int64_t id, void* dst, ThreadState& ts) const {
  const std::string key = unit_key(id);
  std::optional<ByteStore::Parts> parts = fetch_read(ts, {store_, key, {{0, -1}}});
  if (!parts) throw IOError("store units: " + store_->url_of(key) + " does not exist");
  const std::vector<uint8_t>& b = parts->at(0);
  if (static_cast<int64_t>(b.size()) != unit_bytes_)
    throw IOError("store units: " + store_->url_of(key) + " holds " + std::to_string(b.size()) + " bytes, not " +
                  std::to_string(unit_bytes_));
  std::memcpy(dst, b.data(), b.size());
  ts.decompressed[this][id]++;
  ts.decompressed_bytes[this] += unit_bytes_;
}

}  // namespace b2lazy
