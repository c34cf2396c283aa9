// Handing a plan out to other processes (issue #14): the pieces a distributed executor
// (python/b2lazy/distributed.py, on dask.distributed) moves between a client and its
// workers. Every process builds the same plan from the same expression and options
// (compared by plan_fingerprint); the client computes nothing itself:
//   1. one worker computes the stages and exports them (export_stages); the others
//      import those bytes (import_stages) instead of computing them again;
//   2. workers run ranges of output tasks (execute_part): into the output's staging
//      directory when its format takes parallel writers (Zarr: one file per chunk), else
//      returning each chunk compressed exactly as the output stores it (b2nd);
//   3. one OutputCommitter creates the output under a temporary name, takes those
//      chunks without recompressing them (b2nd frames are not safe for concurrent
//      writers: every chunk update rewrites the frame's index), and moves it into place
//      when complete. Until then nothing is at the target path.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "b2lazy/array.hpp"
#include "b2lazy/plan.hpp"
#include "b2lazy/stats.hpp"

namespace b2lazy {

class Sink;

// What decides the tasks and stages a plan hands out: its output layout, its stages
// (shape, chunks, where kept) and its tasks. Equal strings: the same work.
std::string plan_fingerprint(const Plan& plan);

// The plan's stages, computed now unless an earlier execution kept them, as bytes that
// import_stages() reads into another process's copy of the plan. Empty stages: a few bytes.
std::vector<uint8_t> export_stages(const Plan& plan, const EvalOptions& opts = {}, Context* ctx = nullptr);
// Makes `plan`'s stages the exported ones: its executions read them (Stats::stages_reused)
// instead of computing them. ValueError when the bytes do not match the plan's stages.
void import_stages(Plan& plan, const void* data, size_t nbytes);
// The same through a file (large stages: every worker reads it, none holds a copy of the
// whole): written under a temporary name and renamed, read in place (mmap).
void export_stages_file(const Plan& plan, const std::string& path, const EvalOptions& opts = {}, Context* ctx = nullptr);
void import_stages_file(Plan& plan, const std::string& path);

// One output chunk, compressed as the output stores it (a Blosc2 chunk for b2nd).
struct CompressedChunk {
  int64_t id = 0;
  std::vector<uint8_t> bytes;
};
struct PartResult {
  std::vector<CompressedChunk> chunks;  // empty when written into a staging directory
  Stats stats;
};

// Runs output tasks [first_task, last_task) of a compressed-target plan (after its
// stages): into `staging` (an OutputCommitter's staging(), for formats that take
// parallel writers), or, with `staging` empty, returning the chunks compressed.
// Idempotent: running a range again writes or returns the same chunks.
PartResult execute_part(const Plan& plan, int64_t first_task, int64_t last_task, const std::string& staging = {},
                        const EvalOptions& opts = {}, Context* ctx = nullptr);

// The one writer of a distributed compute()'s output.
class OutputCommitter {
 public:
  explicit OutputCommitter(const Plan& plan);  // creates the output under a temporary name
  ~OutputCommitter();                          // removes it unless finish() succeeded
  OutputCommitter(const OutputCommitter&) = delete;
  OutputCommitter& operator=(const OutputCommitter&) = delete;
  // Where workers write their chunks themselves (Zarr), or empty: send them to add().
  const std::string& staging() const { return staging_; }
  // Chunk `id` as execute_part() returned it; checked to be a chunk of this output.
  void add(int64_t id, const void* data, size_t nbytes);
  // Moves the complete output into place and returns it, with `stats` (the workers',
  // merged) and the plan. ValueError if a chunk was never added (b2nd).
  Array finish(Stats stats);

 private:
  std::shared_ptr<const Plan> plan_;
  std::unique_ptr<Sink> sink_;
  std::string staging_;
  std::vector<bool> added_;
};

// Adds `b`'s counters to `a` (sums; the most decompressions of one chunk: the larger;
// seconds: the larger, the workers ran side by side).
void merge_stats(Stats& a, const Stats& b);

}  // namespace b2lazy
