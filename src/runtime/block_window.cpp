#include "runtime/block_window.hpp"

namespace b2lazy {

std::shared_ptr<char[]> BlockWindow::buffer() {
  char* raw = nullptr;
  {
    std::lock_guard<std::mutex> g(buffers_->mu);
    if (!buffers_->free.empty()) {
      raw = buffers_->free.back();
      buffers_->free.pop_back();
    }
  }
  if (!raw) raw = new char[block_bytes_];
  return std::shared_ptr<char[]>(raw, [pool = buffers_](char* b) {
    std::lock_guard<std::mutex> g(pool->mu);
    pool->free.push_back(b);
  });
}

BlockWindow::Block BlockWindow::get(int64_t key, const std::function<void(void*)>& make) {
  std::promise<Block> promise;
  uint64_t me = 0;
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (auto it = slots_.find(key); it != slots_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.age);
      ++hits_;
      std::shared_future<Block> f = it->second.block;
      lock.unlock();
      return f.get();  // waits while another reader makes it; rethrows its error
    }
    ++misses_;
    me = ++gets_;
    lru_.push_front(key);
    slots_.emplace(key, Slot{promise.get_future().share(), lru_.begin(), me});
    while (static_cast<int64_t>(lru_.size()) > capacity_ && lru_.size() > 1) {
      slots_.erase(lru_.back());  // readers of it hold their own reference
      lru_.pop_back();
    }
  }
  try {
    std::shared_ptr<char[]> buf = buffer();
    make(buf.get());
    Block b = std::move(buf);
    promise.set_value(b);
    return b;
  } catch (...) {
    // Waiting readers get the error; the slot goes (unless evicted and made again since),
    // so a later read tries again.
    promise.set_exception(std::current_exception());
    std::lock_guard<std::mutex> g(mu_);
    if (auto it = slots_.find(key); it != slots_.end() && it->second.made_by == me) {
      lru_.erase(it->second.age);
      slots_.erase(it);
    }
    throw;
  }
}

}  // namespace b2lazy
