#include "exec/prefetcher.hpp"

#include <algorithm>
#include <chrono>
#include <map>

#include "exec/eval_state.hpp"
#include "plan/propagate.hpp"

namespace b2lazy {

namespace {
// Does a source below `root` read from a store through the cache (Node::store_read_bytes)?
bool reads_stores(const Node& root, const std::set<const Node*>& stop) {
  std::vector<const Node*> todo{&root};
  std::set<const Node*> seen;
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->store_read_bytes() > 0) return true;
    if (stop.count(n)) continue;
    for (const NodePtr& i : n->inputs()) todo.push_back(i.get());
  }
  return false;
}
// What `read` will bring: its ranges' lengths when they are all known, else the node's
// typical read (a whole object, a suffix). (A chunk's 288-byte header counted as the
// chunk's 13 MB would make room for it by evicting chunks a later pass reads again.)
int64_t expected_bytes(const StoreRead& read, int64_t typical) {
  int64_t n = 0;
  for (const ByteRange& r : read.ranges) {
    if (r.length < 0)
      return read.expected >= 0 ? read.expected : typical;  // (to the end; a suffix range's length is known)
    n += r.length;
  }
  return std::max<int64_t>(n, 1);
}

}  // namespace

PrefetchScope::PrefetchScope(EvalState& ev, const Node& root, const ChunkGrid& grid, int64_t per, int64_t first,
                             int64_t last, const std::vector<bool>* needed) {
  if (!ev.fetch_cache || ev.fetch_cache->capacity() <= 0 || first >= last) return;
  p_.emplace(ev, root, grid, per, first, last, needed);
}

Prefetcher::Prefetcher(EvalState& ev, const Node& root, const ChunkGrid& grid, int64_t per, int64_t first, int64_t last,
                       const std::vector<bool>* needed)
    : ev_(ev),
      cache_(*ev.fetch_cache),
      root_(root),
      grid_(grid),
      per_(per),
      last_(last),
      needed_(needed),
      next_task_(first),
      claimed_(first - 1) {
  for (const auto& [n, m] : ev.materialized) stop_nodes_.insert(n);
  if (!reads_stores(root, stop_nodes_)) return;
  cache_.on_room([this] {
    std::lock_guard<std::mutex> g(mu_);
    cv_.notify_all();
  });
  // The first batch reserved before any worker starts: the first tasks find their reads
  // in flight instead of sending them themselves.
  std::vector<FetchCache::Pending> first_batch;
  {
    std::lock_guard<std::mutex> g(mu_);
    plan_batch(first_batch);
  }
  try {
    threads_.emplace_back([this, b = std::move(first_batch)]() mutable { run(std::move(b)); });
    for (int i = 1; i < kThreads; ++i) threads_.emplace_back([this] { run({}); });
  } catch (...) {  // no thread: those started stop (the destructor does not run)
    {
      std::lock_guard<std::mutex> g(mu_);
      stopping_ = true;
      cv_.notify_all();
    }
    for (std::thread& t : threads_) t.join();
    cache_.on_room({});
    throw;
  }
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
  cache_.on_room({});
}

void Prefetcher::started(int64_t task) {
  cache_.claimed(task);
  std::lock_guard<std::mutex> g(mu_);
  if (task > claimed_) {
    claimed_ = task;
    cv_.notify_all();
  }
}

void Prefetcher::queue_task(int64_t task) {
  std::vector<StoreRead> reads;
  Propagation walk(stop_nodes_, [&](const Edge&, const Node& n, const Region& r, bool first) {
    const int64_t bytes = n.store_read_bytes();
    if (!first || bytes <= 0) return;
    if (queue_.size() >= kMostQueued) return;
    reads.clear();
    n.store_reads(r, reads);
    for (StoreRead& s : reads) {
      if (queue_.size() >= kMostQueued) break;            // (the rest read by the task itself)
      const int64_t expected = expected_bytes(s, bytes);  // (before s is moved from)
      queue_.push_back({task, std::move(s), expected});
    }
  });
  const int64_t nchunks = grid_.nchunks();
  for (int64_t id = task * per_; id < std::min(nchunks, (task + 1) * per_); ++id) {
    if (needed_ && !(*needed_)[static_cast<size_t>(id)]) continue;
    walk.run({nullptr, 0}, root_, Region::from_box(grid_.chunk_box(id)));
  }
}

