// make_plan: the passes, in order. layout (output chunks) -> pulls (what the output
// chunks ask of every node, and what asking again costs) -> reuse (which nodes are
// computed once, and where they are kept within max_memory) -> stages (the computed-once
// nodes in execution order, each planned on its own grid) -> tasks (groups of output
// chunks with their projected memory and source bytes).
#include <algorithm>
#include <optional>
#include <set>
#include <unordered_set>

#include "b2lazy/array.hpp"
#include "b2lazy/checked.hpp"
#include "b2lazy/error.hpp"
#include "b2lazy/plan.hpp"
#include "core/saturating.hpp"
#include "ops/shape/slice_node.hpp"
#include "plan/carry.hpp"
#include "plan/chunking.hpp"
#include "plan/follow_layout.hpp"
#include "plan/format.hpp"
#include "plan/layout.hpp"
#include "plan/memory.hpp"
#include "plan/reuse.hpp"
#include "plan/siblings.hpp"
#include "plan/tasks.hpp"
#include "runtime/stage_results.hpp"

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

// A source copy this small is kept whenever the passes would decompress it twice or more.
constexpr int64_t kSmallKept = int64_t(8) << 20;

// A fill group is a band the re-pack streams through: decompress the storage chunks it
// covers, compress its tiles. Above this it is no faster, only a higher peak (a 128 MiB
// band of (2048, 256) tiles over 256-row strips re-packed as fast as a 64 MiB one).
constexpr size_t kMostFillGroup = size_t(64) << 20;

// A source over the memory left is worth re-packing to disk in tiles shaped for its
// consumers when its own chunks serve them badly: the tasks decompress 4x what it holds,
// or more, and at least twice what they ask of it (partial blocks or chunks). Pulled
// again only because several tasks need it, its own chunks serve as well as a copy.
bool worth_repacking(const PlanStage& s) {
  return s.source && s.pulled_bytes / 4 >= s.once_bytes && s.pulled_bytes / 2 >= s.asked_bytes;
}

// The groups a re-packed source in `chunks` is best filled in (PlanStage::fill_group): a
// row of its chunks (along the last axis), or the chunks inside one of its read units,
// whichever decompresses least per element, when a group, at most half a worker's share
// (the pass runs before the output tasks) and at most kMostFillGroup, decompresses at
// most half what its chunks pulled one by one do (measured on the first group). Empty:
// chunk by chunk.
Shape fill_group(const PlanStage& s, const Shape& chunks, size_t max_memory, int nworkers) {
  if (!s.source || s.where == KeptIn::Dense || s.computed->size() == 0 || chunks.empty()) return {};
  const ChunkGrid g(s.computed->shape(), chunks);
  const size_t nd = chunks.size();
  std::vector<Shape> candidates;
  if (g.grid().back() > 1) {
    Shape row(nd, 1);
    row.back() = g.grid().back();
    candidates.push_back(row);
  }
  if (const Shape unit = read_unit(*s.node); unit.size() == nd) {
    Shape inside(nd, 1);
    for (size_t d = 0; d < nd; ++d)
      if (chunks[d] < unit[d]) inside[d] = std::min(g.grid()[d], ceil_div(unit[d], chunks[d]));
    if (prod(inside) > 1) candidates.push_back(inside);
  }
  auto in_source = [&](Box b) {  // s.computed is s.node sliced to s.box
    for (size_t d = 0; d < b.ndim(); ++d) b.start[d] += s.box.start[d], b.stop[d] += s.box.start[d];
    return Region::from_box(b);
  };
  const int64_t isz = static_cast<int64_t>(itemsize(s.computed->dtype()));
  const int64_t most =
      static_cast<int64_t>(std::min(kMostFillGroup, max_memory / static_cast<size_t>(std::max(1, nworkers)) / 2));
  Shape best;
  double best_cost = 0;
  for (const Shape& group : candidates) {
    const ChunkGroups groups(g, group);
    const Box first = groups.box(0);
    if (sat_mul(first.size(), isz) > most) continue;
    int64_t apart = 0;
    for (int64_t id : groups.chunks(0)) apart = sat_add(apart, s.node->decompressed_bytes(in_source(g.chunk_box(id))));
    const int64_t together = s.node->decompressed_bytes(in_source(first));
    if (together <= 0 || sat_mul(together, 2) > apart) continue;
    const double cost = static_cast<double>(together) / static_cast<double>(first.size());
    if (best.empty() || cost < best_cost) best = group, best_cost = cost;
  }
  return best;
}

