// What one worker thread owns during an evaluation.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "b2lazy/box.hpp"
#include "runtime/node_cache.hpp"
#include "runtime/scratch.hpp"

struct blosc2_context_s;

namespace b2lazy {

class Node;
class Evaluation;

class ThreadState {
 public:
  ThreadState() = default;
  ThreadState(const ThreadState&) = delete;
  ~ThreadState();

  Scratch scratch;
  // How often this thread decompressed each chunk (by id), per source node; merged into
  // Stats at the end.
  std::unordered_map<const Node*, std::unordered_map<int64_t, int64_t>> decompressed;
  std::unordered_map<const Node*, int64_t> decompressed_bytes;  // uncompressed bytes produced
  Evaluation* eval = nullptr;                                   // the evaluation it runs in (null outside one)
  // True on the calling thread outside a parallel pass: a node may then spread its own
  // work (e.g. the slabs of a reduction) over the context's workers.
  bool can_fork = false;
  int worker = -1;  // its index among the evaluation's workers (-1: the calling thread)
  int64_t cache_hits = 0;

  // Per-node state (kept bands, lent values): owned by the plan's execution.
  NodeCache* nodes = nullptr;

  // Decompression context for one source (its dparams name the source's schunk). `key`:
  // the source's address (or a static's, for contexts of no schunk); `uid`: the source's
  // next_context_uid() (runtime/context_uid.hpp): a context cached for another object
  // once at the same address is made again.
  blosc2_context_s* dctx_for(const void* key, void* schunk, int32_t typesize, uint64_t uid = 0);
  // Compression context for the output, made from its cparams with one thread (key, uid:
  // as dctx_for's).
  blosc2_context_s* cctx_for(const void* key, const void* cparams, uint64_t uid = 0);

 private:
  struct Cached {
    uint64_t uid = 0;
    blosc2_context_s* ctx = nullptr;
  };
  std::unordered_map<const void*, Cached> dctx_, cctx_;
};

// Lends `data` (node's values at `region`, dense C order) for the scope's lifetime.
class LendScope {
 public:
  LendScope(ThreadState& ts, const Node* node, const Region& region, const void* data) : ts_(ts) {
    ts_.nodes->lend(node, region, data);
  }
  ~LendScope() { ts_.nodes->unlend(); }
  LendScope(const LendScope&) = delete;

 private:
  ThreadState& ts_;
};

}  // namespace b2lazy
