// The plan-driven prefetch (exec/prefetcher.hpp) and the cache of fetched bytes
// (runtime/fetch_cache.hpp), over a source whose units are objects "u/<id>" of a local store
// (io/store/store_units_source.hpp) wrapped in a store that records every read.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "b2lazy/array.hpp"
#include "b2lazy/byte_store.hpp"
#include "b2lazy/error.hpp"
#include "b2lazy/plan.hpp"
#include "io/store/store_units_source.hpp"
#include "runtime/fetch_cache.hpp"
#include "test_util.hpp"

namespace b2lazy {
namespace {

// A local store that records what is read (single reads and read_many batches), how
// many calls run at once, and can fail or cancel at a key; `latency` per call.
class RecordingStore : public ByteStore {
 public:
  explicit RecordingStore(StorePtr inner, int latency_ms = 0) : inner_(std::move(inner)), latency_ms_(latency_ms) {}
  std::string root() const override { return inner_->root(); }
  std::optional<Parts> read(const std::string& key, const std::vector<ByteRange>& ranges) override {
    Active a(*this);
    {
      std::lock_guard<std::mutex> g(mu_);
      single_.push_back(key);
      ++reads_[key];
    }
    hook(key);
    return inner_->read(key, ranges);
  }
  std::vector<std::optional<Parts>> read_many(const std::vector<Request>& requests) override {
    Active a(*this);
    std::vector<std::string> keys;
    for (const Request& r : requests) keys.push_back(r.key);
    {
      std::lock_guard<std::mutex> g(mu_);
      batches_.push_back(keys);
      for (const auto& k : keys) ++reads_[k];
    }
    for (const auto& k : keys) hook(k);
    return inner_->read_many(requests);
  }
  std::optional<ObjectInfo> stat(const std::string& key) override { return inner_->stat(key); }
  std::vector<ObjectInfo> list(const std::string& prefix) override { return inner_->list(prefix); }
  void write(const std::string& key, const void* data, size_t n) override { inner_->write(key, data, n); }
  void remove(const std::string& key) override { inner_->remove(key); }
  StoreCounters counters() const override { return inner_->counters(); }

  std::string fail_key, cancel_key;
  std::atomic<bool>* cancel = nullptr;
  std::mutex mu_;
  std::vector<std::string> single_;
  std::vector<std::vector<std::string>> batches_;
  std::map<std::string, int> reads_;
  std::atomic<int> active{0}, most_active{0};

