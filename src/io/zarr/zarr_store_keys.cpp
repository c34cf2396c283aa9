// The byte store's reader (zarr_keys.hpp). A request costs tens of milliseconds, so a
// fill's reads are fetched before it runs, together: each round one read_many of every
// key's ranges (the store keeps many in flight and merges adjacent ranges of one object).
// Whole chunks take one round; inner chunks of shards two (the shard indexes, read once
// and cached, then the inner chunks' ranges) or one when the indexes are cached, or when
// a fill reads every inner chunk of a shard whole (the shard is read whole); runs of
// Blosc chunks three (headers, block starts, the blocks the run needs). The array is taken
// as it was when opened: its metadata is not read again, and a cached shard index is used
// while the source lives (as zarr-python and TensorStore read an unchanging store).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "b2lazy/error.hpp"
#include "core/saturating.hpp"
#include "io/zarr/zarr_keys.hpp"
#include "runtime/fetch_cache.hpp"
#include "runtime/thread_state.hpp"
#include "storage/blosc_range.hpp"

namespace b2lazy::zarr {

namespace {

using json = nlohmann::json;

constexpr int64_t kMaxMetadata = int64_t(64) << 20;
constexpr int64_t kIndexCacheBytes = int64_t(32) << 20;  // shard indexes kept per source

std::string join(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "/" + key;
}

// One round's requests: each key once, each range of it once.
class Batch {
 public:
  // Where range `r` of `key` will be: (request, part).
  std::pair<size_t, size_t> add(const std::string& key, ByteRange r) {
    auto [it, fresh] = by_key_.try_emplace(key, requests_.size());
    if (fresh) requests_.push_back({key, {}});
    auto& ranges = requests_[it->second].ranges;
    for (size_t p = 0; p < ranges.size(); ++p)
      if (ranges[p].offset == r.offset && ranges[p].length == r.length) return {it->second, p};
    ranges.push_back(r);
    return {it->second, ranges.size() - 1};
  }
  bool empty() const { return requests_.empty(); }
  const std::vector<ByteStore::Request>& requests() const { return requests_; }

 private:
  std::unordered_map<std::string, size_t> by_key_;
  std::vector<ByteStore::Request> requests_;
};

class StoreKeys;

// What one fill's reads fetched, for that fill (on its thread) to take.
struct Fetched {
  const StoreKeys* owner = nullptr;
  std::map<std::string, std::optional<std::vector<uint8_t>>> chunks;
  std::map<std::pair<std::string, int64_t>, std::optional<std::vector<uint8_t>>> inners;
  // By (key, inner chunk or -1, start, n); null: absent.
  std::map<std::tuple<std::string, int64_t, int64_t, int64_t>, std::unique_ptr<BloscRangePlan>> runs;
};
std::tuple<std::string, int64_t, int64_t, int64_t> run_id(const KeyRead& r) { return {r.key, r.inner, r.start, r.n}; }

// Where inner chunk `i` is in its shard, from the shard's decoded `index`; nullopt when the
// shard holds no such chunk (its entry is all ones: the fill value).
std::optional<ByteRange> inner_range(const std::vector<uint64_t>& index, int64_t i) {
  const uint64_t off = index[static_cast<size_t>(2 * i)], len = index[static_cast<size_t>(2 * i + 1)];
  if (off == kMissing && len == kMissing) return std::nullopt;
  return ByteRange{static_cast<int64_t>(off), static_cast<int64_t>(len)};
}
thread_local Fetched* fetched_now = nullptr;

class StoreKeys final : public KeyReader {
 public:
  StoreKeys(StorePtr store, std::string prefix) : store_(std::move(store)), prefix_(std::move(prefix)) {}

  bool chunk(const std::string& key, std::vector<uint8_t>& out) const override {
    std::optional<std::vector<uint8_t>> got;
    if (Fetched* f = mine(); f && f->chunks.count(key)) {
      got = std::move(f->chunks[key]);
      f->chunks.erase(key);
    } else {
      got = store_->read_all(join(prefix_, key));
    }
    if (!got) return false;
    lay_->check_stored_size(key, static_cast<int64_t>(got->size()));
    out = std::move(*got);
    return true;
  }

  bool inner(int64_t sid, const std::string& key, int64_t i, std::vector<uint8_t>& out,
             ThreadState& ts) const override {
    if (Fetched* f = mine()) {
      auto it = f->inners.find({key, i});
      if (it != f->inners.end()) {
        const bool found = it->second.has_value();
        if (found) out = std::move(*it->second);
        f->inners.erase(it);
        return found;
      }
    }
    const auto index = index_of(sid, key, ts);
    if (!index) return false;
    const std::optional<ByteRange> at = inner_range(*index, i);
    if (!at) return false;
    auto parts = store_->read(join(prefix_, key), {*at});
    if (!parts) throw IOError("'" + lay_->where(key) + "': the shard disappeared while it was read");
    out = std::move((*parts)[0]);
    return true;
  }

