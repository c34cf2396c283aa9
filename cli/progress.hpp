// Progress on stderr for long evaluations.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace b2lazy::cli {

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
