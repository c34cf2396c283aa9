// State shared by the threads of one execution of a plan: the thread states and their
// per-node caches, and the plan's stages once computed (read by every chunk that needs
// them). Nodes see it as an Evaluation (runtime/evaluation.hpp); the executor sets it up.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "b2lazy/node.hpp"
#include "b2lazy/stats.hpp"
#include "runtime/block_window.hpp"
#include "runtime/carry_board.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/fetch_cache.hpp"
#include "runtime/node_cache.hpp"
#include "runtime/sibling_group.hpp"

namespace b2lazy {

class Context;
class ThreadState;

class EvalState final : public Evaluation {
 public:
  EvalState(Context& ctx, size_t max_memory);
  ~EvalState() override;
  Context& ctx;
  const std::atomic<bool>* cancel = nullptr;  // ComputeOptions::cancel

  // --- Evaluation
  int workers() const override { return static_cast<int>(workers_.size()); }
  size_t max_memory() const override { return max_memory_; }
  // (Two relaxed loads.)
  void check_cancel() const override;
  bool failing() const override { return failing_.load(std::memory_order_relaxed); }
  void parallel_for(int64_t ntasks, const std::function<void(int64_t, int, ThreadState&)>& fn) override;
  const Materialized* stage(const Node* n) const override {
    if (materialized.empty()) return nullptr;
    auto it = materialized.find(n);
    return it == materialized.end() ? nullptr : &it->second;
  }
  CarryBoard* carry(const Node* n) const override { return find(carries, n); }
  BlockWindow* window(const Node* n) const override { return find(windows, n); }
  SiblingGroup* siblings(const Node* n) const override { return find(sibling_groups, n); }
  FetchCache* fetch() const override { return fetch_cache.get(); }
  std::shared_ptr<void> shared_state(const Node* n, const std::function<std::shared_ptr<void>()>& make) override;

  // Between passes (no task running): every thread's scratch gives back what it holds free.
  void trim_scratch();
  ThreadState& main();         // the calling thread's state
  ThreadState& worker(int i);  // worker i's state

  // Written only between passes (the plan's stages); read concurrently during a pass.
  std::unordered_map<const Node*, Materialized> materialized;
  std::atomic<int64_t> cache_hits{0}, cache_misses{0};
  int64_t sources_kept = 0, stages_reused = 0;

  // Counters of every thread state, summed.
  void collect(Stats& stats) const;

  // Carries passed between output chunks (a run of every task in order): by the node
  // that passes them (PlanStage::carried_by). Made before the output pass, read during it.
  std::unordered_map<const Node*, std::unique_ptr<CarryBoard>> carries;
  // Windows of decompressed blocks of sources (Plan::windows): made before the first
  // pass, read by every pass.
  std::unordered_map<const Node*, std::unique_ptr<BlockWindow>> windows;
  // Store reads fetched ahead or read before (Plan::fetch_bytes): made before the first
  // pass; sources read through it (fetch_read).
  std::unique_ptr<FetchCache> fetch_cache;
  // Sibling reductions evaluated in lockstep (Plan::siblings), by member: made before the
  // first pass, read by every pass.
  std::unordered_map<const Node*, std::shared_ptr<SiblingGroup>> sibling_groups;
  // Output chunk `id` has been written: its carries, if any, are all put.
  void chunk_done(int64_t id);

 private:
  template <class Map> static auto find(const Map& m, const Node* n) -> decltype(m.begin()->second.get()) {
    if (m.empty()) return nullptr;
    auto it = m.find(n);
    return it == m.end() ? nullptr : it->second.get();
  }

  size_t max_memory_;
  // Set once a task of the running pass failed: tasks waiting for another's carry stop.
  std::atomic<bool> failing_{false};
  std::unique_ptr<ThreadState> main_;
  std::vector<std::unique_ptr<ThreadState>> workers_;
  // Per-node state of each thread state (kept bands, lent values), owned here: by the
  // execution of the plan, not by the threads.
  std::unique_ptr<NodeCache> main_nodes_;
  std::vector<std::unique_ptr<NodeCache>> worker_nodes_;
  // Node::shared_state's objects, each made under its slot's lock (the map's lock is held
  // only to find the slot). Declared last: dropped first.
  struct SharedSlot {
    std::mutex mu;
    std::shared_ptr<void> value;
  };
  std::mutex shared_mu_;
  std::unordered_map<const Node*, std::shared_ptr<SharedSlot>> shared_;
};

}  // namespace b2lazy