  bool run(const KeyRead& r, void* dst, int64_t& decoded, ThreadState& ts) const override {
    if (Fetched* f = mine()) {
      auto it = f->runs.find(run_id(r));
      if (it != f->runs.end()) {
        auto plan = std::move(it->second);
        f->runs.erase(it);
        if (!plan) return false;
        decoded = plan->decode(dst, ts);
        return true;
      }
    }
    int64_t base = 0, size = -1;  // where the Blosc buffer is in the object
    if (r.inner >= 0) {
      const auto index = index_of(r.shard, r.key, ts);
      if (!index) return false;
      const std::optional<ByteRange> at = inner_range(*index, r.inner);
      if (!at) return false;
      base = at->offset, size = at->length;
    }
    const auto plan = new_plan(r, size, dst);
    while (!plan->wants().empty()) {
      std::vector<ByteRange> ranges;
      for (const auto& w : plan->wants()) ranges.push_back({base + w.at, w.len});
      auto parts = store_->read(join(prefix_, r.key), ranges);
      if (!parts) {
        if (r.inner >= 0) throw IOError("'" + lay_->where(r.key) + "': the shard disappeared while it was read");
        return false;
      }
      for (size_t k = 0; k < ranges.size(); ++k)
        std::memcpy(plan->wants()[k].dst, (*parts)[k].data(), (*parts)[k].size());
      plan->advance();
    }
    decoded = plan->decode(dst, ts);
    return true;
  }

  void around_fill(const std::function<std::vector<KeyRead>()>& reads, const std::function<void()>& fill,
                   ThreadState& ts) const override {
    Fetched f;
    f.owner = this;
    fetch(reads(), f, ts);
    struct Scope {
      Fetched* before;
      explicit Scope(Fetched* now) : before(fetched_now) { fetched_now = now; }
      ~Scope() { fetched_now = before; }
    } scope(&f);
    fill();
  }

  bool fetches_ahead() const override { return true; }

  void store_reads(const std::vector<KeyRead>& reads, std::vector<StoreRead>& out) const override {
    list_reads(reads, true, out);
  }

  // Not known: listing a remote array's objects (millions of chunks, pages of 1000) is no
  // price for a repr or info.
  int64_t stored_bytes() const override { return 0; }

  // Shard indexes read from the store (each once while it stays cached).
  int64_t index_reads() const {
    std::lock_guard<std::mutex> g(mu_);
    return index_reads_;
  }

 private:
  // store_reads: shards read whole when `whole_ok` and `reads` reads all of them (with
  // their index and inner chunks listed `instead`, for a prefetch with too little room);
  // reads in shards whose index is not cached: the index, then (once it is here, on the
  // prefetch's thread) those reads. One index read per shard.
  void list_reads(const std::vector<KeyRead>& reads, bool whole_ok, std::vector<StoreRead>& out) const {
    std::map<int64_t, std::pair<size_t, std::vector<KeyRead>>> after_index;
    const std::set<int64_t> whole = whole_ok ? whole_shards(reads) : std::set<int64_t>{};
    std::map<int64_t, size_t> listed;  // whole shards: where
    for (const KeyRead& r : reads) {
      const std::string key = join(prefix_, r.key);
      if (r.inner >= 0 && whole.count(r.shard)) {
        if (listed.try_emplace(r.shard, out.size()).second) {
          StoreRead s{store_, key, {{0, -1}}};
          s.expected = sat_mul(lay_->inner_chunks_in(r.shard), std::min(lay_->most_inner, unit_bytes()));
          out.push_back(std::move(s));
        }
      } else if (r.kind == KeyRead::Kind::Chunk) {
        out.push_back({store_, key, {{0, -1}}});
      } else if (r.inner >= 0) {  // an inner chunk, or a run of one
        if (auto index = cached_index(r.shard)) {
          const std::optional<ByteRange> at = inner_range(*index, r.inner);
          if (!at) continue;
          if (r.kind == KeyRead::Kind::Inner || run_reads_chunk(r)) {
            out.push_back({store_, key, {*at}});
          } else {
            const auto plan = new_plan(r, at->length, nullptr);
            for (const auto& w : plan->wants()) out.push_back({store_, key, {{at->offset + w.at, w.len}}});
          }
        } else if (suffix_ranges_ || !index_at_end()) {
          auto [it, fresh] = after_index.try_emplace(r.shard, out.size(), std::vector<KeyRead>{});
          if (fresh) out.push_back({store_, key, {index_range(-1)}, {}});
          it->second.second.push_back(r);
        }
      } else if (run_reads_chunk(r)) {
        out.push_back({store_, key, {{0, -1}}});
      } else {
        const auto plan = new_plan(r, -1, nullptr);
        for (const auto& w : plan->wants()) out.push_back({store_, key, {{w.at, w.len}}});
      }
    }
    for (auto& [sid, at] : after_index) {
      StoreRead& index_read = out[at.first];
      index_read.then = [this, sid = sid, key = at.second.front().key, rs = std::move(at.second)](
                            const ByteStore::Parts& parts, std::vector<StoreRead>& next) {
        if (!cached_index(sid)) {
          ThreadState ts;  // (the prefetch's thread has none: the index codecs need contexts)
          keep_index(sid, key, parts.at(0), ts);
        }
        list_reads(rs, false, next);
      };
    }
    std::map<int64_t, std::vector<KeyRead>> in_shard;  // (one pass over the reads, not one per shard)
    for (const KeyRead& r : reads)
      if (r.inner >= 0 && listed.count(r.shard)) in_shard[r.shard].push_back(r);
    for (const auto& [sid, rs] : in_shard) list_reads(rs, false, out[listed.at(sid)].instead);
  }

