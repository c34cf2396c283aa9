// Evaluation context (owns the thread pool) and compute options.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "b2lazy/box.hpp"

namespace b2lazy {

class ThreadPool;

// A context owns the worker threads. No global state: two contexts never share threads.
class Context {
 public:
  explicit Context(int nthreads = 0);  // 0 = all cores
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  int nthreads() const;
  ThreadPool& pool();

 private:
  std::unique_ptr<ThreadPool> pool_;
};

// Compression of output chunks (Blosc2 names).
struct CParams {
  std::string codec = "zstd";  // blosclz, lz4, lz4hc, zlib, zstd
  int clevel = 1;
  std::string filter = "shuffle";  // nofilter, shuffle, bitshuffle
};

struct ComputeOptions {
  std::string urlpath;  // empty: in memory; "x.b2nd": contiguous file; otherwise a directory
  std::optional<bool> contiguous;  // default: true unless urlpath names a directory
  Shape chunks, blocks;            // empty: chosen by the planner
  CParams cparams;
  size_t max_memory = size_t(1) << 30;  // budget for chunks, caches and panels
  // Called after each finished output chunk with (done, total).
  std::function<void(int64_t, int64_t)> progress;
  // Checked before each output chunk: once true, compute() stops (each worker after its
  // current chunk), removes the partial output and throws Cancelled.
  const std::atomic<bool>* cancel = nullptr;
};

}  // namespace b2lazy
