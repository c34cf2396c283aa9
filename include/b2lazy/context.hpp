// Evaluation context (owns the thread pool) and compute options.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "b2lazy/box.hpp"
#include "b2lazy/byte_store.hpp"

namespace b2lazy {

class ThreadPool;

// The most worker threads a context may have (the command's --threads, Python's nthreads).
inline constexpr int kMaxThreads = 1024;

// A context owns the worker threads. No global state: two contexts never share threads.
class Context {
 public:
  // nthreads: 0 = all cores, else 1..kMaxThreads (ValueError otherwise). Throws Error,
  // naming the count and the reason, when the threads cannot be created.
  explicit Context(int nthreads = 0);
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
  // Zarr targets: "blosc" (the codec above, clevel and filter inside Blosc) or "zstd"
  // (Zarr's zstd codec at clevel).
  std::string compressor = "blosc";
};

// What every evaluation takes (compute(), to_buffer()).
struct EvalOptions {
  size_t max_memory = size_t(1) << 30;  // budget for chunks, caches and panels
  // Called after each finished output chunk with (done, total).
  std::function<void(int64_t, int64_t)> progress;
  // Checked, like the process-wide interrupt flag (b2lazy/interrupt.hpp), before each
  // output chunk, each task of a node's own parallel work and each pull: once true, the
  // evaluation stops (each worker within its current unit of work), removes the partial
  // output and throws Cancelled.
  const std::atomic<bool>* cancel = nullptr;
};

struct ComputeOptions : EvalOptions {
  // empty: in memory; else a path or URL naming the format (b2lazy/driver.hpp): for b2nd
  // "x.b2nd" is a contiguous file, a path ending with '/' a sparse directory; "x.zarr" or
  // "zarr:PATH" a Zarr v3 array.
  std::string urlpath;
  std::optional<bool> contiguous;  // default: true unless urlpath names a directory
  Shape chunks, blocks;            // empty: chosen by the planner
  // Zarr targets: shards, each holding whole `chunks` (sharding_indexed); empty: none.
  Shape shards;
  CParams cparams;
  // How to reach a remote urlpath ("s3://bucket/x.zarr"): b2lazy/byte_store.hpp.
  StoreOptions storage;
};

}  // namespace b2lazy