  Fetched* mine() const { return fetched_now && fetched_now->owner == this ? fetched_now : nullptr; }

  bool index_at_end() const { return lay_->meta->codecs.sharding->index_at_end; }

  // A run of half a chunk or more is read as the whole chunk: one request instead of three
  // (header, block starts, blocks), and what the prefetch lists for it.
  bool run_reads_chunk(const KeyRead& r) const { return r.n >= 1 && 2 * r.n >= prod(lay_->unit); }

  int64_t unit_bytes() const { return sat_mul(prod(lay_->unit), static_cast<int64_t>(itemsize(lay_->meta->dtype))); }

  // The shards `reads` read every inner chunk of whole (each inner chunk, or a run of half
  // of it or more): those are read whole, one request without the index round trip first
  // (as zarr-python reads a shard a selection covers). Fills that read a shard partly read
  // its index, then their inner chunks or blocks.
  std::set<int64_t> whole_shards(const std::vector<KeyRead>& reads) const {
    std::map<int64_t, std::set<int64_t>> inner_of;
    for (const KeyRead& r : reads)
      if (r.inner >= 0 && (r.kind == KeyRead::Kind::Inner || run_reads_chunk(r))) inner_of[r.shard].insert(r.inner);
    std::set<int64_t> out;
    for (const auto& [sid, inners] : inner_of)
      if (static_cast<int64_t>(inners.size()) >= lay_->inner_chunks_in(sid)) out.insert(sid);
    return out;
  }

  // `plan`'s steps served from its chunk's stored bytes [data, data + size), read whole.
  void serve_from(BloscRangePlan& plan, const uint8_t* data, int64_t size, const std::string& key) const {
    lay_->check_stored_size(key, size);
    while (!plan.wants().empty()) {
      for (const auto& w : plan.wants()) {
        if (w.at < 0 || w.len < 0 || w.at > size || w.len > size - w.at)
          throw IOError("'" + lay_->where(key) + "': Blosc: a block lies outside the chunk's " + std::to_string(size) +
                        " bytes (a damaged chunk)");
        std::memcpy(w.dst, data + w.at, static_cast<size_t>(w.len));
      }
      plan.advance();
    }
  }
  void serve_from(BloscRangePlan& plan, const std::vector<uint8_t>& chunk, const std::string& key) const {
    serve_from(plan, chunk.data(), static_cast<int64_t>(chunk.size()), key);
  }

