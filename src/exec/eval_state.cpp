#include "exec/eval_state.hpp"

#include "b2lazy/context.hpp"
#include "exec/thread_pool.hpp"
#include "exec/thread_state.hpp"

namespace b2lazy {

EvalState::EvalState(Context& c, size_t mm) : ctx(c), max_memory(mm), main_(std::make_unique<ThreadState>()) {
  main_->eval = this;
  main_->can_fork = true;
  workers_.resize(static_cast<size_t>(ctx.nthreads()));
}

EvalState::~EvalState() = default;

ThreadState& EvalState::main() { return *main_; }

ThreadState& EvalState::worker(int i) {
  auto& w = workers_[static_cast<size_t>(i)];
  if (!w) {  // made on the worker thread itself, on first use
    w = std::make_unique<ThreadState>();
    w->eval = this;
  }
  return *w;
}

int EvalState::nworkers() const { return static_cast<int>(workers_.size()); }

void EvalState::collect(Stats& stats) const {
  auto add = [&](const ThreadState* s) {
    if (!s) return;
    stats.peak_scratch_bytes += static_cast<int64_t>(s->scratch.capacity());
    stats.cache_hits += s->cache_hits;
    for (auto& [node, n] : s->decompressed) {
      stats.chunks_decompressed[node->source_name()] += n;
      stats.chunks_decompressed_total += n;
    }
  };
  add(main_.get());
  for (auto& w : workers_) add(w.get());
  stats.cache_misses += cache_misses.load();
}

}  // namespace b2lazy
