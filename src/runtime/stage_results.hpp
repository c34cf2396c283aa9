// The stages of a plan once computed, kept with the plan (Plan::stage_results) so that
// execute() calls over ranges of its tasks compute them on the first call only; the
// distributed executor hands such ranges to workers.
#pragma once
#include <mutex>
#include <unordered_map>

#include "runtime/evaluation.hpp"

namespace b2lazy {

struct StageResults {
  std::mutex mu;       // held while the stages are computed: a concurrent call waits for them
  bool ready = false;  // set once every stage is in `results`
  std::unordered_map<const Node*, Materialized> results;
};

}  // namespace b2lazy