  // The jobs in shards read whole, served from each shard's bytes: the shards `reads`
  // reads whole (`whole`, fetched together now), and those the fetch cache holds whole
  // (the prefetch read them for the task a fill is a piece of: shared, not copied). The
  // index is decoded from the bytes.
  template <class Job, class Absent>
  void serve_whole_shards(std::vector<Job>& jobs, const std::set<int64_t>& whole, Fetched& f, const Absent& absent,
                          ThreadState& ts) const {
    std::map<int64_t, std::vector<Job*>> of;  // by shard
    for (Job& j : jobs)
      if (!j.done && j.r->inner >= 0) of[j.r->shard].push_back(&j);
    if (of.empty()) return;
    std::map<int64_t, FetchCache::Value> bytes;
    std::vector<ByteStore::Request> unheld;
    std::vector<int64_t> unheld_ids;
    for (auto it = of.begin(); it != of.end();) {
      const int64_t sid = it->first;
      const StoreRead whole_read{store_, join(prefix_, it->second.front()->r->key), {{0, -1}}};
      if (fetch_holds(ts, whole_read)) {
        if (auto v = fetch_shared(ts, whole_read)) {
          bytes[sid] = std::move(v);
          ++it;
          continue;
        }
      }
      if (!whole.count(sid)) {
        it = of.erase(it);
        continue;
      }
      unheld.push_back({whole_read.key, whole_read.ranges});
      unheld_ids.push_back(sid);
      ++it;
    }
    if (!unheld.empty()) {
      auto got = fetch_read_many(ts, store_, unheld);
      if (got.size() != unheld.size())
        throw IOError("'" + lay_->name + "': the store answered " + std::to_string(got.size()) + " of " +
                      std::to_string(unheld.size()) + " requests");
      for (size_t k = 0; k < got.size(); ++k)
        bytes[unheld_ids[k]] = std::make_shared<const std::optional<ByteStore::Parts>>(std::move(got[k]));
    }
    for (auto& [sid, js] : of) {
      const std::string& key = js.front()->r->key;
      const auto& got = *bytes.at(sid);
      if (!got) {  // no shard: all fill
        for (Job* j : js) absent(*j);
        continue;
      }
      const std::vector<uint8_t>& shard = got->at(0);
      const int64_t size = static_cast<int64_t>(shard.size());
      const int64_t ib = lay_->meta->codecs.sharding->index_bytes(prod(lay_->per_shard));
      if (size < ib)
        throw IOError("'" + lay_->where(key) + "': shard of " + std::to_string(size) +
                      " bytes is shorter than its index (" + std::to_string(ib) + " bytes)");
      auto index = cached_index(sid);
      if (!index) {
        const ByteRange at = index_range(size);
        index =
            keep_index(sid, key, std::vector<uint8_t>(shard.begin() + at.offset, shard.begin() + at.offset + ib), ts);
      }
      lay_->check_index(*index, size, key);
      for (Job* j : js) {
        const KeyRead& r = *j->r;
        const std::optional<ByteRange> at = inner_range(*index, r.inner);
        if (!at) {
          absent(*j);
          continue;
        }
        const uint8_t* data = shard.data() + at->offset;
        if (r.kind == KeyRead::Kind::Inner) {
          f.inners[{key, r.inner}] = std::vector<uint8_t>(data, data + at->length);
        } else {
          auto plan = new_plan(r, at->length, nullptr);
          serve_from(*plan, data, at->length, key);
          f.runs[run_id(r)] = std::move(plan);
        }
        j->done = true;
      }
    }
  }

  // Where a shard's index is: at its start, or its last bytes (a suffix range, or from
  // the shard's `size` when known).
  ByteRange index_range(int64_t size) const {
    const Sharding& s = *lay_->meta->codecs.sharding;
    const int64_t ib = s.index_bytes(prod(lay_->per_shard));
    if (!s.index_at_end) return {0, ib};
    return size >= 0 ? ByteRange{size - ib, ib} : ByteRange{-ib, ib};
  }

  // The size of shard `key` (a stat), -1 when it is absent; IOError when it cannot hold its index.
  int64_t shard_size(const std::string& key) const {
    const auto info = store_->stat(join(prefix_, key));
    if (!info) return -1;
    const int64_t ib = lay_->meta->codecs.sharding->index_bytes(prod(lay_->per_shard));
    if (info->size < ib)
      throw IOError("'" + lay_->where(key) + "': shard of " + std::to_string(info->size) +
                    " bytes is shorter than its index (" + std::to_string(ib) + " bytes)");
    return info->size;
  }

  std::string where(const KeyRead& r) const {
    return r.inner < 0 ? lay_->where(r.key) : lay_->where(r.key) + " (inner chunk " + std::to_string(r.inner) + ")";
  }

  // The plan of run `r` over its Blosc buffer of `size` bytes (-1: not known). (On the
  // heap: its reads point into it.)
  std::unique_ptr<BloscRangePlan> new_plan(const KeyRead& r, int64_t size, void* direct) const {
    const size_t isz = itemsize(lay_->meta->dtype);
    return std::make_unique<BloscRangePlan>(size, prod(lay_->unit) * static_cast<int64_t>(isz), isz, where(r), r.start,
                                            r.n, direct);
  }