// The tiles a source is re-packed in: its consumers' requests, within the chunk target;
// filled in groups when that decompresses each storage chunk once (s.fill_group). When
// no group of the requests' tiles fits (a row of (1024, 256) tiles of row strips: 64 MiB;
// 32-row strips of Zarr's (1024, 1024) chunks, 128 MiB), the tiles are cut along the axes
// where they are longer than a read unit, halving the longest first but never below the
// unit, until one does: (256, 256) tiles in rows, or (32, 1024) ones inside a chunk.
void repack(PlanStage& s, size_t max_memory, int nworkers) {
  const size_t isz = itemsize(s.computed->dtype());
  s.chunks = shrink_chunks(s.request, isz, chunk_target_bytes(*s.computed, max_memory, nworkers));
  s.fill_group = fill_group(s, s.chunks, max_memory, nworkers);
  const Shape unit = read_unit(*s.node);
  if (!s.fill_group.empty() || unit.size() != s.chunks.size()) return;
  Shape cut = s.chunks;
  for (;;) {
    size_t d = cut.size();  // the axis longest in units among those longer than one
    for (size_t k = 0; k < cut.size(); ++k)
      if (unit[k] > 0 && cut[k] > unit[k] && (d == cut.size() || cut[k] / unit[k] > cut[d] / unit[d])) d = k;
    if (d == cut.size()) return;
    cut[d] = std::max(unit[d], cut[d] / 2);
    if (Shape group = fill_group(s, cut, max_memory, nworkers); !group.empty()) {
      s.chunks = std::move(cut), s.fill_group = std::move(group);
      return;
    }
  }
}

// The chunks a computed stage kept compressed or spilled is stored in: the node's own
// for a stage whose pass would read its inputs many times over on balanced tiles
// (Node::kept_chunks), at most a quarter of a worker's share; else balanced tiles.
Shape stored_chunks(const PlanStage& s, size_t max_memory, int nworkers) {
  const Shape& shape = s.computed->shape();
  const size_t isz = itemsize(s.computed->dtype());
  const size_t target = chunk_target_bytes(*s.computed, max_memory, nworkers);
  const size_t most = std::min<size_t>(size_t(16) << 20, max_memory / static_cast<size_t>(nworkers) / 4);
  Shape c = s.node->kept_chunks(shape, target, most);
  return c.empty() ? balanced_chunks(shape, isz, target) : c;
}

