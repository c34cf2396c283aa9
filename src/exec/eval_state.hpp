// State shared by the threads of one execution of a plan: the thread states and their
// per-node caches, and the plan's stages once computed (read by every chunk that needs them).
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "b2lazy/node.hpp"
#include "b2lazy/stats.hpp"
#include "exec/node_cache.hpp"

namespace b2lazy {

class Context;
class ThreadState;

struct Materialized {
  Box box;         // the part of the node that was computed
  NodePtr source;  // holds exactly `box` (shape box.shape())
};

class EvalState {
 public:
  EvalState(Context& ctx, size_t max_memory);
  ~EvalState();
  Context& ctx;
  size_t max_memory;
  const std::atomic<bool>* cancel = nullptr;  // ComputeOptions::cancel
  // Throws Cancelled once `cancel` or the process-wide interrupt flag is set: called
  // before every output chunk, parallel task and pull (two relaxed loads).
  void check_cancel() const;
  ThreadState& main();           // the calling thread's state
  ThreadState& worker(int i);    // worker i's state
  int nworkers() const;

  // Written only between passes (the plan's stages); read concurrently during a pass.
  std::unordered_map<const Node*, Materialized> materialized;
  std::atomic<int64_t> cache_hits{0}, cache_misses{0};
  int64_t sources_kept = 0, stages_reused = 0;

  // Counters of every thread state, summed.
  void collect(Stats& stats) const;

  // Runs fn(task, worker, worker's state) for every task in [0, ntasks), handed out
  // dynamically to at most ntasks workers; stops handing out tasks at the first exception
  // and rethrows the exception of the lowest-numbered task that failed (deterministic).
  void parallel_for(int64_t ntasks, const std::function<void(int64_t, int, ThreadState&)>& fn);

 private:
  std::unique_ptr<ThreadState> main_;
  std::vector<std::unique_ptr<ThreadState>> workers_;
  // Per-node state of each thread state (kept bands, lent values), owned here: by the
  // execution of the plan, not by the threads.
  std::unique_ptr<NodeCache> main_nodes_;
  std::vector<std::unique_ptr<NodeCache>> worker_nodes_;
};

}  // namespace b2lazy
