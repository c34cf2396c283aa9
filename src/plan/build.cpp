// make_plan: the passes, in order. layout (output chunks) -> pulls (what the output
// chunks ask of every node, and what asking again costs) -> reuse (which nodes are
// computed once, and where they are kept within max_memory) -> stages (the computed-once
// nodes in execution order, each planned on its own grid) -> tasks (groups of output
// chunks with their projected memory and source bytes).
#include <algorithm>
#include <set>

#include "b2lazy/array.hpp"
#include "b2lazy/checked.hpp"
#include "b2lazy/plan.hpp"
#include "core/saturating.hpp"
#include "ops/shape/slice_node.hpp"
#include "plan/chunking.hpp"
#include "plan/format.hpp"
#include "plan/layout.hpp"
#include "plan/memory.hpp"
#include "plan/reuse.hpp"
#include "plan/tasks.hpp"

namespace b2lazy {

const char* kept_in_name(KeptIn k) {
  switch (k) {
    case KeptIn::Dense: return "kept in memory, dense";
    case KeptIn::Compressed: return "kept in memory, compressed";
    case KeptIn::Spilled: return "spilled to a temporary b2nd file";
  }
  return "?";
}

namespace {

NodePtr slice_to(const NodePtr& node, const Box& box) {
  if (box == Box::whole(node->shape())) return node;
  std::vector<SliceNode::Axis> axes;
  std::vector<int> out_to_in;
  for (size_t d = 0; d < box.ndim(); ++d) {
    axes.push_back({false, box.start[d], 1, box.stop[d] - box.start[d]});
    out_to_in.push_back(static_cast<int>(d));
  }
  return std::make_shared<SliceNode>(node, axes, out_to_in, box.shape());
}

class Builder {
 public:
  Builder(Plan& p) : p_(p) {
    const int64_t mm = static_cast<int64_t>(std::min<size_t>(p.options.max_memory, INT64_MAX));
    dense_left_ = mm / 4;
    compressed_left_ = mm / 2;
  }

  // The reuse and stages passes for `root` evaluated on `grid`: its computed-once nodes,
  // inputs first, each planned on its own grid before it.
  void plan_stages(const NodePtr& root, const ChunkGrid& grid) {
    const std::vector<ReusedNode> reused = find_reused(root, grid, ps_);
    for (auto it = reused.rbegin(); it != reused.rend(); ++it)
      if (!ps_.decided.count(it->node.get())) add_stage(*it);
  }

  int64_t visits() const { return ps_.visits; }

 private:
  void add_stage(const ReusedNode& r) {
    PlanStage s;
    s.node = r.node;
    s.box = r.box;
    s.computed = slice_to(r.node, r.box);
    s.source = r.source;
    s.pulled_bytes = r.pulled;
    s.once_bytes = r.once;
    const size_t isz = itemsize(r.node->dtype());
    s.bytes = r.box.size() * static_cast<int64_t>(isz);
    // Where it is kept: dense while the dense share (a quarter of the budget) lasts; else
    // compressed in memory while half the budget lasts (counted uncompressed: the codec
    // may gain nothing); else in a temporary file. A source is worth re-packing only when
    // its own chunks serve the tasks badly (they decompress 4x what it holds, or more).
    if (s.bytes <= dense_left_) {
      s.where = KeptIn::Dense;
      dense_left_ -= s.bytes;
    } else if (s.bytes <= compressed_left_ && (!s.source || s.pulled_bytes / 4 >= s.once_bytes)) {
      s.where = KeptIn::Compressed;
      compressed_left_ -= s.bytes;
    } else if (s.source) {
      p_.passes.push_back("reuse: " + r.node->describe() + " not kept (" + format_bytes(s.bytes) +
                          " over the budget left); read from storage by each task");
      return;
    } else {
      s.where = KeptIn::Spilled;
    }
    const size_t target = chunk_target_bytes(*s.computed, p_.options.max_memory, p_.nworkers);
    const Shape& shape = s.computed->shape();
    if (s.where == KeptIn::Dense) {
      // A source in its own storage chunks (each decompressed once), else contiguous rows.
      Shape pc = r.node->preferred_chunks();
      bool fits = s.source && pc.size() == shape.size();
      for (size_t d = 0; fits && d < pc.size(); ++d) pc[d] = std::clamp<int64_t>(pc[d], 1, std::max<int64_t>(1, shape[d]));
      fits = fits && prod(pc) <= static_cast<int64_t>(std::max(target, size_t(16) << 20) / isz);
      s.chunks = fits ? pc : contiguous_chunks(shape, isz, target);
    } else if (s.source) {  // tiles shaped like the consumers' requests
      Shape req = r.request;
      for (size_t d = 0; d < req.size(); ++d) req[d] = std::clamp<int64_t>(req[d], 1, std::max<int64_t>(1, shape[d]));
      s.chunks = shrink_chunks(req, isz, target);
    } else {
      s.chunks = balanced_chunks(shape, isz, target);
    }
    // Plan what the stage's own pass reads again, on its grid, when something there is
    // still to find (settled subgraphs cost nothing).
    bool inside = false;
    for (auto& in : r.node->inputs()) inside = needs_planning(*in, ps_) || inside;
    if (inside) plan_stages(s.computed, ChunkGrid(shape, s.chunks));
    ps_.decided.insert(r.node.get());
    p_.passes.push_back("reuse: " + r.node->describe() + " " + shape_str(r.box.shape()) + " " + kept_in_name(s.where) +
                        " (the tasks would " + (s.source ? "decompress " : "compute ") + format_bytes(s.pulled_bytes) +
                        ", once: " + format_bytes(s.once_bytes) + ")");
    p_.stages.push_back(std::move(s));
  }

  Plan& p_;
  PlanningState ps_;
  int64_t dense_left_, compressed_left_;
};

}  // namespace

Plan build_plan(const NodePtr& root, const ComputeOptions& opts, PlanTarget target, int nworkers) {
  Plan p;
  p.root = root;
  p.target = target;
  p.options = opts;
  p.options.progress = nullptr;  // the plan is data; progress and cancel come with each execution
  p.options.cancel = nullptr;
  p.nworkers = std::max(1, nworkers);
  // layout
  std::tie(p.chunks, p.blocks) = output_layout(root, opts, target, p.nworkers);
  const ChunkGrid grid(root->shape(), p.chunks);
  p.nchunks = root->size() == 0 ? 0 : grid.nchunks();
  p.block_major = target == PlanTarget::Compressed && root->block_major(p.chunks, p.blocks);
  p.passes.push_back("layout: " + std::to_string(p.nchunks) + " output chunks of " + shape_str(p.chunks) +
                     (p.blocks.empty() ? "" : ", blocks " + shape_str(p.blocks)) +
                     (p.block_major ? ", filled in Blosc2's block order" : ""));
  // the memory model's projection of this layout, checked before the plan executes
  if (p.nchunks > 0) {
    const MemoryProjection mp = project_memory(root, grid, target == PlanTarget::Compressed, p.blocks,
                                               p.options.max_memory, p.nworkers);
    p.memory_peak = mp.peak();
    p.memory_model = mp.describe();
  }
  // pulls, reuse, stages
  Builder b(p);
  if (p.nchunks > 0 && !p.block_major) b.plan_stages(root, grid);
  p.plan_visits = b.visits();
  // tasks, with projected memory and source bytes
  plan_tasks(p);
  return p;
}

}  // namespace b2lazy