class Builder {
 public:
  Builder(Plan& p, const NodeSet* later) : p_(p) {
    ps_.later = later;
    const int64_t mm = static_cast<int64_t>(std::min<size_t>(p.options.max_memory, INT64_MAX));
    dense_left_ = mm;
    compressed_left_ = mm / 2;
    ps_.worker_bytes = p.options.max_memory / static_cast<size_t>(std::max(1, p.nworkers));
    ps_.nworkers = std::max(1, p.nworkers);
    for (const PlanSiblings& g : p.siblings)
      for (size_t i = 1; i < g.members.size(); ++i) ps_.followers.insert(g.members[i].get());
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
    s.asked_bytes = r.asked;
    s.once_bytes = r.once;
    const size_t isz = itemsize(r.node->dtype());
    s.bytes = r.box.size() * static_cast<int64_t>(isz);
    if (read_through_window(r, s)) return;
    // Keeping a source saves decompressing it again, but its copy is filled and touched
    // for the first time (fresh pages: 0.03-0.8 s per 363 MiB measured here, as much as a
    // zstd decompression of it, 0.21 s on one core) and held: worth it when the passes
    // would decompress it three times or more, not for one decompression saved (the
    // covariance of two time-chunked variables kept both, 726 MiB, to read each chunk
    // once instead of twice, and was slower for it). A small copy (under 8 MiB) stays in
    // the caches and costs next to nothing: kept from twice; so is a source slow to
    // decode (Deflate: a second decompression costs 3x a zstd one, more than the copy).
    const int64_t reads = r.node->decode_cost() > 1.5 ? 2 : 3;
    if (r.source && r.pulled / reads < r.once && s.bytes >= kSmallKept) {
      p_.passes.push_back("reuse: " + r.node->describe() + " not kept (the passes would decompress " +
                          format_bytes(r.pulled) + ", once: " + format_bytes(r.once) +
                          "; decompressing it again costs less than filling and holding a copy)");
      return;
    }
    // Where it is kept: dense while the budget lasts (optimistic: the projection of the
    // whole plan then spills or drops the largest kept stage while it is over max_memory,
    // spill_until_it_fits); else compressed in memory within half the budget (counted
    // uncompressed: the codec may gain nothing); else in a temporary file. A source is
    // worth re-packing only when its own chunks serve the tasks badly (they decompress 4x
    // what it holds, or more). (A fixed quarter for dense copies kept b of 128 MiB out of
    // a 256 MiB plan that fits with it: 8x its decompression.)
    if (s.bytes <= dense_left_) {
      s.where = KeptIn::Dense;
      dense_left_ -= s.bytes;
    } else if (s.bytes <= compressed_left_ && (!s.source || s.pulled_bytes / 4 >= s.once_bytes)) {
      s.where = KeptIn::Compressed;
      compressed_left_ -= s.bytes;
    } else if (s.source && !worth_repacking(s)) {
      p_.passes.push_back("reuse: " + r.node->describe() + " not kept (" + format_bytes(s.bytes) +
                          " over the budget left); read from storage by each task");
      return;
    } else {
      s.where = KeptIn::Spilled;
    }
    s.request = clamped(r.request, r.box.shape());
    const size_t target = chunk_target_bytes(*s.computed, p_.options.max_memory, p_.nworkers);
    const Shape& shape = s.computed->shape();
    if (s.where == KeptIn::Dense) {
      // A source in its own storage chunks (each decompressed once), else contiguous rows.
      Shape pc = r.node->preferred_chunks();
      bool fits = s.source && pc.size() == shape.size();
      for (size_t d = 0; fits && d < pc.size(); ++d)
        pc[d] = std::clamp<int64_t>(pc[d], 1, std::max<int64_t>(1, shape[d]));
      fits = fits && prod(pc) <= static_cast<int64_t>(std::max(target, size_t(16) << 20) / isz);
      s.chunks = fits ? pc : contiguous_chunks(shape, isz, target);
      // A computed node in the tiles its consumers ask for when they are sizeable: each
      // one a whole multiplication for a product (x^T x's upper triangle), not a thin
      // strip of rows that packs its operands' panels anew.
      const int64_t req = sat_mul(prod(clamped(r.request, shape)), static_cast<int64_t>(isz));
      if (!s.source && req >= (int64_t(1) << 20) && req <= static_cast<int64_t>(std::max(target, size_t(16) << 20)))
        s.chunks = clamped(r.request, shape);
      if (!s.source && r.node->fills_whole_box()) s.chunks = clamped(shape, shape);
      // A node computed whole (sorted runs), or one whose parts compute more than they hold
      // (sorted lanes), in its own chunks: a chunk cut smaller would compute them again.
      const Shape own = !s.source && r.own_chunks ? r.node->kept_chunks(shape, target, target) : Shape{};
      const bool whole = !own.empty();
      if (whole) s.chunks = clamped(own, shape);
      // A small result of much input (a scan's segment totals: 1 KiB of 128 MiB) in one
      // chunk runs on one thread: a few chunks per worker instead, each a share of it.
      if (!s.source && s.bytes > 0 && !r.node->fills_whole_box() && !whole) {
        const ChunkGrid g(shape, s.chunks);
        int64_t in_bytes = 0;
        const auto ins = r.node->input_regions(Region::from_box(r.box));
        for (size_t i = 0; i < ins.size() && i < r.node->inputs().size(); ++i)
          in_bytes =
              sat_add(in_bytes, sat_mul(ins[i].size(), static_cast<int64_t>(itemsize(r.node->inputs()[i]->dtype()))));
        const int64_t want = 4 * static_cast<int64_t>(p_.nworkers);
        if (p_.nworkers > 1 && g.nchunks() < want && in_bytes / want >= (int64_t(4) << 20) && prod(shape) >= want) {
          // Unless the pieces decompress more of a stored input than the whole does (mean(a,
          // axis=0) in column pieces over row strips reads every block once per piece: a
          // reduction spreads its slabs over the workers itself).
          Shape split = contiguous_chunks(shape, isz, static_cast<size_t>(std::max<int64_t>(isz, s.bytes / want)));
          if (split_reads_alike(*r.node, r.box, split)) s.chunks = std::move(split);
        }
      }
    } else if (s.source) {  // re-packed in tiles shaped like the consumers' requests
      repack(s, p_.options.max_memory, p_.nworkers);
    } else {
      s.chunks = stored_chunks(s, p_.options.max_memory, p_.nworkers);
    }
    // Plan what the stage's own pass reads again, on its grid, when something there is
    // still to find (settled subgraphs cost nothing).
    bool inside = false;
    for (auto& in : r.node->inputs()) inside = needs_planning(*in, ps_) || inside;
    if (inside) {
      ps_.computing.insert(r.node.get());
      plan_stages(s.computed, ChunkGrid(shape, s.chunks));
      ps_.computing.erase(r.node.get());
    }
    ps_.decided.insert(r.node.get());
    p_.passes.push_back("reuse: " + r.node->describe() + " " + shape_str(r.box.shape()) + " " + kept_in_name(s.where) +
                        " (the tasks would " + (s.source ? "decompress " : "compute ") + format_bytes(s.pulled_bytes) +
                        ", once: " + format_bytes(s.once_bytes) + ")");
    p_.stages.push_back(std::move(s));
  }

