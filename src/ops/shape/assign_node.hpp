// x[key] = value as a lazy node: `old` everywhere except at the strided box the key
// selects, where `value` (shaped like that box) is. A pull reads old's region and only the
// part of value that falls inside it.
#pragma once
#include "b2lazy/node.hpp"

namespace b2lazy {

// Per axis of the assigned array: the key's positions start + j*step (step >= 1), j < count.
struct KeyAxis {
  int64_t start, step, count;
};

// Where a key meets `region` (steps of either sign): along each axis the region's indices
// i0 + t*period (t < count), which are the value's indices j0 + t*jstep (jstep < 0 when
// the region walks backwards). False when they do not meet.
struct KeyMeet {
  Shape i0, period, count, j0, jstep;
  Region value_region() const;  // the value's part
};
bool key_meets(const std::vector<KeyAxis>& key, const Region& region, KeyMeet& m);
// The value's part `value` (dense, shape m.count) written into `out` (dense, the region's
// shape `region_count`) at the positions the key meets.
void scatter_meet(const KeyMeet& m, const Shape& region_count, const void* value, void* out, size_t itemsize);

class AssignNode : public Node {
 public:
  // `value` has shape (count per axis of `key`) and old's dtype.
  AssignNode(NodePtr old, NodePtr value, std::vector<KeyAxis> key);
  std::string kind() const override { return "assign"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;

 private:
  std::vector<KeyAxis> axes_;
};

}  // namespace b2lazy
