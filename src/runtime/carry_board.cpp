#include "runtime/carry_board.hpp"

#include <chrono>

#include "b2lazy/error.hpp"
#include "runtime/evaluation.hpp"

namespace b2lazy {

void CarryBoard::put(const Shape& key, std::vector<uint8_t> carry) {
  if (!linked(key)) return;
  {
    std::lock_guard<std::mutex> g(mu_);
    carries_[key] = std::move(carry);
  }
  cv_.notify_all();
}

std::optional<std::vector<uint8_t>> CarryBoard::take(const Shape& key, const Evaluation& ev) {
  auto link = links_->producer.find(key);
  if (link == links_->producer.end()) return std::nullopt;
  const int64_t producer = link->second;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    auto it = carries_.find(key);
    if (it != carries_.end()) {
      std::vector<uint8_t> c = std::move(it->second);
      carries_.erase(it);  // taken once (the plan checked it has one taker)
      return c;
    }
    if (done_.count(producer)) return std::nullopt;
    // Polled: a failing or cancelled run never puts it.
    if (ev.failing()) throw Cancelled("evaluation stopped: another task failed");
    lock.unlock();
    ev.check_cancel();
    lock.lock();
    cv_.wait_for(lock, std::chrono::milliseconds(20), [&] { return carries_.count(key) || done_.count(producer); });
  }
}

void CarryBoard::chunk_done(int64_t id) {
  {
    std::lock_guard<std::mutex> g(mu_);
    done_.insert(id);
  }
  cv_.notify_all();
}

}  // namespace b2lazy