  // A source whose pulls decompress the same blocks again and again (row bands of column
  // strips), but in order — the blocks a few pulls touch serve the next ones — is read
  // through a window of its last decompressed blocks (within a third of the budget, and
  // at most half of keeping it) instead of kept whole: it is decompressed about once
  // while the plan holds a few of its blocks, not all of it. (A source under 8 MiB is
  // kept: read in place, with no window to look blocks up in.) Only in place of keeping
  // it: a source left in storage (its own chunks serve the tasks about as well as a
  // copy) is read as before — two workers on neighbouring tasks then decompress a shared
  // block each, where through a window one waits for the other (8192² matmul(sum(a3, 1),
  // b) over column strips: 15.5-16.4 s through a window, 14.1-14.7 s without).
  bool read_through_window(const ReusedNode& r, const PlanStage& s) {
    const WindowChoice& w = r.window;
    const int64_t whole = s.bytes;
    const bool kept =
        whole <= dense_left_ || (whole <= compressed_left_ && s.pulled_bytes / 4 >= s.once_bytes) || worth_repacking(s);
    if (!r.source || !kept || w.blocks <= 0 || whole < (int64_t(8) << 20) || w.bytes > whole / 2 ||
        static_cast<size_t>(w.bytes) > p_.options.max_memory / 3 || w.bytes > dense_left_)
      return false;
    dense_left_ -= w.bytes;
    p_.windows.push_back({r.node, w.blocks, w.bytes, r.pulled, w.reads});
    ps_.decided.insert(r.node.get());
    p_.passes.push_back("reuse: " + r.node->describe() + " read through a window of its last " +
                        std::to_string(w.blocks) + " decompressed blocks (" + format_bytes(w.bytes) +
                        "; the tasks would decompress " + format_bytes(r.pulled) + ", through it " +
                        format_bytes(w.reads) + ")");
    return true;
  }

  // Do the pieces of `box` in `chunks` decompress from n's stored inputs about what the
  // whole box does (at most 1/4 more)?
  static bool split_reads_alike(const Node& n, const Box& box, const Shape& chunks) {
    const auto whole = n.input_regions(Region::from_box(box));
    int64_t once = 0;
    for (size_t i = 0; i < whole.size() && i < n.inputs().size(); ++i)
      once = sat_add(once, n.inputs()[i]->decompressed_bytes(whole[i]));
    if (once == 0) return true;
    const ChunkGrid g(box.shape(), chunks);
    int64_t pieces = 0;
    for (int64_t id = 0; id < g.nchunks(); ++id) {
      Box b = g.chunk_box(id);
      for (size_t d = 0; d < b.ndim(); ++d) b.start[d] += box.start[d], b.stop[d] += box.start[d];
      const auto ins = n.input_regions(Region::from_box(b));
      for (size_t i = 0; i < ins.size() && i < n.inputs().size(); ++i)
        pieces = sat_add(pieces, n.inputs()[i]->decompressed_bytes(ins[i]));
    }
    return pieces <= once + once / 4;
  }

  // `c` with each extent within 1..shape's.
  static Shape clamped(Shape c, const Shape& shape) {
    for (size_t d = 0; d < c.size() && d < shape.size(); ++d)
      c[d] = std::clamp<int64_t>(c[d], 1, std::max<int64_t>(1, shape[d]));
    return c;
  }

  Plan& p_;
  PlanningState ps_;
  int64_t dense_left_, compressed_left_;
};

}  // namespace

