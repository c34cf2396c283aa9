#include "exec/fetch_cache.hpp"

#include <algorithm>
#include <chrono>

#include "exec/eval_state.hpp"
#include "exec/thread_state.hpp"

namespace b2lazy {

namespace {
int64_t parts_bytes(const std::optional<ByteStore::Parts>& parts) {
  int64_t n = 0;
  if (parts)
    for (const auto& p : *parts) n += static_cast<int64_t>(p.size());
  return n;
}
}  // namespace

std::optional<ByteStore::Parts> fetch_read(ThreadState& ts, const StoreRead& read) {
  if (ts.eval && ts.eval->fetch) return ts.eval->fetch->read(read);
  return read.store->read(read.key, read.ranges);
}

std::string FetchCache::id_of(const StoreRead& r) {
  std::string id = std::to_string(reinterpret_cast<uintptr_t>(r.store.get()));
  id += '\n';
  id += r.key;
  for (const ByteRange& b : r.ranges) id += '\n' + std::to_string(b.offset) + ':' + std::to_string(b.length);
  return id;
}

void FetchCache::note_store(const StorePtr& s) {
  if (!stores_.count(s.get())) stores_.emplace(s.get(), std::make_pair(s, s->counters()));
}

void FetchCache::to_lru(const std::string& id, Entry& e) {
  if (e.in_lru) {
    lru_.splice(lru_.begin(), lru_, e.age);
    return;
  }
  lru_.push_front(id);
  e.age = lru_.begin();
  e.in_lru = true;
}

void FetchCache::erase(std::unordered_map<std::string, Entry>::iterator it) {
  if (it->second.in_lru) lru_.erase(it->second.age);
  held_ -= it->second.bytes;
  entries_.erase(it);
}

void FetchCache::evict_for(int64_t bytes) {
  while (held_ + bytes > capacity_ && !lru_.empty()) erase(entries_.find(lru_.back()));
}

void FetchCache::room_made() {
  std::lock_guard<std::mutex> g(room_mu_);
  if (on_room_) on_room_();
}

std::optional<ByteStore::Parts> FetchCache::read(const StoreRead& r) {
  const std::string id = id_of(r);
  std::unique_lock<std::mutex> lock(mu_);
  note_store(r.store);
  if (auto it = entries_.find(id); it != entries_.end()) {
    ++hits_;
    Entry& e = it->second;
    const bool consumed = e.ahead;
    if (e.ahead) e.ahead = false;
    if (e.ready) to_lru(id, e);
    std::shared_future<Value> f = e.value;
    const bool ready = e.ready;
    lock.unlock();
    if (consumed) room_made();
    if (ready) return *f.get();
    const auto t0 = std::chrono::steady_clock::now();
    f.wait();
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    {
      std::lock_guard<std::mutex> g(mu_);
      wait_seconds_ += waited;
    }
    return *f.get();  // rethrows the prefetch's error
  }
  ++misses_;
  // Registered in flight, so that a task needing it at once waits for this read.
  std::promise<Value> promise;
  const uint64_t me = ++serials_;
  entries_.emplace(id, Entry{promise.get_future().share(), 0, false, false, -1, me, false, {}});
  lock.unlock();
  Value v;
  try {
    v = std::make_shared<const std::optional<ByteStore::Parts>>(r.store->read(r.key, r.ranges));
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard<std::mutex> g(mu_);
    if (auto it = entries_.find(id); it != entries_.end() && it->second.serial == me) erase(it);
    throw;
  }
  const int64_t bytes = parts_bytes(*v);
  {
    std::lock_guard<std::mutex> g(mu_);
    if (auto it = entries_.find(id); it != entries_.end() && it->second.serial == me) {
      it->second.ready = true;
      if (bytes > capacity_) {
        erase(it);  // (kept only by this reader and those waiting for it)
      } else {
        evict_for(bytes);
        it->second.bytes = bytes;
        held_ += bytes;
        most_held_ = std::max(most_held_, held_);
        if (!it->second.ahead) to_lru(id, it->second);  // (else a task ahead reads it too)
      }
    }
  }
  promise.set_value(v);
  return *v;
}

bool FetchCache::reserve(const StoreRead& r, int64_t bytes, int64_t task, std::optional<Pending>& out) {
  out.reset();
  const std::string id = id_of(r);
  std::lock_guard<std::mutex> g(mu_);
  note_store(r.store);
  if (auto it = entries_.find(id); it != entries_.end()) {
    // Here already (a unit two tasks read): kept again until this task reads it.
    Entry& e = it->second;
    if (!e.ahead) {
      e.ahead = true;
      e.task = task;
      if (e.in_lru) lru_.erase(e.age), e.in_lru = false;
    }
    return true;
  }
  if (bytes > capacity_) return true;  // never fits: read by its task
  evict_for(bytes);
  if (held_ + bytes > capacity_) return false;
  auto promise = std::make_shared<std::promise<Value>>();
  const uint64_t me = ++serials_;
  entries_.emplace(id, Entry{promise->get_future().share(), bytes, false, true, task, me, false, {}});
  held_ += bytes;
  most_held_ = std::max(most_held_, held_);
  ++ahead_reads_;
  out = Pending{r, id, me, std::move(promise)};
  return true;
}

void FetchCache::fulfil(const Pending& p, std::optional<ByteStore::Parts> parts) {
  Value v = std::make_shared<const std::optional<ByteStore::Parts>>(std::move(parts));
  const int64_t bytes = parts_bytes(*v);
  bool dropped = false;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (auto it = entries_.find(p.id); it != entries_.end() && it->second.serial == p.serial) {
      Entry& e = it->second;
      held_ += bytes - e.bytes;  // (its size was expected until now)
      e.bytes = bytes;
      e.ready = true;
      if (!e.ahead) {  // read already by a task that waited for it
        if (bytes > capacity_) erase(it), dropped = true;
        else to_lru(p.id, e);
      }
      evict_for(0);
      most_held_ = std::max(most_held_, held_);
    }
  }
  p.promise->set_value(std::move(v));
  if (dropped) room_made();
}

void FetchCache::fail(const Pending& p, std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (auto it = entries_.find(p.id); it != entries_.end() && it->second.serial == p.serial) erase(it);
  }
  p.promise->set_exception(std::move(error));  // tasks waiting for it fail with the store's error
  room_made();
}

void FetchCache::release_before(int64_t task) {
  std::lock_guard<std::mutex> g(mu_);
  for (auto& [id, e] : entries_)
    if (e.ahead && e.task < task) {
      e.ahead = false;
      if (e.ready) to_lru(id, e);
    }
}

int64_t FetchCache::held_bytes() const {
  std::lock_guard<std::mutex> g(mu_);
  return held_;
}

int64_t FetchCache::most_held_bytes() const {
  std::lock_guard<std::mutex> g(mu_);
  return most_held_;
}

void FetchCache::collect(Stats& stats) const {
  std::lock_guard<std::mutex> g(mu_);
  stats.prefetch_hits += hits_;
  stats.prefetch_misses += misses_;
  stats.prefetch_reads += ahead_reads_;
  stats.prefetch_wait_seconds += wait_seconds_;
  for (const auto& [raw, sc] : stores_) {
    const StoreCounters now = sc.first->counters();
    stats.store_requests += now.requests - sc.second.requests;
    stats.store_bytes += now.bytes - sc.second.bytes;
    stats.store_retries += now.retries - sc.second.retries;
    stats.store_wait_seconds += now.wait_seconds - sc.second.wait_seconds;
  }
}

}  // namespace b2lazy
