#include "runtime/fetch_cache.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <unordered_map>

#include "b2lazy/error.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/thread_state.hpp"

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
  if (ts.eval && ts.eval->fetch()) return ts.eval->fetch()->read(read);
  return read.store->read(read.key, read.ranges);
}

FetchCache::Value fetch_shared(ThreadState& ts, const StoreRead& read) {
  if (ts.eval && ts.eval->fetch()) return ts.eval->fetch()->shared(read);
  return std::make_shared<const std::optional<ByteStore::Parts>>(read.store->read(read.key, read.ranges));
}

bool fetch_holds(ThreadState& ts, const StoreRead& read) {
  return ts.eval && ts.eval->fetch() && ts.eval->fetch()->holds(read);
}

bool FetchCache::holds(const StoreRead& r) const {
  const std::string id = id_of(r);
  std::lock_guard<std::mutex> g(mu_);
  return entries_.count(id) > 0;
}

std::vector<std::optional<ByteStore::Parts>> fetch_read_many(ThreadState& ts, const StorePtr& store,
                                                             const std::vector<ByteStore::Request>& requests) {
  if (ts.eval && ts.eval->fetch()) return ts.eval->fetch()->read_many(store, requests);
  return store->read_many(requests);
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

void FetchCache::set_ahead(Entry& e, bool ahead) {
  if (e.ahead == ahead) return;
  ahead_bytes_ += ahead ? e.bytes : -e.bytes;
  e.ahead = ahead;
}

void FetchCache::set_bytes(Entry& e, int64_t bytes) {
  held_ += bytes - e.bytes;
  if (e.ahead) ahead_bytes_ += bytes - e.bytes;
  e.bytes = bytes;
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
  set_ahead(it->second, false);
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

std::optional<ByteStore::Parts> FetchCache::read(const StoreRead& r) { return *shared(r); }

FetchCache::Value FetchCache::shared(const StoreRead& r) {
  const std::string id = id_of(r);
  std::unique_lock<std::mutex> lock(mu_);
  note_store(r.store);
  if (auto it = entries_.find(id); it != entries_.end()) {
    ++hits_;
    Entry& e = it->second;
    const bool consumed = e.ahead;
    set_ahead(e, false);
    if (e.ready) to_lru(id, e);
    std::shared_future<Value> f = e.value;
    const bool ready = e.ready;
    lock.unlock();
    if (consumed) room_made();
    return wait_for(f, ready).get();  // rethrows the prefetch's error
  }
  ++misses_;
  for (const ByteRange& b : r.ranges) note_worker_read(r.store, r.key, b);
  // Registered in flight, so that a task needing it at once waits for this read.
  std::promise<Value> promise;
  const uint64_t me = ++serials_;
  entries_.emplace(id, Entry{promise.get_future().share(), 0, false, false, reading_task_, me, false, {}});
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
  hold_read(id, me, parts_bytes(*v));
  promise.set_value(v);
  return v;
}

std::shared_future<FetchCache::Value> FetchCache::wait_for(const std::shared_future<Value>& f, bool ready) {
  if (ready) return f;
  const auto t0 = std::chrono::steady_clock::now();
  f.wait();
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::lock_guard<std::mutex> g(mu_);
  wait_seconds_ += waited;
  return f;
}

void FetchCache::hold_read(const std::string& id, uint64_t serial, int64_t bytes) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.serial != serial) return;
  it->second.ready = true;
  if (bytes > capacity_) {
    erase(it);  // (kept only by this reader and those waiting for it)
    return;
  }
  evict_for(bytes);
  set_bytes(it->second, bytes);
  most_held_ = std::max(most_held_, held_);
  if (!it->second.ahead) to_lru(id, it->second);  // (else a task ahead reads it too)
}

