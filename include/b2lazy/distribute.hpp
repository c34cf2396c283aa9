// Handing a plan out to other processes (issue #14): the pieces a distributed executor
// (python/b2lazy/distributed.py, on dask.distributed) moves between a client and its
// workers. Every process builds the same plan from the same expression and options
// (compared by plan_fingerprint); the client computes nothing itself:
//   1. each stage, in order, is cut into pieces computed by different workers (ranges of
//      its chunks; for a stage of few chunks that folds its input — a reduction — ranges
//      of that input, folded into partial states; else, for a small dense stage, parts of
//      its chunks), merged (in a tree) and finished
//      by one worker into the form every worker imports (import_stage);
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

// --- Stages in pieces. A piece, a merge of pieces and a finished stage are bytes (or a
// file of them: large ones every worker reads in place, none holding a copy of the whole).

// How stage `stage` is cut for `processes` worker processes.
struct StageSplit {
  int64_t pieces = 1;
  bool folds = false;  // pieces are parts of the input folded apart (merge them in a tree)
  int64_t cells = 1;   // a small dense stage's chunks cut in this many cells, one per piece
};
StageSplit split_stage(const Plan& plan, size_t stage, int processes);

struct StagePiece {
  std::vector<uint8_t> bytes;  // empty when written to the path given
  Stats stats;
};
// Piece `piece` of split_stage(plan, stage, processes); the stages before it must be in
// the plan (import_stage). Written to `path` (temporary name, then renamed) unless empty.
StagePiece compute_stage_piece(const Plan& plan, size_t stage, int64_t piece, int processes,
                               const std::string& path = {}, const EvalOptions& opts = {}, Context* ctx = nullptr);

// A view of a piece's bytes: in memory, or a file mapped in place.
struct PieceBytes {
  const void* data = nullptr;
  size_t size = 0;
  std::string path;  // read from this file when set
};
// Pieces of one stage merged into one (partial states folded together, chunks gathered).
std::vector<uint8_t> merge_stage_pieces(const Plan& plan, size_t stage, const std::vector<PieceBytes>& parts);
// The stage from pieces covering all of it, kept as the plan says, in the form
// import_stage reads: returned, or written to `path` (a stage spilled to a file: that b2nd
// file itself). ValueError naming what is missing when the pieces do not cover it.
StagePiece finish_stage(const Plan& plan, size_t stage, const std::vector<PieceBytes>& parts,
                        const std::string& path = {}, Context* ctx = nullptr);
// Makes a finished stage the plan's: executions read it (Stats::stages_reused) instead of
// computing it. ValueError when it is not this plan's stage.
void import_stage(Plan& plan, size_t stage, const PieceBytes& finished);

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
