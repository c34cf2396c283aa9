#include "plan/memory.hpp"

#include <algorithm>
#include <cstdio>

#include "b2lazy/error.hpp"
#include "core/saturating.hpp"
#include "plan/chunking.hpp"
#include "plan/reuse.hpp"

namespace b2lazy {

namespace {
constexpr int64_t kMiB = int64_t(1) << 20;
constexpr int kSampledChunks = 16;  // chunks whose fill is projected (evenly spread, the last included)

std::string mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(kMiB));
  return buf;
}

// Blocks whole along every axis after the first one split: the chunk's C order is its
// block-major order, so the writer compresses a C-order chunk as it is.
bool c_order_blocks(const Shape& chunk, const Shape& blocks) {
  if (blocks.size() != chunk.size()) return false;
  size_t p = 0;
  while (p < blocks.size() && blocks[p] == 1) ++p;
  for (size_t d = p + 1; d < blocks.size(); ++d)
    if (blocks[d] != chunk[d]) return false;
  return true;
}
}  // namespace

// The default for nodes that pull each input region into a buffer of their own, all held
// at once: the buffers, plus the most any one pull holds below it.
int64_t Node::fill_bytes(const Region& region, const MemoryModel& m) const {
  if (region.size() == 0) return 0;
  const auto regions = input_regions(region);
  int64_t held = 0, deepest = 0;
  for (size_t i = 0; i < regions.size() && i < inputs().size(); ++i) {
    held = sat_add(held, MemoryModel::region_bytes(*inputs()[i], regions[i]));
    deepest = std::max(deepest, m.pull_bytes(*inputs()[i], regions[i]));
  }
  return sat_add(held, deepest);
}

int64_t MemoryModel::region_bytes(const Node& n, const Region& r) {
  return sat_mul(r.size(), static_cast<int64_t>(itemsize(n.dtype())));
}

int64_t MemoryModel::pull_bytes(const Node& n, const Region& r) const {
  if (r.size() == 0) return 0;
  if (auto c = cached_.find(&n); c != cached_.end())  // a dense copy is copied from; a spill decompresses a chunk
    return c->second ? 0 : std::min<int64_t>(4 * kMiB, n.size() * static_cast<int64_t>(itemsize(n.dtype())));
  auto& seen = memo_[&n];
  for (auto& [region, bytes] : seen)
    if (region == r) return bytes;
  const int64_t b = n.fill_bytes(r, *this);
  memo_[&n].push_back({r, b});
  return b;
}

std::string MemoryProjection::describe() const {
  std::string s = mib(peak()) + " (" + std::to_string(nworkers) + " worker" + (nworkers == 1 ? "" : "s") +
                  " x (output chunk and writer " + mib(output_buffers) + " + fill " + mib(fill) + ")";
  if (computed_once) s += " + computed once " + mib(computed_once);
  if (materialize_main + materialize_workers)
    s += "; computing those: " + mib(materialize_main) + " on the calling thread, " + mib(materialize_workers) +
         " on the workers";
  return s + ")";
}