  // Shard `key`'s index (id `sid`): cached, else read (a suffix range, or from the shard's
  // size on stores without them); null when the shard is absent.
  std::shared_ptr<const std::vector<uint64_t>> index_of(int64_t sid, const std::string& key, ThreadState& ts) const {
    if (auto index = cached_index(sid)) return index;
    std::optional<ByteStore::Parts> parts;
    if (suffix_ranges_) {
      try {
        parts = store_->read(join(prefix_, key), {index_range(-1)});
      } catch (const ValueError&) {
        if (!index_at_end()) throw;
        suffix_ranges_ = false;  // (a store without suffix ranges: the shard's size first)
      }
    }
    if (!suffix_ranges_) {
      const int64_t size = shard_size(key);
      if (size < 0) return nullptr;
      parts = store_->read(join(prefix_, key), {index_range(size)});
    }
    if (!parts) return nullptr;
    return keep_index(sid, key, (*parts)[0], ts);
  }

  std::shared_ptr<const std::vector<uint64_t>> cached_index(int64_t sid) const {
    std::lock_guard<std::mutex> g(mu_);
    auto it = indexes_.find(sid);
    if (it == indexes_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second.second);
    return it->second.first;
  }

  // The index bytes of shard `key` decoded, checked and cached (the least recently used
  // dropped beyond kIndexCacheBytes).
  std::shared_ptr<const std::vector<uint64_t>> keep_index(int64_t sid, const std::string& key,
                                                          const std::vector<uint8_t>& bytes, ThreadState& ts) const {
    const Sharding& s = *lay_->meta->codecs.sharding;
    auto v = decode_index(s, bytes.data(), bytes.size(), prod(lay_->per_shard), lay_->where(key), ts);
    lay_->check_index(v, -1, key);
    auto index = std::make_shared<const std::vector<uint64_t>>(std::move(v));
    const int64_t cost = static_cast<int64_t>(index->size() * 8);
    std::lock_guard<std::mutex> g(mu_);
    ++index_reads_;
    if (auto it = indexes_.find(sid); it != indexes_.end()) {
      lru_.erase(it->second.second);
      cached_bytes_ -= static_cast<int64_t>(it->second.first->size() * 8);
      indexes_.erase(it);
    }
    lru_.push_front(sid);
    indexes_[sid] = {index, lru_.begin()};
    cached_bytes_ += cost;
    while (cached_bytes_ > kIndexCacheBytes && lru_.size() > 1) {
      auto old = indexes_.find(lru_.back());
      cached_bytes_ -= static_cast<int64_t>(old->second.first->size() * 8);
      indexes_.erase(old);
      lru_.pop_back();
    }
    return index;
  }