 private:
  struct Active {
    explicit Active(RecordingStore& s) : s_(s) {
      const int now = ++s_.active;
      int m = s_.most_active.load();
      while (now > m && !s_.most_active.compare_exchange_weak(m, now)) {}
      if (s_.latency_ms_) std::this_thread::sleep_for(std::chrono::milliseconds(s_.latency_ms_));
    }
    ~Active() { --s_.active; }
    RecordingStore& s_;
  };
  void hook(const std::string& key) {
    if (!cancel_key.empty() && key == cancel_key && cancel) *cancel = true;
    if (!fail_key.empty() && key == fail_key) throw IOError("test store: " + url_of(key) + ": HTTP 503 (injected)");
  }
  StorePtr inner_;
  int latency_ms_;
};

constexpr int64_t kUnit = 512;

// `n` units of float64 in `dir`, item i holding i (the last unit padded).
std::shared_ptr<RecordingStore> units_store(const std::string& name, int64_t n, int64_t size, int latency_ms = 0) {
  auto local = open_store(test::temp_dir(name).string());
  for (int64_t u = 0; u < n; ++u) {
    std::vector<double> v(kUnit);
    for (int64_t i = 0; i < kUnit; ++i) v[i] = static_cast<double>(u * kUnit + i < size ? u * kUnit + i : -1);
    local->write(StoreUnitsSource::unit_key(u), v.data(), v.size() * sizeof(double));
  }
  return std::make_shared<RecordingStore>(local, latency_ms);
}

int64_t unit_of(const std::string& key) { return std::stoll(key.substr(2)); }

// (2 ms a call: a local store answers before the prefetch sends anything, and the
// workers, past the tasks it planned, read for themselves.)
TEST(Prefetch, UnitsFetchedAheadInPlanOrderEachOnce) {
  const int64_t n = 64, size = n * kUnit - 100;
  auto store = units_store("prefetch_order", n, size, 2);
  Array a(std::make_shared<StoreUnitsSource>(store, DType::F64, Shape{size}, Shape{kUnit}));
  Context ctx(2);
  std::vector<double> out(size);
  const Stats s = a.to_buffer(out.data(), &ctx);
  for (int64_t i = 0; i < size; ++i) ASSERT_EQ(out[i], static_cast<double>(i));
  // Every unit read from the store once: ahead by the prefetch, or by its task.
  ASSERT_EQ(store->reads_.size(), static_cast<size_t>(n));
  for (auto& [k, times] : store->reads_) EXPECT_EQ(times, 1) << k;
  EXPECT_EQ(s.prefetch_hits + s.prefetch_misses, n);
  EXPECT_EQ(s.prefetch_reads, s.prefetch_hits);
  EXPECT_GE(s.prefetch_reads, n / 2);  // (timing decides the rest: each is read once either way)
  EXPECT_EQ(s.store_requests, n);
  EXPECT_EQ(s.store_bytes, n * kUnit * 8);
  // The batches in plan order: each ascending, batches disjoint ranges of units, each at
  // most Prefetcher::kBatch reads.
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (const auto& b : store->batches_) {
    ASSERT_FALSE(b.empty());
    EXPECT_LE(b.size(), 16u);
    for (size_t i = 1; i < b.size(); ++i) EXPECT_LT(unit_of(b[i - 1]), unit_of(b[i]));
    spans.push_back({unit_of(b.front()), unit_of(b.back())});
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i) EXPECT_LT(spans[i - 1].second, spans[i].first);
  EXPECT_EQ(store->active.load(), 0);
}

TEST(Prefetch, OneChunkReductionReadsAheadToo) {
  const int64_t n = 40, size = n * kUnit;
  auto store = units_store("prefetch_sum", n, size);
  Array a(std::make_shared<StoreUnitsSource>(store, DType::F64, Shape{size}, Shape{kUnit}));
  Context ctx(2);
  double total = 0;
  const Stats s = sum(a).to_buffer(&total, &ctx);
  EXPECT_EQ(total, static_cast<double>(size) * (size - 1) / 2);
  for (auto& [k, times] : store->reads_) EXPECT_EQ(times, 1) << k;
  EXPECT_EQ(store->reads_.size(), static_cast<size_t>(n));
  EXPECT_GT(s.prefetch_reads, 0);
}

TEST(Prefetch, PlanCountsTheCacheInItsMemory) {
  auto store = units_store("prefetch_plan", 8, 8 * kUnit);
  Array a(std::make_shared<StoreUnitsSource>(store, DType::F64, Shape{8 * kUnit}, Shape{kUnit}));
  ComputeOptions o;
  o.max_memory = size_t(64) << 20;
  const Plan p = make_plan(a, o, PlanTarget::Dense);
  EXPECT_EQ(p.fetch_bytes, int64_t(8) << 20);  // an eighth of max_memory
  EXPECT_NE(p.memory_model.find("fetched store reads"), std::string::npos) << p.memory_model;
  Context ctx(1);
  const Array local = test::stored(a, {kUnit}, {kUnit}, ctx);
  EXPECT_EQ(make_plan(local, o, PlanTarget::Dense).fetch_bytes, 0);  // no source reads from a store
}

TEST(Prefetch, CacheStaysWithinItsBytes) {
  auto store = units_store("prefetch_bound", 20, 20 * kUnit);
  const int64_t unit_bytes = kUnit * 8;
  FetchCache cache(6 * unit_bytes);
  auto unit = [&](int64_t u) { return StoreRead{store, StoreUnitsSource::unit_key(u), {{0, -1}}}; };
  std::vector<FetchCache::Pending> pending;
  int64_t reserved = 0;
  for (int64_t u = 0; u < 20; ++u) {
    std::optional<FetchCache::Pending> p;
    if (!cache.reserve(unit(u), unit_bytes, u, p)) break;
    ASSERT_TRUE(p);
    pending.push_back(std::move(*p));
    ++reserved;
  }
  EXPECT_EQ(reserved, 3);  // fetched ahead and not read: at most half the cache
  for (auto& p : pending) cache.fulfil(p, store->read(p.read.key, p.read.ranges));
  EXPECT_EQ(cache.held_bytes(), 3 * unit_bytes);
  // Read once each: the next ones fit beside them (the other half keeps what was read
  // lately); repeated reads hit.
  for (int64_t u = 0; u < 3; ++u) ASSERT_TRUE(cache.read(unit(u)));
  ASSERT_TRUE(cache.read(unit(2)));
  for (int64_t u = 3; u < 6; ++u) {
    std::optional<FetchCache::Pending> p;
    ASSERT_TRUE(cache.reserve(unit(u), unit_bytes, u, p));
    ASSERT_TRUE(p);
    cache.fulfil(*p, store->read(p->read.key, p->read.ranges));
  }
  for (int64_t u = 0; u < 6; ++u) EXPECT_TRUE(cache.holds(unit(u))) << u;
  std::optional<FetchCache::Pending> none;
  EXPECT_FALSE(cache.reserve(unit(6), unit_bytes, 6, none));  // half the cache is ahead already
  for (int64_t u = 3; u < 6; ++u) ASSERT_TRUE(cache.read(unit(u)));
  for (int64_t u = 6; u < 20; ++u) {
    std::optional<FetchCache::Pending> p;
    ASSERT_TRUE(cache.reserve(unit(u), unit_bytes, u, p));
    ASSERT_TRUE(p);
    cache.fulfil(*p, store->read(p->read.key, p->read.ranges));
    ASSERT_TRUE(cache.read(p->read));
  }
  EXPECT_LE(cache.most_held_bytes(), 6 * unit_bytes);
  EXPECT_FALSE(cache.holds(unit(0)));  // the least recently read went first
  Stats s;
  cache.collect(s);
  EXPECT_EQ(s.prefetch_hits, 21);
  EXPECT_EQ(s.prefetch_misses, 0);
  EXPECT_EQ(s.prefetch_reads, 20);
}

TEST(Prefetch, ReadManyTakesEachRangeFromTheCache) {
  auto store = units_store("prefetch_many", 4, 4 * kUnit);
  const int64_t unit_bytes = kUnit * 8;
  FetchCache cache(16 * unit_bytes);
  const std::string k0 = StoreUnitsSource::unit_key(0), k1 = StoreUnitsSource::unit_key(1);
  std::optional<FetchCache::Pending> p;
  ASSERT_TRUE(cache.reserve({store, k0, {{8, 16}}}, 16, 0, p));  // a range fetched ahead
  ASSERT_TRUE(p);
  cache.fulfil(*p, store->read(k0, {{8, 16}}));
  const size_t before = store->batches_.size();
  // One request of two ranges (one of them ahead), a whole object, a missing one.
  auto got = cache.read_many(store, {{k0, {{0, 8}, {8, 16}}}, {k1, {{0, -1}}}, {"u/none", {{0, 4}}}});
  ASSERT_EQ(got.size(), 3u);
  ASSERT_TRUE(got[0] && got[0]->size() == 2u);
  EXPECT_EQ((*got[0])[0], (*store->read(k0, {{0, 8}}))[0]);
  EXPECT_EQ((*got[0])[1], (*store->read(k0, {{8, 16}}))[0]);
  ASSERT_TRUE(got[1]);
  EXPECT_EQ(static_cast<int64_t>((*got[1])[0].size()), unit_bytes);
  EXPECT_FALSE(got[2]);
  ASSERT_EQ(store->batches_.size(), before + 1);  // the misses, in one read_many
  EXPECT_EQ(store->batches_.back(), (std::vector<std::string>{k0, k1, "u/none"}));
  Stats s;
  cache.collect(s);
  EXPECT_EQ(s.prefetch_hits, 1);
  EXPECT_EQ(s.prefetch_misses, 3);
  // Asked again: every range a hit (the absent object too), nothing sent.
  auto twice = cache.read_many(store, {{k1, {{0, -1}}}, {k0, {{0, 8}}}});
  EXPECT_EQ(store->batches_.size(), before + 1);
  EXPECT_EQ(twice[0], got[1]);
}

TEST(Prefetch, WhatTheWorkersReadOfATaskIsNotFetchedAheadForIt) {
  // A one-task plan (a reduction to one chunk): the workers ran ahead of the prefetch and
  // read blocks of unit 0 themselves. The whole unit fetched ahead for that task would
  // never be read — kept as ahead, it filled the budget and stopped the prefetch — so it
  // is not fetched; a later task's read of it is, and so are other units.
  auto store = units_store("prefetch_behind", 4, 4 * kUnit);
  const int64_t unit_bytes = kUnit * 8;
  FetchCache cache(16 * unit_bytes);
  const std::string k0 = StoreUnitsSource::unit_key(0), k1 = StoreUnitsSource::unit_key(1);
  cache.claimed(0);
  ASSERT_TRUE(cache.read_many(store, {{k0, {{8, 16}}}})[0]);  // a worker's own read (a miss)
  std::optional<FetchCache::Pending> p;
  ASSERT_TRUE(cache.reserve({store, k0, {{0, unit_bytes}}}, unit_bytes, 0, p));
  EXPECT_FALSE(p);  // behind the workers: nothing to fetch
  ASSERT_TRUE(cache.reserve({store, k1, {{0, unit_bytes}}}, unit_bytes, 0, p));
  EXPECT_TRUE(p);  // another unit: fetched ahead
  cache.fulfil(*p, store->read(k1, {{0, unit_bytes}}));
  ASSERT_TRUE(cache.reserve({store, k0, {{0, unit_bytes}}}, unit_bytes, 1, p));
  EXPECT_TRUE(p);  // a later task: fetched ahead for it
  cache.fulfil(*p, store->read(k0, {{0, unit_bytes}}));
  EXPECT_EQ(cache.held_bytes(), 16 + 2 * unit_bytes);
}

TEST(Prefetch, SmallBudgetBoundsWhatIsHeldAhead) {
  const int64_t n = 48, size = n * kUnit;
  auto store = units_store("prefetch_small", n, size);
  Array a(std::make_shared<StoreUnitsSource>(store, DType::F64, Shape{size}, Shape{kUnit}));
  Context ctx(2);
  std::vector<double> out(size);
  // An eighth of 256 KiB: 8 units of 4 KiB.
  const Stats s = a.to_buffer(out.data(), &ctx, size_t(256) << 10);
  for (int64_t i = 0; i < size; ++i) ASSERT_EQ(out[i], static_cast<double>(i));
  // A unit two tasks read may be read again when the small cache let it go between them.
  for (auto& [k, times] : store->reads_) EXPECT_LE(times, 2) << k;
  for (const auto& b : store->batches_) EXPECT_LE(b.size(), 8u);  // never more ahead than fits
  EXPECT_GT(s.prefetch_reads, 0);
}

TEST(Prefetch, StoreErrorFailsTheEvaluationAndNothingRuns) {
  const int64_t n = 64, size = n * kUnit;
  auto store = units_store("prefetch_error", n, size);
  store->fail_key = "u/40";
  Array a(std::make_shared<StoreUnitsSource>(store, DType::F64, Shape{size}, Shape{kUnit}));
  Context ctx(2);
  std::vector<double> out(size);
  try {
    a.to_buffer(out.data(), &ctx);
    FAIL() << "no error";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("u/40"), std::string::npos) << e.what();
  }
  EXPECT_EQ(store->active.load(), 0);  // the prefetch's threads joined, no read running
  // The same context evaluates again once the store is well.
  store->fail_key.clear();
  a.to_buffer(out.data(), &ctx);
  EXPECT_EQ(out[size - 1], static_cast<double>(size - 1));
}

TEST(Prefetch, CancelledStopsWithNothingRunning) {
  const int64_t n = 64, size = n * kUnit;
  auto store = units_store("prefetch_cancel", n, size, 2);
  std::atomic<bool> cancel{false};
  store->cancel = &cancel;
  store->cancel_key = "u/20";
  Array a(std::make_shared<StoreUnitsSource>(store, DType::F64, Shape{size}, Shape{kUnit}));
  Context ctx(2);
  std::vector<double> out(size);
  EvalOptions o;
  o.cancel = &cancel;
  EXPECT_THROW(a.to_buffer(out.data(), o, &ctx), Cancelled);
  EXPECT_EQ(store->active.load(), 0);
  EXPECT_LT(store->reads_.size(), static_cast<size_t>(n));  // stopped before reading it all
}

TEST(Prefetch, MissingUnitNamesItsUrl) {
  const int64_t n = 8, size = n * kUnit;
  auto store = units_store("prefetch_missing", n, size);
  store->remove("u/5");
  Array a(std::make_shared<StoreUnitsSource>(store, DType::F64, Shape{size}, Shape{kUnit}));
  Context ctx(2);
  std::vector<double> out(size);
  try {
    a.to_buffer(out.data(), &ctx);
    FAIL() << "no error";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("u/5 does not exist"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace b2lazy
