// ObjectPages: an object read in cached aligned pages, over a LocalStore wrapped to record
// each store call (the point is round trips avoided).
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "b2lazy/byte_store.hpp"
#include "b2lazy/error.hpp"
#include "io/store/local_store.hpp"
#include "io/store/object_pages.hpp"
#include "io/store/object_slice_store.hpp"
#include "test_util.hpp"

namespace b2lazy {
namespace {

// Forwards to a store and records the ranges of every read call, and the stats.
class RecordingStore final : public ByteStore {
 public:
  explicit RecordingStore(StorePtr inner, bool refuse_suffix = false)
      : inner_(std::move(inner)), refuse_suffix_(refuse_suffix) {}
  std::string root() const override { return inner_->root(); }
  std::optional<Parts> read(const std::string& key, const std::vector<ByteRange>& ranges) override {
    {
      std::lock_guard<std::mutex> g(mu);
      reads.push_back(ranges);
    }
    for (const auto& r : ranges) {
      if (refuse_suffix_ && r.offset < 0) throw ValueError("no suffix ranges here");
      if (fail_suffix && r.offset < 0) throw IOError("'" + url_of(key) + "': 503 after the retries (for tests)");
    }
    return inner_->read(key, ranges);
  }
  std::optional<ObjectInfo> stat(const std::string& key) override {
    std::lock_guard<std::mutex> g(mu);
    ++stats;
    return inner_->stat(key);
  }
  std::vector<ObjectInfo> list(const std::string& prefix) override { return inner_->list(prefix); }
  void write(const std::string& key, const void* data, size_t n) override { inner_->write(key, data, n); }
  void remove(const std::string& key) override { inner_->remove(key); }
  StoreCounters counters() const override { return inner_->counters(); }

  std::mutex mu;
  std::vector<std::vector<ByteRange>> reads;
  int stats = 0;
  bool fail_suffix = false;

 private:
  StorePtr inner_;
  bool refuse_suffix_;
};

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 131) ^ (i >> 8));
  return v;
}

struct Fixture {
  std::vector<uint8_t> data;
  std::shared_ptr<RecordingStore> store;
  Fixture(const std::string& name, size_t n, bool refuse_suffix = false) : data(pattern(n)) {
    const auto dir = test::temp_dir(name);
    auto local = make_local_store(dir.string());
    local->write("obj.bin", data.data(), data.size());
    store = std::make_shared<RecordingStore>(local, refuse_suffix);
  }
  std::vector<uint8_t> slice(int64_t at, int64_t len) const { return {data.begin() + at, data.begin() + at + len}; }
};

TEST(ObjectPages, ReadsAnyRangeExactlyAndKeepsItsPages) {
  Fixture f("pages_exact", 10000);
  ObjectPages pages(f.store, "obj.bin", -1, 1024);
  EXPECT_EQ(pages.size(), 10000);
  EXPECT_EQ(f.store->stats, 1);
  EXPECT_EQ(pages.read(100, 50), f.slice(100, 50));
  EXPECT_EQ(pages.read(1000, 100), f.slice(1000, 100));  // pages 0 and 1: page 1 fetched
  ASSERT_EQ(f.store->reads.size(), 2u);
  EXPECT_EQ(f.store->reads[1].size(), 1u);
  EXPECT_EQ(f.store->reads[1][0].offset, 1024);
  EXPECT_EQ(pages.read(0, 2048), f.slice(0, 2048));    // held: no request
  EXPECT_EQ(pages.read(9990, 10), f.slice(9990, 10));  // the last page, a short one
  EXPECT_EQ(pages.read(10000, 0), std::vector<uint8_t>{});
  EXPECT_EQ(pages.read(0, 10000), f.data);  // the pages between, in one read of one range
  ASSERT_EQ(f.store->reads.size(), 4u);
  EXPECT_EQ(f.store->reads[3].size(), 1u);
  EXPECT_EQ(f.store->reads[3][0].offset, 2048);
  EXPECT_EQ(f.store->reads[3][0].length, 9216 - 2048);
  EXPECT_EQ(pages.requests(), 5);  // a stat and four reads
}

