// An array whose units (a fixed grid) are objects "u/<id>" of a ByteStore, each the
// unit's raw items in C order (padded to the unit's shape at the edges): the smallest
// store-backed source, for the tests and benchmarks of the plan's prefetch
// (exec/prefetcher.hpp), and the example of how a source opts into it — store_reads()
// lists a pull's reads, read_unit() reads through fetch_read().
#pragma once
#include "b2lazy/byte_store.hpp"
#include "io/unit_source.hpp"

namespace b2lazy {

class StoreUnitsSource : public UnitSource {
 public:
  // prefetch false: not opted in (the benchmark's and tests' comparison).
  StoreUnitsSource(StorePtr store, DType dtype, Shape shape, Shape units, bool prefetch = true);
  std::string kind() const override { return "store_units"; }
  std::string source_name() const override { return name_; }
  // The prefetch's two: one read per unit a pull touches, of at most a unit's bytes.
  void store_reads(const Region& region, std::vector<StoreRead>& out) const override;
  int64_t store_read_bytes() const override { return prefetch_ ? unit_bytes_ : 0; }
  static std::string unit_key(int64_t id) { return "u/" + std::to_string(id); }

 protected:
  void read_unit(int64_t id, void* dst, ThreadState& ts) const override;

 private:
  StorePtr store_;
  std::string name_;
  int64_t unit_bytes_;
  bool prefetch_;
};

}  // namespace b2lazy
