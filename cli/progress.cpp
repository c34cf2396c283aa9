#include "progress.hpp"

#include <cstdio>

namespace b2lazy::cli {

void ProgressBar::update(int64_t done, int64_t total) {
  const auto now = std::chrono::steady_clock::now();
  if (done < total && drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  drawn_ = true;
  const double secs = std::chrono::duration<double>(now - t0_).count();
  const double f = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const int width = 30, fill = static_cast<int>(f * width);
  std::string bar(static_cast<size_t>(fill), '#');
  bar += std::string(static_cast<size_t>(width - fill), '-');
  std::fprintf(stderr, "\r%s [%s] %3d%% %lld/%lld chunks %.1f s", label_.c_str(), bar.c_str(),
               static_cast<int>(f * 100), static_cast<long long>(done), static_cast<long long>(total), secs);
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

}  // namespace b2lazy::cli