TEST(ObjectPages, MissingPagesOfOneReadGoInOneBatch) {
  Fixture f("pages_batch", 8192);
  ObjectPages pages(f.store, "obj.bin", 8192, 1024);
  pages.warm(1024, 1);
  pages.warm(4096, 1);
  f.store->reads.clear();
  EXPECT_EQ(pages.read(0, 8192), f.data);
  ASSERT_EQ(f.store->reads.size(), 1u);  // [0, 1024), [2048, 4096), [5120, 8192): three ranges, one call
  ASSERT_EQ(f.store->reads[0].size(), 3u);
  EXPECT_EQ(f.store->reads[0][1].offset, 2048);
  EXPECT_EQ(f.store->reads[0][1].length, 2048);
  EXPECT_EQ(f.store->stats, 0);  // the size was given
}

TEST(ObjectPages, WarmsScatteredRangesInOneBatch) {
  Fixture f("pages_warm_many", 8192);
  ObjectPages pages(f.store, "obj.bin", 8192, 1024);
  pages.warm({{10, 100}, {7000, -1}, {50, 10}, {9000, 5}});  // (past the end: nothing)
  ASSERT_EQ(f.store->reads.size(), 1u);
  ASSERT_EQ(f.store->reads[0].size(), 2u);  // page 0, pages 6 and 7
  EXPECT_EQ(f.store->reads[0][1].offset, 6144);
  EXPECT_EQ(f.store->reads[0][1].length, 2048);
  EXPECT_EQ(pages.read(7000, 1192), f.slice(7000, 1192));
  EXPECT_EQ(f.store->reads.size(), 1u);
}

TEST(ObjectPages, TailIsOneSuffixReadBesideAStat) {
  Fixture f("pages_tail", 100000);
  ObjectPages pages(f.store, "obj.bin", -1, 4096);
  pages.warm_tail(5000);
  ASSERT_EQ(f.store->reads.size(), 1u);
  EXPECT_EQ(f.store->reads[0][0].offset, -5000);
  EXPECT_EQ(f.store->stats, 1);
  EXPECT_EQ(pages.size(), 100000);
  EXPECT_TRUE(pages.holds(95000, 5000));
  EXPECT_EQ(pages.read(95000, 5000), f.slice(95000, 5000));  // the part page held too
  EXPECT_FALSE(pages.holds(94999, 2));
  EXPECT_EQ(f.store->reads.size(), 1u);
  EXPECT_EQ(pages.read(94000, 2000), f.slice(94000, 2000));  // the part page read whole then
  EXPECT_EQ(f.store->reads.size(), 2u);
  EXPECT_EQ(pages.requests(), 3);
}

TEST(ObjectPages, TailLongerThanTheObjectOrRefusedSuffixes) {
  {
    Fixture f("pages_short", 300);
    ObjectPages pages(f.store, "obj.bin", -1, 1024);
    pages.warm_tail(65536);  // the suffix fails (shorter object): read whole after the stat
    EXPECT_EQ(pages.size(), 300);
    EXPECT_EQ(pages.read(0, 300), f.data);
    EXPECT_EQ(f.store->reads.size(), 2u);
  }
  {
    Fixture f("pages_nosuffix", 5000, true);
    ObjectPages pages(f.store, "obj.bin", -1, 1024);
    pages.warm_tail(100);
    EXPECT_EQ(pages.read(4900, 100), f.slice(4900, 100));
    EXPECT_EQ(f.store->reads.size(), 2u);
  }
}

TEST(ObjectPages, AFailedTailReadIsAnErrorNotReadAgain) {
  Fixture f("pages_tail_fails", 5000);
  f.store->fail_suffix = true;
  ObjectPages pages(f.store, "obj.bin", -1, 1024);
  try {
    pages.warm_tail(100);  // the object is long enough: the failure is the request's
    FAIL();
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("503"), std::string::npos) << e.what();
  }
  EXPECT_EQ(f.store->reads.size(), 1u);
}

