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
#include "exec/block_window.hpp"
#include "exec/carry_board.hpp"
#include "exec/fetch_cache.hpp"
#include "exec/node_cache.hpp"
#include "exec/sibling_group.hpp"

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
  // Between passes (no task running): every thread's scratch gives back what it holds free.
  void trim_scratch();
  ThreadState& main();           // the calling thread's state
  ThreadState& worker(int i);    // worker i's state
  int nworkers() const;

  // Written only between passes (the plan's stages); read concurrently during a pass.
  std::unordered_map<const Node*, Materialized> materialized;
  std::atomic<int64_t> cache_hits{0}, cache_misses{0};
  int64_t sources_kept = 0, stages_reused = 0;

  // Counters of every thread state, summed.
  void collect(Stats& stats) const;

  // Set once a task of the running pass failed: tasks waiting for another's carry stop.
  std::atomic<bool> failing{false};
  // Carries passed between output chunks (a run of every task in order): by the node
  // that passes them (PlanStage::carried_by). Made before the output pass, read during it.
  std::unordered_map<const Node*, std::unique_ptr<CarryBoard>> carries;
  CarryBoard* carry_board(const Node* n) const {
    if (carries.empty()) return nullptr;
    auto it = carries.find(n);
    return it == carries.end() ? nullptr : it->second.get();
  }
  // Windows of decompressed blocks of sources (Plan::windows): made before the first
  // pass, read by every pass.
  std::unordered_map<const Node*, std::unique_ptr<BlockWindow>> windows;
  BlockWindow* block_window(const Node* n) const {
    if (windows.empty()) return nullptr;
    auto it = windows.find(n);
    return it == windows.end() ? nullptr : it->second.get();
  }
  // Store reads fetched ahead or read before (Plan::fetch_bytes): made before the first
  // pass; sources read through it (fetch_read).
  std::unique_ptr<FetchCache> fetch;
  // Sibling reductions evaluated in lockstep (Plan::siblings), by member: made before the
  // first pass, read by every pass.
  std::unordered_map<const Node*, std::shared_ptr<SiblingGroup>> siblings;
  SiblingGroup* sibling_group(const Node* n) const {
    if (siblings.empty()) return nullptr;
    auto it = siblings.find(n);
    return it == siblings.end() ? nullptr : it->second.get();
  }
  // Output chunk `id` has been written: its carries, if any, are all put.
  void chunk_done(int64_t id);

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