std::vector<std::optional<ByteStore::Parts>> FetchCache::read_many(const StorePtr& store,
                                                                   const std::vector<ByteStore::Request>& requests) {
  struct Item {
    size_t request;
    ByteRange range;
    std::string id;
    std::shared_future<Value> value;
    bool ready = false;
    std::shared_ptr<std::promise<Value>> mine;  // a miss: this call reads it
    uint64_t serial = 0;
  };
  std::vector<Item> items;
  for (size_t q = 0; q < requests.size(); ++q)
    for (const ByteRange& r : requests[q].ranges)
      items.push_back({q, r, id_of({store, requests[q].key, {r}}), {}, false, nullptr, 0});
  bool consumed = false;
  {
    std::lock_guard<std::mutex> g(mu_);
    note_store(store);
    for (Item& it : items) {
      if (auto e = entries_.find(it.id); e != entries_.end()) {
        ++hits_;  // (a range asked twice in this call finds its first ask: a hit on it)
        if (e->second.ahead) set_ahead(e->second, false), consumed = true;
        if (e->second.ready) to_lru(it.id, e->second);
        it.value = e->second.value;
        it.ready = e->second.ready;
        continue;
      }
      ++misses_;
      note_worker_read(store, requests[it.request].key, it.range);
      it.mine = std::make_shared<std::promise<Value>>();
      it.serial = ++serials_;
      it.value = it.mine->get_future().share();
      entries_.emplace(it.id, Entry{it.value, 0, false, false, reading_task_, it.serial, false, {}});
    }
  }
  if (consumed) room_made();
  // The misses, grouped by object in their order: one read_many.
  std::vector<ByteStore::Request> misses;
  std::vector<std::pair<size_t, size_t>> at;  // per item: (miss request, part); SIZE_MAX when a hit
  {
    std::unordered_map<std::string, size_t> by_key;
    for (Item& it : items) {
      if (!it.mine) {
        at.push_back({SIZE_MAX, 0});
        continue;
      }
      const std::string& key = requests[it.request].key;
      auto [k, fresh] = by_key.try_emplace(key, misses.size());
      if (fresh) misses.push_back({key, {}});
      misses[k->second].ranges.push_back(it.range);
      at.push_back({k->second, misses[k->second].ranges.size() - 1});
    }
  }
  if (!misses.empty()) {
    std::vector<std::optional<ByteStore::Parts>> got;
    try {
      got = store->read_many(misses);
      if (got.size() != misses.size())
        throw IOError("'" + store->root() + "': the store answered " + std::to_string(got.size()) + " of " +
                      std::to_string(misses.size()) + " requests");
    } catch (...) {
      const std::exception_ptr error = std::current_exception();
      for (Item& it : items)
        if (it.mine) {
          it.mine->set_exception(error);
          std::lock_guard<std::mutex> g(mu_);
          if (auto e = entries_.find(it.id); e != entries_.end() && e->second.serial == it.serial) erase(e);
        }
      throw;
    }
    for (size_t i = 0; i < items.size(); ++i) {
      Item& it = items[i];
      if (!it.mine) continue;
      std::optional<ByteStore::Parts>& res = got[at[i].first];
      Value v = std::make_shared<const std::optional<ByteStore::Parts>>(
          res ? std::optional<ByteStore::Parts>(ByteStore::Parts{std::move(res->at(at[i].second))}) : std::nullopt);
      hold_read(it.id, it.serial, parts_bytes(*v));
      it.mine->set_value(std::move(v));
      it.ready = true;
    }
  }
  std::vector<std::optional<ByteStore::Parts>> out(requests.size());
  std::vector<bool> absent(requests.size(), false);
  for (Item& it : items) {
    wait_for(it.value, it.ready);
    const Value& v = it.value.get();  // rethrows the prefetch's error
    if (!*v || absent[it.request]) {
      absent[it.request] = true;
      out[it.request].reset();
      continue;
    }
    if (!out[it.request]) out[it.request].emplace();
    out[it.request]->push_back((*v)->at(0));
  }
  for (size_t q = 0; q < requests.size(); ++q)
    if (!absent[q] && !out[q]) out[q].emplace();  // (a request of no ranges)
  return out;
}

bool FetchCache::reserve(const StoreRead& r, int64_t bytes, int64_t task, std::optional<Pending>& out) {
  out.reset();
  const std::string id = id_of(r);
  std::lock_guard<std::mutex> g(mu_);
  note_store(r.store);
  if (auto it = entries_.find(id); it != entries_.end()) {
    // Here already (a unit two tasks read): kept again until this later task reads it.
    // (Not for the task that read it already — a worker ahead of the prefetch — which
    // would keep it for a read that never comes.)
    Entry& e = it->second;
    if (!e.ahead && task > e.task) {
      set_ahead(e, true);
      e.task = task;
      if (e.in_lru) lru_.erase(e.age), e.in_lru = false;
    }
    return true;
  }
  if (bytes > capacity_) return true;  // never fits: read by its task
  // The workers of this task (or a later one) read some of these bytes themselves
  // already: the prefetch is behind them there, and what it would fetch no one reads.
  if (task <= reading_task_ && worker_read_overlaps(r)) return true;
  // Reads fetched ahead take at most half the cache: the other half keeps what was read
  // lately (a whole chunk fetched ahead that several fills read, a slab of it each).
  if (ahead_bytes_ > 0 && ahead_bytes_ + bytes > capacity_ / 2) return false;
  evict_for(bytes);
  if (held_ + bytes > capacity_) return false;
  auto promise = std::make_shared<std::promise<Value>>();
  const uint64_t me = ++serials_;
  entries_.emplace(id, Entry{promise->get_future().share(), bytes, false, true, task, me, false, {}});
  held_ += bytes;
  ahead_bytes_ += bytes;
  most_held_ = std::max(most_held_, held_);
  ++ahead_reads_;
  out = Pending{r, id, me, std::move(promise), task, bytes};
  return true;
}

void FetchCache::note_worker_read(const StorePtr& store, const std::string& key, const ByteRange& b) {
  std::vector<ByteRange>& v = worker_reads_[id_of({store, key, {}})];
  if (v.size() < kMostWorkerReads) v.push_back(b);
}

bool FetchCache::worker_read_overlaps(const StoreRead& r) const {
  auto it = worker_reads_.find(id_of({r.store, r.key, {}}));
  if (it == worker_reads_.end()) return false;
  for (const ByteRange& want : r.ranges)
    for (const ByteRange& got : it->second) {
      if (want.offset < 0 || got.offset < 0 || want.length < 0 || got.length < 0)
        return true;  // (suffix, or to the end)
      if (want.offset < got.offset + got.length && got.offset < want.offset + want.length) return true;
    }
  return false;
}

std::optional<ByteStore::Parts> FetchCache::held(const StoreRead& r) const {
  const std::string id = id_of(r);
  std::lock_guard<std::mutex> g(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end() || !it->second.ready) return std::nullopt;
  try {
    const Value& v = it->second.value.get();  // (ready: no wait)
    return v ? *v : std::nullopt;
  } catch (...) {
    return std::nullopt;  // failed: the task reads it again and reports the error
  }
}

void FetchCache::fulfil(const Pending& p, std::optional<ByteStore::Parts> parts) {
  Value v = std::make_shared<const std::optional<ByteStore::Parts>>(std::move(parts));
  const int64_t bytes = parts_bytes(*v);
  bool dropped = false;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (auto it = entries_.find(p.id); it != entries_.end() && it->second.serial == p.serial) {
      Entry& e = it->second;
      set_bytes(e, bytes);  // (its size was expected until now)
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
      set_ahead(e, false);
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