namespace {

// Bytes a plan decompresses, from storage and from its compressed or spilled copies (its
// estimate): what other layouts are compared by.
int64_t read_cost(const Plan& p) {
  int64_t c = p.kept_read_bytes;
  for (auto& [name, b] : p.source_bytes) c = sat_add(c, b);
  return c;
}

// What tile shapes of a product are compared by: its reads, and the copies it compresses
// and writes once (squares re-pack both operands where bands re-pack one).
int64_t tile_cost(const Plan& p) {
  int64_t c = read_cost(p);
  for (const PlanStage& s : p.stages)
    if (s.where != KeptIn::Dense) c = sat_add(c, s.bytes);
  return c;
}

// Bytes of the stored sources under `root`, each once.
int64_t sources_bytes(const Node& root) {
  int64_t total = 0;
  any_node(root, [&](const Node& n) {
    if (n.decompresses()) total = sat_add(total, sat_mul(n.size(), static_cast<int64_t>(itemsize(n.dtype()))));
    return false;
  });
  return total;
}

// Stage `i` of `p` no longer kept in memory: spilled to a temporary file (a source worth
// it re-packed there, else not kept, read from storage by each task). The tasks pass is run again.
void spill_stage(Plan& p, size_t i, bool project = true) {
  PlanStage& s = p.stages[i];
  const std::string what = s.node->describe() + " " + shape_str(s.box.shape());
  if (worth_repacking(s)) {  // read again from a re-packed copy on disk, not from memory
    p.passes.push_back("memory: " + what + " re-packed and " + kept_in_name(KeptIn::Spilled) +
                       " instead (the plan "
                       "is over max_memory with it " +
                       kept_in_name(s.where) + ")");
    s.where = KeptIn::Spilled;
    repack(s, p.options.max_memory, p.nworkers);
  } else if (s.source) {
    p.passes.push_back("memory: " + what +
                       " not kept after all (the plan is over max_memory with it); read from "
                       "storage by each task");
    p.stages.erase(p.stages.begin() + static_cast<std::ptrdiff_t>(i));
  } else {
    p.passes.push_back("memory: " + what + " " + kept_in_name(KeptIn::Spilled) +
                       " instead (the plan is over "
                       "max_memory with it " +
                       kept_in_name(s.where) + ")");
    s.where = KeptIn::Spilled;
    s.chunks = stored_chunks(s, p.options.max_memory, p.nworkers);  // (dense chunks may be the whole box)
  }
  if (project) plan_tasks(p);
}

// max_memory is a limit: while the projection is over it, a stage kept in memory is
// spilled to a temporary file instead, trading bytes written and read again for memory:
// of the stages whose spilling alone makes the plan fit, the one whose plan then reads
// least (x^T x's triangle, read once, rather than x, read by every tile); else the largest.
void spill_until_it_fits(Plan& p) {
  if (static_cast<size_t>(p.projected_peak) <= p.options.max_memory) return;
  {
    // A plan still over max_memory with every stage spilled ends so below, after a search
    // that tries each stage at each step (a plan over the budget by its nodes' own holdings,
    // which build_plan makes again for less: 21 projections per layout tried): spill all at
    // once. (Spilled stages add read buffers to the tasks, so in principle some but not all
    // spilled could fit where all do not: such a plan is not searched for.)
    Plan all = p;
    bool any = false;
    for (size_t i = all.stages.size(); i-- > 0;)
      if (kept_in_memory(all.stages[i]) > 0) spill_stage(all, i, false), any = true;
    if (!any) return;
    plan_tasks(all);
    if (static_cast<size_t>(all.projected_peak) > p.options.max_memory) {
      p = std::move(all);
      return;
    }
  }
  while (static_cast<size_t>(p.projected_peak) > p.options.max_memory) {
    std::optional<Plan> best;
    for (size_t i = 0; i < p.stages.size(); ++i) {
      if (kept_in_memory(p.stages[i]) <= 0) continue;
      Plan q = p;
      spill_stage(q, i);
      if (static_cast<size_t>(q.projected_peak) <= p.options.max_memory && (!best || read_cost(q) < read_cost(*best)))
        best = std::move(q);
    }
    if (best) {
      p = std::move(*best);
      return;
    }
    size_t largest = p.stages.size();
    for (size_t i = 0; i < p.stages.size(); ++i)
      if (kept_in_memory(p.stages[i]) > 0 &&
          (largest == p.stages.size() || p.stages[i].bytes > p.stages[largest].bytes))
        largest = i;
    if (largest == p.stages.size()) return;
    spill_stage(p, largest);
  }
}

// Siblings fold in lockstep when they are asked alike: all computed once as stages (in
// one stage's pass), or all pulled by the tasks. A stage folding a sibling the tasks pull
// (or the reverse) would fold it for regions nobody asks.
void keep_siblings_alike(Plan& p) {
  std::unordered_set<const Node*> staged;
  for (const PlanStage& s : p.stages) staged.insert(s.node.get());
  std::vector<PlanSiblings> kept;
  for (PlanSiblings& g : p.siblings) {
    const bool first = staged.count(g.members[0].get()) > 0;
    std::erase_if(g.members, [&](const NodePtr& m) { return (staged.count(m.get()) > 0) != first; });
    if (g.members.size() >= 2) kept.push_back(std::move(g));
  }
  p.siblings = std::move(kept);
}

// The passes after the layout, for output chunks `chunks` (and blocks `blocks`).
Plan plan_on(const NodePtr& root, const ComputeOptions& opts, PlanTarget target, int nworkers, Shape chunks,
             Shape blocks, const std::string& note, const NodeSet* later) {
  Plan p;
  p.root = root;
  p.stage_results = std::make_shared<StageResults>();
  p.target = target;
  p.options = opts;
  p.options.progress = nullptr;  // the plan is data; progress and cancel come with each execution
  p.options.cancel = nullptr;
  p.nworkers = std::max(1, nworkers);
  p.chunks = std::move(chunks);
  p.blocks = std::move(blocks);
  const ChunkGrid grid(root->shape(), p.chunks);
  p.nchunks = root->size() == 0 ? 0 : grid.nchunks();
  p.block_major = target == PlanTarget::Compressed && root->block_major(p.chunks, p.blocks);
  p.passes.push_back("layout: " + std::to_string(p.nchunks) + " output chunks of " + shape_str(p.chunks) +
                     (p.blocks.empty() ? "" : ", blocks " + shape_str(p.blocks)) +
                     (p.block_major ? ", filled in Blosc2's block order" : "") + note);
  // pulls, reuse, stages
  if (p.nchunks > 0 && !p.block_major) p.siblings = find_siblings(root);
  Builder b(p, later);
  if (p.nchunks > 0 && !p.block_major) b.plan_stages(root, grid);
  keep_siblings_alike(p);
  for (const PlanSiblings& g : p.siblings)
    p.passes.push_back("siblings: " + std::to_string(g.members.size()) + " reductions (" + g.members[0]->kind() +
                       ", ...) folded in lockstep over " + std::to_string(g.shared.size()) +
                       " shared source(s), each slab decompressed once");
  p.plan_visits = b.visits();
  plan_carries(p);
  // tasks, with projected memory and source bytes; the projected peak
  plan_tasks(p);
  spill_until_it_fits(p);
  p.passes.push_back(tasks_pass_line(p));
  return p;
}

// Bytes of stored sources the plan holds decompressed: kept by the stages or in windows
// of decompressed blocks.
int64_t kept_sources(const Plan& p) {
  int64_t k = 0;
  for (const PlanStage& s : p.stages)
    if (s.source) k = sat_add(k, kept_in_memory(s));
  for (const PlanWindow& w : p.windows) k = sat_add(k, w.bytes);
  return k;
}

// A layout the planner chose by shape alone (no chunks asked for, no product's tiles,
// no stored operand of the output's shape, no node's preferred chunks) that keeps a
// stored source in memory or reads it more than once: an output split along an axis the
// source's chunks cover whole (a reduction's lon, a coarsening's lat) has each output
// chunk pull all of it. Layouts split along one axis, aligned to the source chunks, or
// one output chunk when small, are planned too; the one keeping least of the sources, then
// reading least, wins if it keeps less and reads no more (within 1/8), or keeps no more
// and reads clearly less, and fits max_memory.
Plan follow_sources(const NodePtr& root, const ComputeOptions& opts, PlanTarget target, int nworkers, Plan p,
                    const NodeSet* later) {
  const int64_t kept = kept_sources(p);
  const int64_t once = sources_bytes(*root);
  if (kept <= 0 && read_cost(p) <= once + once / 8) return p;
  const size_t isz = itemsize(root->dtype());
  const int64_t target_items =
      std::max<int64_t>(1, static_cast<int64_t>(chunk_target_bytes(*root, opts.max_memory, nworkers) / isz));
  const int64_t whole_items = static_cast<int64_t>((size_t(8) << 20) / isz);
  const int64_t reads = read_cost(p);
  std::optional<Plan> best;
  for (const Shape& cand : follow_source_layouts(root, target_items, whole_items)) {
    if (cand == p.chunks) continue;
    Shape blocks = target == PlanTarget::Compressed ? fitted_blocks(cand, isz) : Shape{};
    Plan q = plan_on(root, opts, target, nworkers, cand, blocks, " (split along the sources' chunked axes)", later);
    if (static_cast<size_t>(q.projected_peak) > opts.max_memory) continue;
    const int64_t k = kept_sources(q), r = read_cost(q);
    const bool keeps_less = k < kept && r <= reads + reads / 8, reads_less = k <= kept && r < reads - reads / 8;
    if (!keeps_less && !reads_less) continue;
    if (!best || k < kept_sources(*best) || (k == kept_sources(*best) && r < read_cost(*best))) best = std::move(q);
  }
  return best ? std::move(*best) : std::move(p);
}

}  // namespace

