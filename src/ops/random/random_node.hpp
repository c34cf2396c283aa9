// The source node of b2lazy/random.hpp: fills any region from its elements' counters.
#pragma once
#include <string>

#include "b2lazy/node.hpp"
#include "b2lazy/philox.hpp"
#include "b2lazy/vocabulary.hpp"

namespace b2lazy {

enum class RandomDist : uint8_t { Uniform, Normal, Integers };

struct RandomParams {
  RandomDist dist = RandomDist::Uniform;
  RandomKey key;
  double a = 0, b = 1;         // uniform: low, high; normal: loc, scale
  uint64_t low = 0, span = 0;  // integers: low (two's complement), count (0: 2**64)
};

class RandomNode : public Node {
 public:
  RandomNode(DType dtype, Shape shape, Shape chunks, RandomParams p);
  std::string kind() const override { return "random"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  const ChunkGrid* storage_grid() const override { return chunks_.empty() ? nullptr : &grid_; }

 private:
  RandomParams p_;
  Shape chunks_;
  ChunkGrid grid_;
};

}  // namespace b2lazy
