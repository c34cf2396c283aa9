// The window of decompressed blocks (runtime/block_window.hpp) and its replay at planning
// time (plan/window.hpp): what is kept, what is made once, and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "plan/window.hpp"
#include "runtime/block_window.hpp"

using namespace b2lazy;

namespace {

BlockWindow::Block get(BlockWindow& w, int64_t key, int& made_count) {
  auto b = w.get(key, [&](void* dst) {
    ++made_count;
    std::memset(dst, static_cast<int>(key), 16);
  });
  return b;
}

// A 1-D source in blocks of 8 elements: a pull touches the blocks its range covers.
class BlockedSource : public Node {
 public:
  explicit BlockedSource(int64_t n) : Node(DType::F64, Shape{n}) {}
  std::string kind() const override { return "blocked"; }
  void fill(const Region&, void*, ThreadState&) const override {}
  int64_t window_block_bytes() const override { return 64; }
  void blocks_touched(const Region& r, std::vector<int64_t>& ids) const override {
    for (int64_t b = r.start[0] / 8; b <= (r.start[0] + r.count[0] - 1) / 8; ++b) ids.push_back(b);
  }
};

// choose_window as first written: every read given its time, sorted, replayed through
// WindowSim (what the streamed replay must reproduce).
WindowChoice reference_window(const Node& source, const std::vector<Region>& regions, const std::vector<int64_t>& units,
                              int nworkers) {
  std::vector<size_t> order(regions.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return units[a] < units[b]; });
  std::vector<std::vector<int64_t>> chunks;
  size_t total = 0, widest = 0;
  std::vector<int64_t> distinct;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || units[order[k]] != units[order[k - 1]]) chunks.emplace_back();
    std::vector<int64_t> ids;
    source.blocks_touched(regions[order[k]], ids);
    total += ids.size(), widest = std::max(widest, ids.size());
    distinct.insert(distinct.end(), ids.begin(), ids.end());
    chunks.back().insert(chunks.back().end(), ids.begin(), ids.end());
  }
  std::sort(distinct.begin(), distinct.end());
  const int64_t once = std::unique(distinct.begin(), distinct.end()) - distinct.begin();
  const double step = static_cast<double>(total) / static_cast<double>(chunks.size()) / nworkers;
  std::vector<std::pair<double, int64_t>> events;
  for (size_t c = 0; c < chunks.size(); ++c)
    for (size_t k = 0; k < chunks[c].size(); ++k)
      events.push_back({static_cast<double>(c) * step + static_cast<double>(k), chunks[c][k]});
  std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int64_t> replay;
  for (const auto& e : events) replay.push_back(e.second);
  for (int64_t times : {1, 2, 4}) {
    const int64_t cap = static_cast<int64_t>(widest) * times;
    if (cap >= once) break;
    WindowSim sim(cap);
    const int64_t misses = sim.touch(replay);
    if (misses <= once + once / 4) {
      const int64_t blocks = cap + (nworkers - 1) * static_cast<int64_t>(widest);
      return {blocks, (blocks + nworkers) * 64, misses * 64};
    }
  }
  return {};
}

}  // namespace

TEST(BlockWindow, KeepsTheLastBlocksUpToItsCapacity) {
  BlockWindow w(2, 16);
  int made = 0;
  EXPECT_EQ(get(w, 1, made)[0], 1);
  get(w, 2, made);
  get(w, 1, made);  // hit: 1 is now the most recent
  get(w, 3, made);  // evicts 2
  EXPECT_EQ(made, 3);
  get(w, 1, made);
  EXPECT_EQ(made, 3);
  get(w, 2, made);  // made again
  EXPECT_EQ(made, 4);
  EXPECT_EQ(w.hits(), 2);
  EXPECT_EQ(w.misses(), 4);
}

TEST(BlockWindow, AnEvictedBlockStaysValidForItsReader) {
  BlockWindow w(1, 16);
  int made = 0;
  auto held = get(w, 7, made);
  get(w, 8, made);  // evicts 7 from the window, not from its reader
  EXPECT_EQ(held[15], 7);
}

TEST(BlockWindow, ConcurrentReadersOfOneBlockMakeItOnce) {
  BlockWindow w(64, 1 << 12);
  std::atomic<int> made{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int64_t key = 0; key < 32; ++key) {
        auto b = w.get(key, [&](void* dst) {
          ++made;
          std::this_thread::yield();
          std::memset(dst, static_cast<int>(key), 1 << 12);
        });
        EXPECT_EQ(b[100], static_cast<char>(key));
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(made.load(), 32);
  EXPECT_EQ(w.misses(), 32);
}

TEST(BlockWindow, AFailedReadIsReportedAndTriedAgain) {
  BlockWindow w(4, 16);
  EXPECT_THROW(w.get(5, [](void*) { throw std::runtime_error("bad block"); }), std::runtime_error);
  int count = 0;
  EXPECT_EQ(get(w, 5, count)[0], 5);  // not left as a broken slot
  EXPECT_EQ(count, 1);
}

TEST(WindowSim, ReplaysAnLruWindow) {
  WindowSim sim(2);
  EXPECT_EQ(sim.touch({1, 2}), 2);
  EXPECT_EQ(sim.touch({1, 2}), 0);
  EXPECT_EQ(sim.touch({3}), 1);     // evicts 1
  EXPECT_EQ(sim.touch({2, 1}), 1);  // 2 kept, 1 again
}

// The streamed replay (no sorted copy of the reads) decides as the sorted one did, on
// random pulls: bands read again by the next chunks, chunks of uneven pulls, empty ones.
TEST(ChooseWindow, StreamedReplayMatchesTheSortedOne) {
  std::mt19937_64 rng(7);
  const BlockedSource src(8 * 400);
  int chosen = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<Region> regions;
    std::vector<int64_t> units;
    const int64_t nchunks = 1 + static_cast<int64_t>(rng() % 40);
    const int64_t width = 1 + static_cast<int64_t>(rng() % 200);
    for (int64_t c = 0; c < nchunks; ++c) {
      const int64_t pulls = static_cast<int64_t>(rng() % 4);  // 0: a chunk that reads nothing here
      for (int64_t k = 0; k < pulls; ++k) {
        const int64_t start =
            std::min<int64_t>(8 * 400 - 1, (c * width / 2 + static_cast<int64_t>(rng() % 64)) % (8 * 400));
        const int64_t count = std::min<int64_t>(8 * 400 - start, 1 + static_cast<int64_t>(rng() % (width * 2)));
        regions.push_back(Region::from_box(Box{{start}, {start + count}}));
        units.push_back(static_cast<int64_t>(rng() % 3) == 0 ? nchunks - 1 - c : c);  // some asked out of order
      }
    }
    if (regions.empty()) continue;
    for (int nw : {1, 2, 3}) {
      const WindowChoice want = reference_window(src, regions, units, nw);
      const WindowChoice got = choose_window(src, regions, units, nw);
      ASSERT_EQ(got.blocks, want.blocks) << "trial " << trial << " workers " << nw;
      ASSERT_EQ(got.bytes, want.bytes);
      ASSERT_EQ(got.reads, want.reads);
      chosen += got.blocks > 0;
    }
  }
  EXPECT_GT(chosen, 50);  // the trials exercise windows, not only "none"
}