namespace {
Plan plan_for_budget(const NodePtr& root, const ComputeOptions& given, PlanTarget target, int nworkers,
                     const NodeSet* later) {
  // Chunks asked for with rechunk are the output's, as if given to compute().
  ComputeOptions opts = given;
  if (opts.chunks.empty() && opts.shards.empty())
    if (Shape asked = requested_chunks_of(root); !asked.empty()) {
      opts.chunks = std::move(asked);
      for (size_t d = 0; d < opts.chunks.size(); ++d)
        opts.chunks[d] = std::clamp<int64_t>(opts.chunks[d], 1, std::max<int64_t>(1, root->shape()[d]));
    }
  auto [chunks, blocks] = output_layout(root, opts, target, nworkers);
  Plan p = plan_on(root, opts, target, nworkers, chunks, blocks, "", later);
  const bool by_shape =
      opts.chunks.empty() && opts.shards.empty() && opts.blocks.empty() && preferred_chunks_of(root).empty() &&
      (target == PlanTarget::Dense || (product_chunks_of(root).empty() && !aligned_storage_source(root)));
  if (by_shape && p.nchunks > 0 && !p.block_major) {
    p = follow_sources(root, opts, target, nworkers, std::move(p), later);
    chunks = p.chunks;
    blocks = p.blocks;
  }
  // max_memory is a limit: unless the caller chose the chunks, halve the output chunks'
  // leading axes (storage chunks whose blocks keep C order are then read by blocks) until
  // the plan fits, down to 64 KiB; a plan that still does not fit is refused before it
  // executes (check_plan_budget).
  const bool chosen = target == PlanTarget::Compressed && !(opts.chunks.empty() && opts.blocks.empty());
  const size_t isz = itemsize(root->dtype());
  // A product's bands across the whole of one operand pay off when that operand is kept;
  // a plan over budget starts again from square tiles (8 MiB), which read panels of both.
  const Shape preferred = chunks;
  const bool product = root->ndim() >= 2 && has_row_sharing(*root);
  const Shape squares = product ? balanced_chunks(root->shape(), isz, size_t(8) << 20) : Shape{};
  if (!chosen && p.nchunks > 0 && static_cast<size_t>(p.projected_peak) > opts.max_memory && root->ndim() == 2 &&
      product) {
    if (squares != chunks) {
      chunks = squares;
      blocks = target == PlanTarget::Compressed ? fitted_blocks(chunks, isz) : Shape{};
      p = plan_on(root, opts, target, nworkers, chunks, blocks, "", later);
    }
  }
  const Shape first = chunks;
  // A product's tiles shrink as squares (the longer of the last two axes halved): a tile
  // reads panels of both operands along its sides, so thin bands read the other operand
  // once per band (4096² under 32 MiB: (8, 1024) bands read 66 GB, (256, 256) tiles 4 GB).
  while (!chosen && p.nchunks > 0 && static_cast<size_t>(p.projected_peak) > opts.max_memory) {
    const int64_t bytes = sat_mul(prod(chunks), static_cast<int64_t>(isz));
    if (bytes <= 64 * 1024) break;
    Shape smaller = chunks;
    if (product) {
      const size_t r = chunks.size() - 2, c = chunks.size() - 1;
      size_t d = chunks[c] > chunks[r] ? c : r;
      if (chunks[d] <= 1) d = d == r ? c : r;
      smaller[d] = std::max<int64_t>(1, chunks[d] / 2);
    } else {
      smaller = shrink_chunks(chunks, isz, static_cast<size_t>(bytes / 2));
    }
    if (smaller == chunks) break;
    Shape smaller_blocks = target == PlanTarget::Compressed ? fitted_blocks(smaller, isz) : Shape{};
    Plan q = plan_on(root, opts, target, nworkers, smaller, smaller_blocks,
                     " (shrunk from " + shape_str(first) + " to fit max_memory)", later);
    // Smaller output chunks that project no less: what is over the budget is not the
    // output tasks (a stage's pass, the kept copies); halving on would only plan again,
    // each time through every stage (svd_compressed's U: 990 task projections, 25 s).
    const bool no_better = q.projected_peak >= p.projected_peak;
    chunks = std::move(smaller);
    blocks = std::move(smaller_blocks);
    p = std::move(q);
    if (no_better) break;
  }
  // A product's tiles shrunk to fit read the other operand once per tile row or column:
  // tiles of another shape within the same budget may read far less (1024-wide tiles over
  // row strips of `b` decompress whole rows, 4x the tile). So may a product's bands that
  // fit but read a re-packed operand again for each band (8192² under 256 MiB: 16 GiB in
  // 256-row bands, 4 GiB in 2048² squares); then the search starts from square tiles.
  // Tiles of other widths and heights: the plan that fits and reads and re-packs least is kept.
  const bool rereads = product && chunks == preferred && sat_mul(4, sources_bytes(*root)) < read_cost(p);
  if (!chosen && (chunks != preferred || rereads) && product) {
    const size_t r = chunks.size() - 2, c = chunks.size() - 1;
    const Shape& shape = root->shape();
    const Shape base = chunks != preferred ? chunks : squares;
    int64_t best = tile_cost(p);
    bool fits = static_cast<size_t>(p.projected_peak) <= opts.max_memory;
    // Widths 1x to 4x, heights from 4x to a quarter. (Narrower widths are not tried: the
    // estimate now counts K-panels that cut a row-strip `a`'s blocks (Node::pull_pieces),
    // but narrower tiles were not measured against it.)
    for (int64_t wide : {1, 2, 4}) {
      const int64_t width = std::min(shape[c], base[c] * wide);
      for (int64_t tall : {4, 2, 1, -2, -4}) {
        Shape cand = base;
        cand[c] = width;
        cand[r] = std::clamp<int64_t>(tall > 0 ? base[r] * tall : base[r] / -tall, 1, std::max<int64_t>(1, shape[r]));
        if (cand == chunks) continue;
        Shape cb = target == PlanTarget::Compressed ? fitted_blocks(cand, isz) : Shape{};
        Plan q = plan_on(root, opts, target, nworkers, cand, cb,
                         " (tiles reshaped from " + shape_str(first) + " to read least within max_memory)", later);
        if (static_cast<size_t>(q.projected_peak) > opts.max_memory) continue;
        const int64_t cost = tile_cost(q);
        if (!fits || cost < best - best / 8) {  // a clear gain, not noise in the estimate
          fits = true;
          best = cost;
          p = std::move(q);
          chunks = std::move(cand);
        }
      }
      if (width >= shape[c]) break;
    }
  }
  return p;
}
}  // namespace

