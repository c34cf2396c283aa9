// What one worker thread owns during an evaluation.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "b2lazy/box.hpp"
#include "exec/scratch.hpp"

struct blosc2_context_s;

namespace b2lazy {

class Node;
class EvalState;

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
  EvalState* eval = nullptr;
  // True on the calling thread outside a parallel pass: a node may then spread its own
  // work (e.g. the slabs of a reduction) over the context's workers.
  bool can_fork = false;
  int64_t cache_hits = 0;

  // A panel a node keeps between the output chunks this thread evaluates — a
  // contraction's band of an expensive operand, reused by the band's next tile.
  struct Kept {
    Region region;
    std::unique_ptr<unsigned char[]> data;
    size_t bytes = 0;
  };
  std::unordered_map<const Node*, Kept> kept;

  // Values a node has pulled and still holds, lent to the pulls it makes next: a pull of
  // the same node and region copies them (pull_view returns them) instead of computing
  // them again — a mask selection pulls its values, then the mask computed from them.
  struct Lent {
    const Node* node;
    Region region;
    const void* data;
  };
  std::vector<Lent> lent;

  // Decompression context for one source (its dparams name the source's schunk).
  blosc2_context_s* dctx_for(const void* key, void* schunk, int32_t typesize);
  // Compression context for the output, made from its cparams with one thread.
  blosc2_context_s* cctx_for(const void* key, const void* cparams);

 private:
  std::unordered_map<const void*, blosc2_context_s*> dctx_, cctx_;
};

// Lends `data` (node's values at `region`, dense C order) for the scope's lifetime.
class LendScope {
 public:
  LendScope(ThreadState& ts, const Node* node, const Region& region, const void* data) : ts_(ts) {
    ts_.lent.push_back({node, region, data});
  }
  ~LendScope() { ts_.lent.pop_back(); }
  LendScope(const LendScope&) = delete;

 private:
  ThreadState& ts_;
};

}  // namespace b2lazy
