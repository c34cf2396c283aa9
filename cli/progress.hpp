// Progress on stderr and Ctrl-C for long evaluations.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace b2lazy::cli {

// While alive, SIGINT (Ctrl-C) sets flag() instead of killing the process; the engine
// checks it before each output chunk and stops (no output file is left).
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  const std::atomic<bool>* flag() const;
};

// A one-line bar redrawn on stderr at most 10 times a second.
class ProgressBar {
 public:
  explicit ProgressBar(std::string label) : label_(std::move(label)), t0_(std::chrono::steady_clock::now()) {}
  void update(int64_t done, int64_t total);
  void finish();  // ends the line

 private:
  std::string label_;
  std::chrono::steady_clock::time_point t0_, last_{};
  bool drawn_ = false;
};

}  // namespace b2lazy::cli