void Prefetcher::plan_batch(std::vector<FetchCache::Pending>& batch) {
  bool released = false;
  while (batch.size() < kBatch) {
    // Tasks the workers reached before their reads were sent read for themselves: a read
    // sent for them now would come after theirs, a second request.
    while (!followups_.empty() && followups_.front().task < claimed_) followups_.pop_front();
    while (!queue_.empty() && queue_.front().task < claimed_) queue_.pop_front();
    std::deque<Queued>& from = followups_.empty() ? queue_ : followups_;
    if (from.empty()) {
      next_task_ = std::max(next_task_, claimed_ + 1);
      if (next_task_ >= last_ || next_task_ > claimed_ + kMostAhead) return;
      queue_task(next_task_++);
      continue;
    }
    if (!from.front().read.instead.empty() && from.front().bytes > cache_.capacity() / 4) {
      // Too large for the room (a whole shard at a small max_memory): its smaller reads.
      Queued q = std::move(from.front());
      from.pop_front();
      for (auto r = q.read.instead.rbegin(); r != q.read.instead.rend(); ++r) {
        const int64_t expected = expected_bytes(*r, q.bytes);
        from.push_front({q.task, std::move(*r), expected});
      }
      continue;
    }
    std::optional<FetchCache::Pending> p;
    if (!cache_.reserve(from.front().read, from.front().bytes, from.front().task, p)) {
      // Full: reads fetched for tasks well behind the workers and never read (a window
      // served them) may go; else wait until reads are consumed.
      if (released) return;
      cache_.release_before(claimed_ - ev_.workers());
      released = true;
      continue;
    }
    Queued q = std::move(from.front());
    from.pop_front();
    if (p) {
      batch.push_back(std::move(*p));
    } else if (q.read.then) {  // held or in flight already: its follow-ups from those bytes
      if (std::optional<ByteStore::Parts> parts = cache_.held(q.read)) {
        follow(q, *parts, followups_);
      } else {
        waiting_[FetchCache::id_of(q.read)].push_back(std::move(q));
      }
    }
  }
}

void Prefetcher::follow(const Queued& q, const ByteStore::Parts& parts, std::deque<Queued>& out) {
  std::vector<StoreRead> reads;
  try {
    q.read.then(parts, reads);
  } catch (...) {
    return;  // (nothing follows: the task reads for itself, and reports what failed)
  }
  for (StoreRead& r : reads) {
    const int64_t expected = expected_bytes(r, q.bytes);
    out.push_back({q.task, std::move(r), expected});
  }
}

void Prefetcher::send(std::vector<FetchCache::Pending>& batch) {
  // One read_many per store: a remote store keeps its requests in flight at once.
  std::map<ByteStore*, std::vector<size_t>> by_store;
  for (size_t i = 0; i < batch.size(); ++i) by_store[batch[i].read.store.get()].push_back(i);
  std::deque<Queued> next;  // follow-ups of the reads that arrived
  for (auto& [store, idx] : by_store) {
    std::vector<ByteStore::Request> reqs;
    reqs.reserve(idx.size());
    for (size_t i : idx) reqs.push_back({batch[i].read.key, batch[i].read.ranges});
    try {
      std::vector<std::optional<ByteStore::Parts>> got = store->read_many(reqs);
      for (size_t j = 0; j < idx.size(); ++j) {
        FetchCache::Pending& p = batch[idx[j]];
        if (got.at(j)) {
          std::vector<Queued> waiting;
          {
            std::lock_guard<std::mutex> g(mu_);
            if (auto w = waiting_.find(p.id); w != waiting_.end()) {
              waiting = std::move(w->second);
              waiting_.erase(w);
            }
          }
          if (p.read.then) follow({p.task, p.read, p.bytes}, *got[j], next);
          for (const Queued& q : waiting) follow(q, *got[j], next);
        }
        cache_.fulfil(p, std::move(got.at(j)));
      }
    } catch (...) {
      for (size_t i : idx) cache_.fail(batch[i], std::current_exception());
    }
  }
  if (next.empty()) return;
  std::lock_guard<std::mutex> g(mu_);
  for (Queued& q : next) followups_.push_back(std::move(q));
  cv_.notify_all();
}

void Prefetcher::run(std::vector<FetchCache::Pending> batch) {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (batch.empty()) {
      if (stopping_) return;
      try {
        ev_.check_cancel();
        plan_batch(batch);
      } catch (...) {  // cancelled, or a walk that fails: the tasks read for themselves
        stopping_ = true;
        cv_.notify_all();
        lock.unlock();
        send(batch);  // (what was reserved is answered: its readers wait for it)
        return;
      }
      if (batch.empty()) {
        if (queue_.empty() && next_task_ >= last_) return;  // everything planned
        cv_.wait_for(lock, std::chrono::milliseconds(50));
        continue;
      }
    }
    lock.unlock();
    send(batch);
    batch.clear();
    lock.lock();
  }
}

}  // namespace b2lazy