  // Every read of `reads` fetched into `f`, in rounds of one read_many each: a shard's
  // index first when it is not cached (then its inner chunks, or their runs), a run's
  // header and block starts before its blocks.
  void fetch(const std::vector<KeyRead>& reads, Fetched& f, ThreadState& ts) const {
    struct Job {
      const KeyRead* r;
      std::shared_ptr<const std::vector<uint64_t>> index;  // in a shard: once known
      std::unique_ptr<BloscRangePlan> plan;                // Run: once its buffer is known
      int64_t base = 0, size = -1;                         // Run: its buffer's bytes (-1: to the end)
      bool whole = false;                                  // Run: its buffer read whole
      bool held = false;                                   // ... which the fetch cache holds
      int64_t shard_size = -1;                             // in a shard, stores without suffix ranges
      bool done = false;
      std::vector<std::pair<size_t, size_t>> at;  // this round's parts
    };
    const auto absent = [&](Job& j) {
      if (j.r->kind == KeyRead::Kind::Run) f.runs[run_id(*j.r)] = nullptr;
      else if (j.r->kind == KeyRead::Kind::Inner) f.inners[{j.r->key, j.r->inner}] = std::nullopt;
      else f.chunks[j.r->key] = std::nullopt;
      j.done = true;
    };
    // A run's plan, once the buffer it reads is known (an inner chunk: from its index).
    const auto start_run = [&](Job& j) {
      const KeyRead& r = *j.r;
      if (r.inner >= 0) {
        const std::optional<ByteRange> at = inner_range(*j.index, r.inner);
        if (!at) return absent(j);
        j.base = at->offset, j.size = at->length;
      }
      j.held = fetch_holds(ts, {store_, join(prefix_, r.key), {{j.base, j.size}}});
      j.whole = j.held || run_reads_chunk(r);
      j.plan = new_plan(r, j.size, nullptr);
      if (!j.whole && j.plan->wants().empty()) {  // (nothing to read: an empty run)
        f.runs[run_id(r)] = std::move(j.plan);
        j.done = true;
      }
    };
    std::vector<Job> jobs;
    jobs.reserve(reads.size());
    for (const KeyRead& r : reads) {
      if (r.kind == KeyRead::Kind::Run     ? f.runs.count(run_id(r))
          : r.kind == KeyRead::Kind::Inner ? f.inners.count({r.key, r.inner})
                                           : f.chunks.count(r.key))
        continue;
      Job j{&r};
      if (r.inner >= 0) j.index = cached_index(r.shard);
      jobs.push_back(std::move(j));
    }
    serve_whole_shards(jobs, whole_shards(reads), f, absent, ts);
    for (Job& j : jobs)
      if (!j.done && j.r->kind == KeyRead::Kind::Run && (j.r->inner < 0 || j.index)) start_run(j);
    bool without_suffixes = false;  // a round was asked again without suffix ranges
    while (true) {
      Batch batch;
      bool suffixes = false;  // a suffix range is asked in this round
      for (Job& j : jobs) {
        j.at.clear();
        if (j.done) continue;
        const KeyRead& r = *j.r;
        const std::string key = join(prefix_, r.key);
        if (r.inner >= 0 && !j.index) {  // the shard's index first
          if (!suffix_ranges_ && index_at_end() && j.shard_size < 0) {
            j.shard_size = shard_size(r.key);
            if (j.shard_size < 0) {  // no shard
              absent(j);
              continue;
            }
          }
          j.at.push_back(batch.add(key, index_range(j.shard_size)));
          if (index_at_end() && j.shard_size < 0) suffixes = true;
        } else if (r.kind == KeyRead::Kind::Chunk) {
          j.at.push_back(batch.add(key, {0, -1}));
        } else if (r.kind == KeyRead::Kind::Inner) {
          const std::optional<ByteRange> at = inner_range(*j.index, r.inner);
          if (!at) absent(j);
          else j.at.push_back(batch.add(key, *at));
        } else if (j.held) {  // served from the cache's copy, shared: a chunk several fills read is not copied
          const auto v = fetch_shared(ts, {store_, key, {{j.base, j.size}}});
          if (!*v) {
            absent(j);
            continue;
          }
          serve_from(*j.plan, (**v).at(0), r.key);
          f.runs[run_id(r)] = std::move(j.plan);
          j.done = true;
        } else if (j.whole) {
          j.at.push_back(batch.add(key, {j.base, j.size}));
        } else {
          for (const auto& w : j.plan->wants()) j.at.push_back(batch.add(key, {j.base + w.at, w.len}));
        }
      }
      if (batch.empty()) return;
      std::vector<std::optional<ByteStore::Parts>> got;
      try {
        got = fetch_read_many(ts, store_, batch.requests());
      } catch (const ValueError&) {
        // A store that takes no suffix ranges (bytes=-N): shard sizes asked first, again.
        // (Once: another worker may have found it out meanwhile.)
        if (!suffixes || without_suffixes) throw;
        suffix_ranges_ = false;
        without_suffixes = true;
        continue;
      }
      if (got.size() != batch.requests().size())
        throw IOError("'" + lay_->name + "': the store answered " + std::to_string(got.size()) + " of " +
                      std::to_string(batch.requests().size()) + " requests");
      // A part one job takes is moved to it; one asked twice is copied.
      std::map<std::pair<size_t, size_t>, int> takers;
      for (const Job& j : jobs)
        if (!j.done)
          for (const auto& at : j.at) ++takers[at];
      const auto take = [&](std::vector<uint8_t>& part, std::pair<size_t, size_t> at) -> std::vector<uint8_t> {
        if (takers[at] == 1) return std::move(part);
        return part;
      };
      for (Job& j : jobs) {
        if (j.done || j.at.empty()) continue;
        const KeyRead& r = *j.r;
        std::optional<ByteStore::Parts>& res = got[j.at[0].first];
        if (!res) {  // no object (a shard: all fill; nothing cached, so one written later is read)
          absent(j);
          continue;
        }
        if (r.inner >= 0 && !j.index) {
          j.index = cached_index(r.shard);  // (another job of this round may have decoded it)
          if (!j.index) j.index = keep_index(r.shard, r.key, (*res)[j.at[0].second], ts);
          if (r.kind == KeyRead::Kind::Run) start_run(j);
        } else if (r.kind == KeyRead::Kind::Chunk) {
          f.chunks[r.key] = take((*res)[j.at[0].second], j.at[0]);
          j.done = true;
        } else if (r.kind == KeyRead::Kind::Inner) {
          f.inners[{r.key, r.inner}] = take((*res)[j.at[0].second], j.at[0]);
          j.done = true;
        } else if (j.whole) {
          serve_from(*j.plan, (*res)[j.at[0].second], r.key);
          f.runs[run_id(r)] = std::move(j.plan);
          j.done = true;
        } else {
          const auto& wants = j.plan->wants();
          for (size_t k = 0; k < wants.size(); ++k) {
            const auto& part = (*res)[j.at[k].second];
            if (static_cast<int64_t>(part.size()) != wants[k].len)
              throw IOError("'" + where(r) + "': the store returned " + std::to_string(part.size()) + " of " +
                            std::to_string(wants[k].len) + " bytes");
            std::memcpy(wants[k].dst, part.data(), part.size());
          }
          j.plan->advance();
          if (j.plan->wants().empty()) {
            f.runs[run_id(r)] = std::move(j.plan);
            j.done = true;
          }
        }
      }
    }
  }

