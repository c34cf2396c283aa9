// Plan-driven prefetch: while the workers compute task k, the store reads of the tasks
// after it (Node::store_reads of the sources below each task's output chunks, walked as
// the planner walks them, plan/propagate.hpp) are in flight, in task order, each sent
// once, as far ahead as the cache of fetched bytes has room (Plan::fetch_bytes). Workers
// claim tasks in order (EvalState::parallel_for), so the order is known before they run.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "b2lazy/node.hpp"
#include "runtime/fetch_cache.hpp"

namespace b2lazy {

class EvalState;

class Prefetcher {
 public:
  // Tasks [first, last) of `root` on `grid`, `per` chunks each (`needed`: the chunks
  // computed, as run_tasks). Starts its threads only when a source below opts in.
  Prefetcher(EvalState& ev, const Node& root, const ChunkGrid& grid, int64_t per, int64_t first, int64_t last,
             const std::vector<bool>* needed);
  // Stops planning and joins its threads (a batch in flight completes first: its
  // readers get its bytes or its error).
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;
  // A worker claimed `task`: the window ahead moves on.
  void started(int64_t task);

  static constexpr int kThreads = 2;           // batches in flight at once
  static constexpr size_t kBatch = 16;         // reads per ByteStore::read_many
  static constexpr int64_t kMostAhead = 4096;  // tasks planned ahead of the last claimed
  // Reads listed at once: a task over a whole huge array (a reduction to one chunk)
  // fetches ahead its first ones only, not a list of millions.
  static constexpr size_t kMostQueued = size_t(1) << 16;

 private:
  struct Queued {
    int64_t task;
    StoreRead read;
    int64_t bytes;  // expected (Node::store_read_bytes)
  };
  void run(std::vector<FetchCache::Pending> batch);
  void plan_batch(std::vector<FetchCache::Pending>& batch);  // under mu_
  void queue_task(int64_t task);                             // under mu_
  void send(std::vector<FetchCache::Pending>& batch);
  // The reads following `q` (StoreRead::then) from its bytes, into `out`.
  void follow(const Queued& q, const ByteStore::Parts& parts, std::deque<Queued>& out);

  EvalState& ev_;
  FetchCache& cache_;
  const Node& root_;
  const ChunkGrid& grid_;
  int64_t per_, last_;
  const std::vector<bool>* needed_;
  std::set<const Node*> stop_nodes_;  // computed before this pass: not read through

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  int64_t next_task_, claimed_;  // the next task planned; the last a worker claimed
  std::deque<Queued> queue_;     // reads of planned tasks not yet reserved
  // Reads that followed from reads which arrived (StoreRead::then), in their order: sent
  // before queue_'s (they are for tasks planned earlier).
  std::deque<Queued> followups_;
  // Reads with follow-ups found in flight already (another task's): their follow-ups are
  // listed when that read arrives (by FetchCache::id_of).
  std::unordered_map<std::string, std::vector<Queued>> waiting_;
  std::vector<std::thread> threads_;
};

// Runs `fn` with a prefetcher for the pass (none when the execution has no fetch cache).
class PrefetchScope {
 public:
  PrefetchScope(EvalState& ev, const Node& root, const ChunkGrid& grid, int64_t per, int64_t first, int64_t last,
                const std::vector<bool>* needed);
  void started(int64_t task) {
    if (p_) p_->started(task);
  }

 private:
  std::optional<Prefetcher> p_;
};

}  // namespace b2lazy
