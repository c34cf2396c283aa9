// What a node may ask of the evaluation it runs in (ThreadState::eval; null outside
// one): its workers and budget, a way to spread its own work over them, cancellation,
// and the per-node state the executor set up before the pass — a stage computed before
// it, carries passed between output chunks, windows of decompressed blocks, sibling
// reductions, the cache of fetched store reads. The executor implements it
// (exec/eval_state.hpp); nodes never see how.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "b2lazy/box.hpp"
#include "b2lazy/node.hpp"

namespace b2lazy {

class ThreadState;
class CarryBoard;
class BlockWindow;
class SiblingGroup;
class FetchCache;

// A stage computed before this pass: the part of its node that was computed, held by a
// source node of exactly that box.
struct Materialized {
  Box box;
  NodePtr source;  // holds exactly `box` (shape box.shape())
};

class Evaluation {
 public:
  virtual ~Evaluation() = default;
  virtual int workers() const = 0;
  virtual size_t max_memory() const = 0;
  // Throws Cancelled once the caller's cancel flag or the process-wide interrupt flag is
  // set: asked before every output chunk, parallel task and pull.
  virtual void check_cancel() const = 0;
  // Has a task of the running pass failed (tasks waiting for another's carry stop)?
  virtual bool failing() const = 0;
  // Runs fn(task, worker, worker's state) for every task in [0, ntasks) on the workers;
  // rethrows the error of the lowest-numbered task that failed (deterministic).
  virtual void parallel_for(int64_t ntasks, const std::function<void(int64_t, int, ThreadState&)>& fn) = 0;
  // Per node, set up before the first pass; null when the node has none.
  virtual const Materialized* stage(const Node* n) const = 0;
  virtual CarryBoard* carry(const Node* n) const = 0;
  virtual BlockWindow* window(const Node* n) const = 0;
  virtual SiblingGroup* siblings(const Node* n) const = 0;
  // The cache of store reads fetched ahead (Plan::fetch_bytes), or null.
  virtual FetchCache* fetch() const = 0;
  // State of node `n` shared by every thread of this evaluation and dropped with it (even
  // when it fails): made by `make` on the first request (later ones get the same object;
  // a `make` that throws leaves none, so the next request makes it again). A node computed
  // once as a whole, apart from the planner's stages (a factorisation spilled in tiles:
  // ops/linalg/tiled_cholesky.hpp), keeps it here.
  virtual std::shared_ptr<void> shared_state(const Node* n, const std::function<std::shared_ptr<void>()>& make) = 0;
};

}  // namespace b2lazy