TEST(ObjectPages, ErrorsNameTheUrl) {
  Fixture f("pages_errors", 1000);
  ObjectPages pages(f.store, "obj.bin", -1, 1024);
  try {
    pages.read(990, 20);
    FAIL();
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("obj.bin"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("past its end"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pages.read(-1, 2), IOError);
  EXPECT_THROW(pages.read(INT64_MAX - 1, 5), IOError);
  ObjectPages missing(f.store, "nothing.bin");
  try {
    missing.warm_tail(64);
    FAIL();
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing.bin"), std::string::npos) << e.what();
  }
  ObjectPages missing_sized(f.store, "nothing.bin", 100, 1024);  // a size given: the read finds it gone
  EXPECT_THROW(missing_sized.read(0, 10), IOError);
}

TEST(ObjectPages, KeepsAtMostMaxBytes) {
  Fixture f("pages_lru", 16384);
  ObjectPages pages(f.store, "obj.bin", 16384, 1024, 4096);
  EXPECT_EQ(pages.read(0, 16384), f.data);  // more than it keeps: still read right
  EXPECT_FALSE(pages.holds(0, 1));          // the first pages went
  EXPECT_TRUE(pages.holds(12288, 4096));    // the last four stayed
  EXPECT_EQ(pages.read(0, 10), f.slice(0, 10));
  EXPECT_TRUE(pages.holds(0, 10));
  EXPECT_FALSE(pages.holds(12288, 1024));  // the least recently used went for it
}

TEST(ObjectPages, ForgetsThePagesOutsideAPart) {
  Fixture f("pages_forget", 8192);
  ObjectPages pages(f.store, "obj.bin", 8192, 1024);
  pages.warm(0, 8192);
  pages.forget_outside(2000, 1000);  // pages 1 and 2 stay
  EXPECT_TRUE(pages.holds(1024, 2048));
  EXPECT_FALSE(pages.holds(0, 1));
  EXPECT_FALSE(pages.holds(3072, 1));
  EXPECT_EQ(pages.read(0, 8192), f.data);
}

TEST(ObjectSliceStore, ReadsItsSliceAndAnswersHeldPagesWithoutARequest) {
  Fixture f("pages_slice", 10000);
  auto pages = std::make_shared<ObjectPages>(f.store, "obj.bin", 10000, 1024);
  auto slice = make_object_slice_store(pages, 3000, 4000, "mem://x.b2z#/m");
  EXPECT_EQ(slice->root(), "mem://x.b2z#/m");
  EXPECT_EQ(slice->stat("")->size, 4000);
  EXPECT_FALSE(slice->stat("other"));
  auto parts = slice->read("", {{0, 10}, {-100, -1}, {3990, -1}, {4000, 0}});
  ASSERT_TRUE(parts);
  EXPECT_EQ((*parts)[0], f.slice(3000, 10));
  EXPECT_EQ((*parts)[1], f.slice(6900, 100));  // the slice's last 100 bytes, not the object's
  EXPECT_EQ((*parts)[2], f.slice(6990, 10));
  EXPECT_TRUE((*parts)[3].empty());
  ASSERT_EQ(f.store->reads.size(), 1u);  // one call to the object's store, its ranges moved
  EXPECT_EQ(f.store->reads[0][1].offset, 6900);
  pages->warm(3000, 1000);
  const size_t before = f.store->reads.size();
  EXPECT_EQ((*slice->read("", {{100, 800}}))[0], f.slice(3100, 800));  // held: no request
  auto many = slice->read_many({{"", {{0, 5}}}, {"", {{3000, 1000}}}, {"nope", {{0, 1}}}});
  EXPECT_EQ((*many[0])[0], f.slice(3000, 5));
  EXPECT_EQ((*many[1])[0], f.slice(6000, 1000));
  EXPECT_FALSE(many[2]);
  EXPECT_EQ(f.store->reads.size(), before + 1);  // the held one answered, the other sent
  try {
    slice->read("", {{3990, 20}});
    FAIL();
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("mem://x.b2z#/m"), std::string::npos) << e.what();
  }
  EXPECT_THROW(slice->read("", {{-4001, -1}}), IOError);
  EXPECT_THROW(slice->write("", "x", 1), IOError);
  EXPECT_THROW(make_object_slice_store(pages, 9000, 2000, "bad"), IOError);  // outside the object
}

TEST(ObjectPages, ConcurrentReadersSeeTheRightBytes) {
  Fixture f("pages_threads", 200000);
  ObjectPages pages(f.store, "obj.bin", -1, 4096, 32768);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const int64_t at = (i * 7919 + t * 104729) % 190000, len = 1 + (i * 31) % 9000;
        if (pages.read(at, len) != f.slice(at, len)) ++bad;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace b2lazy
