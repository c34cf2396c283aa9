// Carries handed from output chunk to output chunk during one run of every task of a
// plan (PlanStage::carried_by): the chunk whose region of a node ends at a position puts
// its carry there; the one chunk whose region starts there takes it, waiting while the
// chunk that puts it (always an earlier one, claimed before it) is still running.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_set>
#include <vector>

#include "b2lazy/plan.hpp"

namespace b2lazy {

class Evaluation;

class CarryBoard {
 public:
  explicit CarryBoard(std::shared_ptr<const CarryLinks> links) : links_(std::move(links)) {}
  // Is the carry at `key` one some chunk puts (and another takes)?
  bool linked(const Shape& key) const { return links_->producer.count(key) > 0; }
  void put(const Shape& key, std::vector<uint8_t> carry);
  // The carry at `key`: waits for it while its chunk runs (checking cancellation and the
  // failure of other tasks); nothing when that chunk ended without putting it, or when no
  // chunk puts it: the caller then computes it another way.
  std::optional<std::vector<uint8_t>> take(const Shape& key, const Evaluation& ev);
  // Output chunk `id` is done (whatever it put).
  void chunk_done(int64_t id);

 private:
  std::shared_ptr<const CarryLinks> links_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Shape, std::vector<uint8_t>> carries_;
  std::unordered_set<int64_t> done_;  // producer chunks that have ended
};

}  // namespace b2lazy