  StorePtr store_;
  std::string prefix_;
  mutable std::mutex mu_;
  mutable std::unordered_map<int64_t,
                             std::pair<std::shared_ptr<const std::vector<uint64_t>>, std::list<int64_t>::iterator>>
      indexes_;
  mutable std::list<int64_t> lru_;  // most recent first
  mutable int64_t cached_bytes_ = 0, index_reads_ = 0;
  mutable std::atomic<bool> suffix_ranges_{true};  // until the store refuses one
};

// --- metadata ------------------------------------------------------------------------------

// Whole objects `keys` of `store`, in one read_many.
std::vector<std::optional<ByteStore::Parts>> whole_objects(const StorePtr& store,
                                                           const std::vector<std::string>& keys) {
  std::vector<ByteStore::Request> requests;
  for (const std::string& k : keys) requests.push_back({k, {ByteRange{0, -1}}});
  auto got = store->read_many(requests);
  if (got.size() != keys.size())
    throw IOError("'" + store->root() + "': the store answered " + std::to_string(got.size()) + " of " +
                  std::to_string(keys.size()) + " requests");
  return got;
}

std::optional<std::string> text_of(const std::optional<ByteStore::Parts>& got, const StorePtr& store,
                                   const std::string& key) {
  if (!got) return std::nullopt;
  const auto& b = (*got)[0];
  if (static_cast<int64_t>(b.size()) > kMaxMetadata)
    throw IOError("'" + store->url_of(key) + "': " + std::to_string(b.size()) + " bytes is too large for metadata");
  return std::string(b.begin(), b.end());
}

json parse_json(const std::string& text, const std::string& url) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw IOError("'" + url + "': not valid JSON (" + e.what() + ")");
  }
}

bool node_is(const json& j, const char* type) {
  if (!j.is_object()) return false;
  const auto it = j.find("node_type");
  return it != j.end() && it->is_string() && it->get_ref<const std::string&>() == type;
}

// The arrays a group's consolidated metadata lists, for messages: "a, b/c".
std::string arrays_listed(const json& members, int version) {
  std::string s;
  if (!members.is_object()) return s;
  for (auto it = members.begin(); it != members.end(); ++it) {
    std::string name = it.key();
    if (version == 3) {
      if (!node_is(it.value(), "array")) continue;
    } else {
      const std::string tail = "/.zarray";
      if (name.size() <= tail.size() || name.compare(name.size() - tail.size(), tail.size(), tail) != 0) continue;
      name.resize(name.size() - tail.size());
    }
    s += (s.empty() ? "" : ", ") + name;
  }
  return s;
}

[[noreturn]] void group_not_array(const std::string& url, const std::string& arrays) {
  throw IOError("'" + url + "' is a Zarr group, not an array: name an array inside it" +
                (arrays.empty() ? std::string() : " (its arrays: " + arrays + ")"));
}

// The metadata objects at a store's root (zarr.json, .zarray, .zgroup), read in one batch.
// Recognising a remote URL reads them, then opening it: the second takes what the first
// read (a few stores remembered, by the store object, each for one open).
std::vector<std::optional<ByteStore::Parts>> root_metadata(const StorePtr& store) {
  static std::mutex mu;
  static std::list<std::pair<std::weak_ptr<ByteStore>, std::vector<std::optional<ByteStore::Parts>>>> recent;
  {
    std::lock_guard<std::mutex> g(mu);
    for (auto it = recent.begin(); it != recent.end(); ++it)
      if (it->first.lock() == store) {
        auto got = std::move(it->second);
        recent.erase(it);
        return got;
      }
  }
  auto got = whole_objects(store, {"zarr.json", ".zarray", ".zgroup"});
  std::lock_guard<std::mutex> g(mu);
  recent.emplace_front(store, got);
  while (recent.size() > 8) recent.pop_back();
  for (auto it = recent.begin(); it != recent.end();) it = it->first.expired() ? recent.erase(it) : std::next(it);
  return got;
}