Plan build_plan(const NodePtr& root, const ComputeOptions& given, PlanTarget target, int nworkers,
                const NodeSet* later) {
  Plan p = plan_for_budget(root, given, target, nworkers, later);
  if (p.nchunks == 0 || static_cast<size_t>(p.projected_peak) <= given.max_memory) return p;
  // The nodes size what they hold (a product's kept band, TSQR's panels) from the budget,
  // each on its own: together they may project over it where the same graph told a
  // fraction of the budget fits it. Plan again for a half, a quarter and an eighth; the
  // first plan within the caller's budget runs with its nodes told that fraction.
  for (int shift = 1; shift <= 3; ++shift) {
    ComputeOptions o = given;
    o.max_memory = given.max_memory >> shift;
    if (o.max_memory < (size_t(8) << 20)) break;
    Plan q;
    try {
      q = plan_for_budget(root, o, target, nworkers, later);
    } catch (const ValueError&) {
      break;  // a node refuses so small a budget (a whole matrix to factor): so would less
    }
    if (q.nchunks == 0 || static_cast<size_t>(q.projected_peak) > given.max_memory) continue;
    q.passes.push_back("budget: the nodes told max_memory " + format_bytes(static_cast<double>(o.max_memory)) +
                       " (the plan made for all of it projected " +
                       format_bytes(static_cast<double>(p.projected_peak)) + ")");
    q.options.max_memory = given.max_memory;
    q.nodes_memory = o.max_memory;
    return q;
  }
  return p;
}

}  // namespace b2lazy