MemoryProjection project_memory(const NodePtr& root, const ChunkGrid& grid, bool to_writer, const Shape& blocks,
                                size_t max_memory, int nthreads) {
  MemoryProjection p;
  const int64_t nchunks = root->size() == 0 ? 0 : grid.nchunks();
  if (nchunks == 0) return p;
  nthreads = std::max(1, nthreads);
  p.nworkers = nchunks <= 1 ? 1 : static_cast<int>(std::min<int64_t>(nthreads, nchunks));
  MemoryModel m(max_memory, nthreads, nchunks <= 1);

  // The nodes computed once (the planner's own decision), and what computing them holds:
  // their kept copy, plus a pass over a chunk of it on every worker.
  PlanningState ps;
  const std::vector<ReusedNode> reused = find_reused(root, grid, ps);
  for (auto it = reused.rbegin(); it != reused.rend(); ++it) {  // inputs first, as materialised
    const NodePtr& n = it->node;
    const int64_t isz = static_cast<int64_t>(itemsize(n->dtype()));
    const int64_t bytes = sat_mul(it->box.size(), isz);
    const bool dense = static_cast<size_t>(bytes) <= max_memory / 4;
    const size_t target = chunk_target_bytes(*n, max_memory, nthreads);
    Shape chunks = dense ? contiguous_chunks(it->box.shape(), static_cast<size_t>(isz), target)
                         : balanced_chunks(it->box.shape(), static_cast<size_t>(isz), target);
    Region first = Region::from_box(it->box);
    for (size_t d = 0; d < chunks.size(); ++d) first.count[d] = std::min(first.count[d], chunks[d]);
    const bool single = prod(chunks) >= it->box.size();
    MemoryModel mm(max_memory, nthreads, single);
    for (auto& r : reused)
      if (r.node != n) mm.set_cached(r.node.get(), true);
    const int64_t chunk_bytes = sat_mul(first.size(), isz);
    const int workers = single ? 1 : nthreads;
    const int64_t pass = sat_mul(workers, sat_add(mm.pull_bytes(*n, first), dense ? 0 : sat_mul(3, chunk_bytes)));
    // (a spill is lz4-compressed: about half of float data's bytes)
    const int64_t kept = dense ? bytes : bytes / 2;
    int64_t& held = single ? p.materialize_main : p.materialize_workers;
    held = std::max(held, pass);
    p.computed_once = sat_add(p.computed_once, kept);
    m.set_cached(n.get(), dense);
  }

  // Per worker in the main pass: the output chunk (a writer adds its block-major copy
  // unless the blocks keep C order, and the compressed chunk), and the fill.
  const int64_t osz = static_cast<int64_t>(itemsize(root->dtype()));
  const int64_t chunk_bytes = sat_mul(prod(grid.chunks()), osz);
  if (to_writer) {
    p.output_buffers = sat_add(sat_mul(2, chunk_bytes), c_order_blocks(grid.chunks(), blocks) ? 0 : chunk_bytes);
  } else {
    p.output_buffers = contiguous_chunks(root->shape(), static_cast<size_t>(osz), static_cast<size_t>(chunk_bytes)) ==
                               grid.chunks()
                           ? 0
                           : chunk_bytes;  // a chunk that is not a range of the result is gathered
  }
  const int64_t step = std::max<int64_t>(1, nchunks / kSampledChunks);
  for (int64_t id = 0; id < nchunks; id += step)
    p.fill = std::max(p.fill, m.pull_bytes(*root, Region::from_box(grid.chunk_box(id))));
  p.fill = std::max(p.fill, m.pull_bytes(*root, Region::from_box(grid.chunk_box(nchunks - 1))));
  return p;
}

Shape fitted_blocks(const Shape& chunks, size_t itemsize) {
  return contiguous_chunks(chunks, itemsize, size_t(256) << 10);
}

Shape fit_chunks(const NodePtr& root, Shape chunks, bool to_writer, const Shape& blocks, size_t max_memory,
                 int nthreads) {
  const size_t isz = itemsize(root->dtype());
  Shape c = chunks;
  while (true) {
    const Shape b = c == chunks ? blocks : fitted_blocks(c, isz);
    const MemoryProjection p = project_memory(root, ChunkGrid(root->shape(), c), to_writer, b, max_memory, nthreads);
    if (static_cast<size_t>(p.peak()) <= max_memory) return c;
    const int64_t bytes = sat_mul(prod(c), static_cast<int64_t>(isz));
    if (bytes <= 64 * 1024) return c;  // nothing smaller is worth trying: the caller refuses
    Shape smaller = shrink_chunks(c, isz, static_cast<size_t>(bytes / 2));
    if (smaller == c) return c;
    c = smaller;
  }
}

void check_budget(const MemoryProjection& p, const NodePtr& root, const ChunkGrid& grid, bool to_writer,
                  const Shape& blocks, size_t max_memory, int nthreads) {
  if (static_cast<size_t>(p.peak()) <= max_memory) return;
  // Slabs and panels follow the budget: project again at the projected peak until it fits.
  size_t need = static_cast<size_t>(p.peak());
  for (int i = 0; i < 8; ++i) {
    const MemoryProjection q = project_memory(root, grid, to_writer, blocks, need, nthreads);
    if (static_cast<size_t>(q.peak()) <= need) break;
    need = static_cast<size_t>(q.peak());
  }
  const int64_t need_mib = static_cast<int64_t>(ceil_div(static_cast<int64_t>(need), kMiB));
  throw ValueError("max_memory of " + mib(static_cast<int64_t>(max_memory)) +
                   " is too small for this evaluation: its projected peak is " + p.describe() +
                   " with output chunks " + shape_str(grid.chunks()) + "; the smallest budget that works is " +
                   std::to_string(need_mib) + " MiB (or use fewer threads, or smaller storage chunks)");
}

void check_plan_budget(const Plan& plan) {
  if (plan.nchunks == 0 || static_cast<size_t>(plan.memory_peak) <= plan.options.max_memory) return;
  const ChunkGrid grid = plan.grid();
  const bool to_writer = plan.target == PlanTarget::Compressed;
  const MemoryProjection p =
      project_memory(plan.root, grid, to_writer, plan.blocks, plan.options.max_memory, plan.nworkers);
  check_budget(p, plan.root, grid, to_writer, plan.blocks, plan.options.max_memory, plan.nworkers);
}

}  // namespace b2lazy
