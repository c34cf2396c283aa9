// Bytes read from byte stores during one execution of a plan, kept in a bounded cache
// (Plan::fetch_bytes, counted in the memory model): the prefetch (exec/prefetcher.hpp)
// puts there the reads of the tasks ahead of the workers, and a source's read finds them
// there (fetch_read) — waiting for one in flight, never sending it twice. Repeated reads
// (a shard index, a unit two tasks read) find what is still held. Least recently used
// reads go first when room is needed; reads fetched ahead and not yet read are kept, and
// take at most half the room (the rest keeps what was read lately).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "b2lazy/node.hpp"
#include "b2lazy/stats.hpp"

namespace b2lazy {

class ThreadState;

// A source's store read (what Node::store_reads listed for its pull): through the
// execution's cache when there is one (ts.eval), else straight from the store. As
// ByteStore::read: the parts, nullopt when the object does not exist, IOError otherwise.
std::optional<ByteStore::Parts> fetch_read(ThreadState& ts, const StoreRead& read);
// fetch_read's bytes shared with the execution's cache, not copied (null: none here).
std::shared_ptr<const std::optional<ByteStore::Parts>> fetch_shared(ThreadState& ts, const StoreRead& read);
// Is `read` held by the execution's cache, or on its way there (fetched ahead)? A source
// then takes it rather than a smaller read of the same bytes (a whole chunk fetched ahead
// serves a read of some of its blocks).
bool fetch_holds(ThreadState& ts, const StoreRead& read);
// Many reads of `store` at once (ByteStore::read_many), each range through the cache: those
// held or in flight are taken from it, the others sent together in one read_many. A source
// that lists its reads per range (Node::store_reads) finds them here, however it groups them.
std::vector<std::optional<ByteStore::Parts>> fetch_read_many(ThreadState& ts, const StorePtr& store,
                                                             const std::vector<ByteStore::Request>& requests);

class FetchCache {
 public:
  using Value = std::shared_ptr<const std::optional<ByteStore::Parts>>;
  explicit FetchCache(int64_t capacity) : capacity_(capacity) {}

  // A source's read: held or in flight -> those bytes (a hit), else read now (a miss).
  std::optional<ByteStore::Parts> read(const StoreRead& r);
  // The same, the bytes shared with the cache (a whole chunk several fills read is not
  // copied for each).
  Value shared(const StoreRead& r);
  bool holds(const StoreRead& r) const;
  // fetch_read_many's: each range of each request a read of its own (hit or miss); the
  // misses sent in one read_many. An object absent is nullopt for its request.
  std::vector<std::optional<ByteStore::Parts>> read_many(const StorePtr& store,
                                                         const std::vector<ByteStore::Request>& requests);

  // A read the prefetch sends: registered in flight, fulfilled or failed once.
  struct Pending {
    StoreRead read;
    std::string id;
    uint64_t serial = 0;
    std::shared_ptr<std::promise<Value>> promise;
    int64_t task = -1, bytes = 0;  // as reserved
  };
  // Registers `r` (expected `bytes`) as fetched ahead for task `task`: false when it
  // does not fit until reads are consumed (nothing registered); true and no `out` when
  // it is held or in flight already (then kept for `task` too).
  bool reserve(const StoreRead& r, int64_t bytes, int64_t task, std::optional<Pending>& out);
  // The bytes of `r` when they are here (not in flight, not failed); nullopt otherwise.
  std::optional<ByteStore::Parts> held(const StoreRead& r) const;
  static std::string id_of(const StoreRead& r);
  void fulfil(const Pending& p, std::optional<ByteStore::Parts> parts);
  void fail(const Pending& p, std::exception_ptr error);
  // Reads fetched ahead for tasks before `task` and never read (their tasks read them
  // through a window, or not at all) may go when room is needed.
  void release_before(int64_t task);
  // The last task a worker claimed: reads the workers make themselves are that task's.
  void claimed(int64_t task) {
    std::lock_guard<std::mutex> g(mu_);
    reading_task_ = std::max(reading_task_, task);
  }
  // Called (outside the lock) when a fetched read is consumed or dropped: room made.
  void on_room(std::function<void()> fn) {
    std::lock_guard<std::mutex> g(room_mu_);
    on_room_ = std::move(fn);
  }

  void collect(Stats& stats) const;
  int64_t capacity() const { return capacity_; }
  int64_t held_bytes() const;
  int64_t most_held_bytes() const;

 private:
  struct Entry {
    std::shared_future<Value> value;
    int64_t bytes = 0;  // its bytes once here; expected while in flight
    bool ready = false;
    bool ahead = false;   // fetched ahead and not read yet: kept
    int64_t task = -1;    // the task it was fetched ahead for, or read by
    uint64_t serial = 0;  // who registered it (an erased and re-registered read is another)
    bool in_lru = false;
    std::list<std::string>::iterator age;
  };
  void note_store(const StorePtr& s);  // its counters before this execution's first read
  // Ranges the workers read themselves (misses), per object: the prefetch does not fetch
  // what overlaps them for their task (it is behind there). Under mu_.
  void note_worker_read(const StorePtr& store, const std::string& key, const ByteRange& b);
  bool worker_read_overlaps(const StoreRead& r) const;
  static constexpr size_t kMostWorkerReads = 64;  // per object
  void to_lru(const std::string& id, Entry& e);
  void set_ahead(Entry& e, bool ahead);     // keeps ahead_bytes_
  void set_bytes(Entry& e, int64_t bytes);  // keeps held_ and ahead_bytes_
  void erase(std::unordered_map<std::string, Entry>::iterator it);
  void evict_for(int64_t bytes);  // unkept reads go, least recent first
  void room_made();
  // A read of this execution, fetched now (a miss), held as read() holds it.
  void hold_read(const std::string& id, uint64_t serial, int64_t bytes);
  std::shared_future<Value> wait_for(const std::shared_future<Value>& f, bool ready);

  int64_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
  std::list<std::string> lru_;  // unkept, ready reads; most recent first
  int64_t held_ = 0, most_held_ = 0;
  int64_t ahead_bytes_ = 0;   // of reads fetched ahead and not read yet (at most half the cache)
  int64_t reading_task_ = 0;  // claimed()
  std::unordered_map<std::string, std::vector<ByteRange>> worker_reads_;
  uint64_t serials_ = 0;
  std::mutex room_mu_;  // held while on_room_ runs: unset only when no call is running
  std::function<void()> on_room_;
  std::map<const ByteStore*, std::pair<StorePtr, StoreCounters>> stores_;
  int64_t hits_ = 0, misses_ = 0, ahead_reads_ = 0;
  double wait_seconds_ = 0;
};

}  // namespace b2lazy
