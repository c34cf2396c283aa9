// The stages of a plan once computed, kept with the plan (Plan::stage_results) so that
// execute() calls over ranges of its tasks compute them on the first call only; the
// distributed executor hands such ranges to workers.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "runtime/evaluation.hpp"

namespace b2lazy {

// Stages computed by the earlier plans of one compute_all() (b2lazy/compute_all.hpp), by
// node: a later plan's stage of the same node, within the box held, is read from here.
struct CarriedStage {
  Materialized m;
  int64_t memory = 0;  // bytes it holds in memory (0: spilled to a temporary file)
  // Does it hold all of `box` (a later plan's stage of the same node)?
  bool holds(const Box& box) const { return m.box.ndim() == box.ndim() && m.box.contains(box); }
};
using CarriedStages = std::unordered_map<const Node*, CarriedStage>;

struct StageResults {
  std::mutex mu;       // held while the stages are computed: a concurrent call waits for them
  bool ready = false;  // set once every stage is in `results`
  std::unordered_map<const Node*, Materialized> results;
  // Set by compute_all: read before computing a stage, and given the stages computed.
  std::shared_ptr<CarriedStages> carried;
};

}  // namespace b2lazy