// The metadata of the array at the store's root `prefix`, read in one batch; or of the
// group's member (from its consolidated metadata, when given).
Metadata read_metadata(const StorePtr& store, const std::string& prefix) {
  const std::string v3 = join(prefix, "zarr.json"), v2 = join(prefix, ".zarray");
  std::vector<std::optional<ByteStore::Parts>> got;
  if (prefix.empty()) got = root_metadata(store);
  else got = whole_objects(store, {v3, v2});
  if (auto t = text_of(got[0], store, v3)) {
    const json j = parse_json(*t, store->url_of(v3));
    if (node_is(j, "group")) {
      std::string arrays;
      if (j.contains("consolidated_metadata")) {
        const json& cm = j["consolidated_metadata"];
        if (cm.is_object() && cm.contains("metadata")) arrays = arrays_listed(cm["metadata"], 3);
      }
      group_not_array(store->url_of(prefix), arrays);
    }
    return parse_metadata(*t, 3, store->url_of(v3));
  }
  if (auto t = text_of(got[1], store, v2)) return parse_metadata(*t, 2, store->url_of(v2));
  const auto group = whole_objects(store, {join(prefix, ".zmetadata"), join(prefix, ".zgroup")});
  if (group.size() == 2 && group[0]) {
    const std::string zm = join(prefix, ".zmetadata");
    const json j = parse_json(*text_of(group[0], store, zm), store->url_of(zm));
    std::string arrays;
    if (j.is_object() && j.contains("metadata")) arrays = arrays_listed(j["metadata"], 2);
    group_not_array(store->url_of(prefix), arrays);
  }
  if (group.size() == 2 && group[1]) group_not_array(store->url_of(prefix), std::string());
  throw IOError("cannot open '" + store->url_of(prefix) + "' as a Zarr array: it has no zarr.json or .zarray");
}

// Member `member`'s metadata from the consolidated metadata of the group at the store's
// root (v3: zarr.json's consolidated_metadata; v2: .zmetadata), read in one batch; nullopt
// when the group has none (or does not list it).
std::optional<Metadata> consolidated_member(const StorePtr& store, const std::string& member) {
  const auto got = whole_objects(store, {"zarr.json", ".zmetadata"});
  if (auto t = text_of(got[0], store, "zarr.json")) {
    const json j = parse_json(*t, store->url_of("zarr.json"));
    if (j.is_object() && j.contains("consolidated_metadata")) {
      const json& cm = j["consolidated_metadata"];
      if (cm.is_object() && cm.contains("metadata") && cm["metadata"].is_object() && cm["metadata"].contains(member)) {
        const json& m = cm["metadata"][member];
        if (node_is(m, "group")) group_not_array(store->url_of(member), std::string());
        return parse_metadata(m.dump(), 3, store->url_of("zarr.json") + " (consolidated: " + member + ")");
      }
    }
  }
  if (auto t = text_of(got[1], store, ".zmetadata")) {
    const json j = parse_json(*t, store->url_of(".zmetadata"));
    const std::string k = member + "/.zarray";
    if (j.is_object() && j.contains("metadata") && j["metadata"].is_object() && j["metadata"].contains(k))
      return parse_metadata(j["metadata"][k].dump(), 2, store->url_of(".zmetadata") + " (" + k + ")");
  }
  return std::nullopt;
}

}  // namespace

std::unique_ptr<KeyReader> open_store_keys(const StorePtr& store, const std::string& member_in, Metadata& meta) {
  std::string member = member_in;
  while (!member.empty() && member.front() == '/') member.erase(0, 1);
  while (!member.empty() && member.back() == '/') member.pop_back();
  std::optional<Metadata> m;
  if (!member.empty()) m = consolidated_member(store, member);
  meta = m ? std::move(*m) : read_metadata(store, member);
  return std::make_unique<StoreKeys>(store, member);
}

std::unique_ptr<KeyReader> store_keys(const StorePtr& store, const std::string& prefix) {
  return std::make_unique<StoreKeys>(store, prefix);
}

bool store_holds_zarr(const StorePtr& store) {
  try {
    const auto got = root_metadata(store);
    for (const auto& g : got)
      if (g) return true;
  } catch (const Error&) {}
  return false;
}

int64_t store_index_reads(const KeyReader& keys) {
  const auto* s = dynamic_cast<const StoreKeys*>(&keys);
  return s ? s->index_reads() : 0;
}

}  // namespace b2lazy::zarr
