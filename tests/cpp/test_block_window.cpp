// The window of decompressed blocks (exec/block_window.hpp) and its replay at planning
// time (plan/window.hpp): what is kept, what is made once, and errors.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "exec/block_window.hpp"
#include "plan/window.hpp"

using namespace b2lazy;

namespace {

BlockWindow::Block get(BlockWindow& w, int64_t key, int& made_count) {
  auto b = w.get(key, [&](void* dst) {
    ++made_count;
    std::memset(dst, static_cast<int>(key), 16);
  });
  return b;
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
