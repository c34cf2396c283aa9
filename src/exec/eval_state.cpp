#include "exec/eval_state.hpp"

#include <algorithm>
#include <exception>
#include <limits>
#include <mutex>

#include "b2lazy/context.hpp"
#include "b2lazy/error.hpp"
#include "b2lazy/interrupt.hpp"
#include "runtime/thread_pool.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

EvalState::EvalState(Context& c, size_t mm)
    : ctx(c), max_memory_(mm), main_(std::make_unique<ThreadState>()), main_nodes_(std::make_unique<NodeCache>()) {
  main_->eval = this;
  main_->can_fork = true;
  main_->nodes = main_nodes_.get();
  workers_.resize(static_cast<size_t>(ctx.nthreads()));
  worker_nodes_.resize(static_cast<size_t>(ctx.nthreads()));
}

EvalState::~EvalState() = default;

ThreadState& EvalState::main() { return *main_; }

ThreadState& EvalState::worker(int i) {
  auto& w = workers_[static_cast<size_t>(i)];
  if (!w) {  // made on the worker thread itself, on first use
    w = std::make_unique<ThreadState>();
    w->eval = this;
    w->worker = i;
    worker_nodes_[static_cast<size_t>(i)] = std::make_unique<NodeCache>();
    w->nodes = worker_nodes_[static_cast<size_t>(i)].get();
  }
  return *w;
}

void EvalState::check_cancel() const {
  if (interrupted() || (cancel && cancel->load(std::memory_order_relaxed))) throw Cancelled("evaluation interrupted");
}

void EvalState::parallel_for(int64_t ntasks, const std::function<void(int64_t, int, ThreadState&)>& fn) {
  const int nw = static_cast<int>(std::min<int64_t>(workers(), ntasks));
  if (nw <= 0) return;
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  // The error of the lowest-numbered failing task, so that the error reported does not
  // depend on thread timing: tasks are claimed in order and a claimed task runs to its
  // end, so every task below the first failure has run when the workers stop.
  std::exception_ptr error;
  int64_t error_task = std::numeric_limits<int64_t>::max();
  std::mutex mu;
  std::function<void(int)> work = [&](int w) {
    int64_t i = std::numeric_limits<int64_t>::max();  // (no task yet: worker setup failed)
    try {
      ThreadState& ts = worker(w);
      while (!failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < ntasks) {
        check_cancel();  // a node's own parallel work (slabs, panels) stops too
        fn(i, w, ts);
      }
    } catch (...) {
      std::lock_guard<std::mutex> g(mu);
      if (!error || i < error_task) {
        error = std::current_exception();
        error_task = i;
      }
      failed = true;
      failing_ = true;
    }
  };
  ctx.pool().run(work, nw);
  if (error) std::rethrow_exception(error);
}

std::shared_ptr<void> EvalState::shared_state(const Node* n, const std::function<std::shared_ptr<void>()>& make) {
  std::shared_ptr<SharedSlot> slot;
  {
    std::lock_guard<std::mutex> g(shared_mu_);
    std::shared_ptr<SharedSlot>& s = shared_[n];
    if (!s) s = std::make_shared<SharedSlot>();
    slot = s;
  }
  std::lock_guard<std::mutex> g(slot->mu);
  if (!slot->value) slot->value = make();
  return slot->value;
}

void EvalState::trim_scratch() {
  if (main_) main_->scratch.trim();
  for (auto& w : workers_)
    if (w) w->scratch.trim();
}

void EvalState::chunk_done(int64_t id) {
  for (auto& [n, board] : carries) board->chunk_done(id);
}

void EvalState::collect(Stats& stats) const {
  std::unordered_map<const Node*, std::unordered_map<int64_t, int64_t>> per_chunk;
  auto add = [&](const ThreadState* s) {
    if (!s) return;
    stats.peak_scratch_bytes += static_cast<int64_t>(s->scratch.capacity());
    if (s->nodes) stats.peak_scratch_bytes += static_cast<int64_t>(s->nodes->bytes());
    stats.cache_hits += s->cache_hits;
    for (auto& [node, counts] : s->decompressed)
      for (auto& [id, n] : counts) per_chunk[node][id] += n;
    for (auto& [node, b] : s->decompressed_bytes) stats.bytes_decompressed[node->source_name()] += b;
  };
  add(main_.get());
  for (auto& w : workers_) add(w.get());
  for (auto& [node, w] : windows) stats.window_hits += w->hits();
  if (fetch_cache) fetch_cache->collect(stats);
  for (auto& [node, counts] : per_chunk) {
    const std::string name = node->source_name();
    for (auto& [id, n] : counts) {
      stats.chunks_decompressed[name] += n;
      stats.chunks_decompressed_total += n;
      stats.distinct_chunks_decompressed[name] += 1;
      int64_t& mx = stats.max_decompressions_per_chunk[name];
      mx = std::max(mx, n);
    }
  }
  stats.cache_misses += cache_misses.load();
  stats.sources_kept += sources_kept;
  stats.stages_reused += stages_reused;
}

}  // namespace b2lazy
