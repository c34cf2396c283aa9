// State shared by the threads of one evaluation: the thread states, and the nodes the
// planner materialised (computed once, read by every output chunk that needs them).
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "b2lazy/node.hpp"
#include "b2lazy/stats.hpp"

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

  // Written only between passes; read concurrently during a pass.
  std::unordered_map<const Node*, Materialized> materialized;
  std::atomic<int64_t> cache_hits{0}, cache_misses{0};
  // Nodes under which the planner has nothing left to find: every cacheable node reachable
  // from them (through nodes not materialised) is materialised. Only grows, so planning
  // the subgraph of each materialised node again costs no walk of what is settled.
  std::unordered_set<const Node*> settled;
  // Nodes visited by the reuse planner over this evaluation (Stats::plan_visits).
  int64_t plan_visits = 0;

  // Counters of every thread state, summed.
  void collect(Stats& stats) const;

  // Runs fn(task, worker, worker's state) for every task in [0, ntasks), handed out
  // dynamically to at most ntasks workers; stops early and rethrows the first exception.
  void parallel_for(int64_t ntasks, const std::function<void(int64_t, int, ThreadState&)>& fn);

 private:
  std::unique_ptr<ThreadState> main_;
  std::vector<std::unique_ptr<ThreadState>> workers_;
};

}  // namespace b2lazy
