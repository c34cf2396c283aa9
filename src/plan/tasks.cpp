#include "plan/tasks.hpp"

#include <algorithm>
#include <set>

#include "b2lazy/checked.hpp"
#include "core/saturating.hpp"
#include "plan/chunking.hpp"
#include "plan/format.hpp"
#include "plan/memory.hpp"
#include "plan/propagate.hpp"
#include "plan/window.hpp"

namespace b2lazy {

int64_t chunks_per_task(const Node& root, const ChunkGrid& grid, int nworkers) {
  if (grid.grid().empty() || !has_row_sharing(root)) return 1;
  const int64_t row = grid.grid().back();
  return row > 1 && grid.nchunks() / row >= nworkers ? row : 1;
}

ChunkGroups::ChunkGroups(const ChunkGrid& grid, const Shape& group) : grid_(grid), outer_(grid.grid(), group) {}

Box ChunkGroups::box(int64_t k) const {
  const Box g = outer_.chunk_box(k);  // in chunks
  Box b = grid_.chunk_box(grid_.chunk_id(g.start));
  for (size_t d = 0; d < b.ndim(); ++d) b.stop[d] = std::min(grid_.shape()[d], g.stop[d] * grid_.chunks()[d]);
  return b;
}

std::vector<int64_t> ChunkGroups::chunks(int64_t k) const {
  std::vector<int64_t> ids;
  const Box g = outer_.chunk_box(k);
  const ChunkGrid inner(g.shape(), Shape(g.ndim(), 1));
  for (int64_t i = 0; i < inner.nchunks(); ++i) {
    Shape c = inner.chunk_coords(i);
    for (size_t d = 0; d < c.size(); ++d) c[d] += g.start[d];
    ids.push_back(grid_.chunk_id(c));
  }
  return ids;
}

namespace {

// Projections are exact up to this many output chunks; beyond, each task is projected
// from its first chunk.
constexpr int64_t kMaxProjectedChunks = 16384;
// A stage's pass is projected from this many of its chunks at most (evenly spread).
constexpr int64_t kMaxSampledStageChunks = 4096;

// What one chunk of a pass costs: memory its fill holds beyond the chunk (Node::fill_bytes
// of the root through the memory model, kept bands included), what it forks to each
// worker (MemoryModel::spread), and bytes decompressed per source.
struct ChunkCost {
  int64_t working = 0, forked = 0, source = 0;
  int64_t kept = 0;  // bytes decompressed from stages kept compressed or spilled
  std::map<std::string, int64_t> per_source;
};

// The stages computed so far, as the passes after them read them.
struct KeptSoFar {
  std::set<const Node*> stop;
  std::map<const Node*, std::pair<bool, int64_t>> read;  // dense?, else a chunk's bytes
};

// The regions the passes ask of each stage, as chunks of the stage's grid.
class AskedChunks {
 public:
  explicit AskedChunks(const std::vector<PlanStage>& stages) {
    for (const PlanStage& s : stages) at_[s.node.get()] = &s;
  }
  void ask(const Node& n, const Region& r) {
    auto it = at_.find(&n);
    if (it == at_.end() || r.size() == 0) return;
    const PlanStage& s = *it->second;
    Box b = r.bounds();
    for (size_t d = 0; d < b.ndim(); ++d) {  // into the stage's own coordinates (its box)
      b.start[d] = std::max<int64_t>(0, b.start[d] - s.box.start[d]);
      b.stop[d] = std::min<int64_t>(s.box.stop[d] - s.box.start[d], b.stop[d] - s.box.start[d]);
      if (b.start[d] >= b.stop[d]) return;
    }
    const ChunkGrid g(s.computed->shape(), s.chunks);
    std::vector<bool>& seen = asked_[&n];
    if (seen.empty()) seen.assign(static_cast<size_t>(g.nchunks()), false);
    for (int64_t id : g.chunks_touching(b)) seen[static_cast<size_t>(id)] = true;
  }
  // Some pass was sampled, not walked chunk by chunk: every chunk counts as asked.
  void ask_all() { all_ = true; }
  // The stages' `needed` chunks.
  void settle(std::vector<PlanStage>& stages) const {
    for (PlanStage& s : stages) {
      s.needed.clear();
      auto it = asked_.find(s.node.get());
      if (all_ || it == asked_.end()) continue;
      bool every = true;
      for (bool b : it->second) every = every && b;
      if (!every) s.needed = it->second;
    }
  }

 private:
  std::map<const Node*, const PlanStage*> at_;
  std::map<const Node*, std::vector<bool>> asked_;
  bool all_ = false;
};

class Costing {
 public:
  Costing(const KeptSoFar& kept, const std::vector<PlanWindow>& windows, size_t max_memory, int nworkers,
          bool single_chunk, AskedChunks* asked = nullptr)
      : kept_(kept),
        max_memory_(max_memory),
        nworkers_(nworkers),
        single_chunk_(single_chunk),
        prop_(
            kept.stop,
            [this, asked](const Edge&, const Node& n, const Region& r, bool first) {
              if (!first) return;
              if (kept_.stop.count(&n)) {  // computed once: read from where it is kept
                if (asked) asked->ask(n, r);
                auto it = kept_.read.find(&n);
                if (it != kept_.read.end() && !it->second.first)
                  cost_.kept = sat_add(cost_.kept, MemoryModel::region_bytes(n, r));
                return;
              }
              if (const int64_t d = decompressed(n, r)) {
                cost_.source = sat_add(cost_.source, d);
                int64_t& s = cost_.per_source[n.source_name()];
                s = sat_add(s, d);
              }
            },
            max_memory / static_cast<size_t>(std::max(1, nworkers))) {
    for (const PlanWindow& w : windows) windows_.emplace(w.node.get(), WindowSim(w.blocks));
  }

  ChunkCost of(const Node& root, const Region& r) {
    cost_ = ChunkCost{};
    prop_.run({nullptr, 0}, root, r);
    // A model per chunk: its memo holds this chunk's regions only.
    MemoryModel m(max_memory_, nworkers_, single_chunk_);
    for (auto& [n, how] : kept_.read) m.set_kept(n, how.first, how.second);
    cost_.working = m.pull_bytes(root, r);
    cost_.forked = m.forked();
    return cost_;
  }

 private:
  // What a pull decompresses: through the source's window, the blocks it does not hold
  // (the pass's pulls replayed in order, as its tasks are handed out).
  int64_t decompressed(const Node& n, const Region& r) {
    auto it = windows_.find(&n);
    if (it == windows_.end()) return n.decompressed_bytes(r);
    ids_.clear();
    n.blocks_touched(r, ids_);
    return sat_mul(it->second.touch(ids_), n.window_block_bytes());
  }
  const KeptSoFar& kept_;
  std::map<const Node*, WindowSim> windows_;
  std::vector<int64_t> ids_;
  size_t max_memory_;
  int nworkers_;
  bool single_chunk_;
  ChunkCost cost_;
  Propagation prop_;
};

// Workers a pass of `nchunks` chunks in `ntasks` tasks runs on: none (the calling thread)
// for one chunk.
int pass_threads(int64_t nchunks, int64_t ntasks, int nworkers) {
  return nchunks <= 1 ? 0 : static_cast<int>(std::min<int64_t>(nworkers, ntasks));
}

}  // namespace

void plan_tasks(Plan& p) {
  p.source_bytes.clear();
  p.kept_read_bytes = 0;
  KeptSoFar kept;
  AskedChunks asked(p.stages);
  // Stages: each computed with the ones before it kept (and read from there), into its
  // dense buffer or a writer (blocks as run_stage makes them).
  for (PlanStage& s : p.stages) {
    const ChunkGrid g(s.computed->shape(), s.chunks);
    const int64_t n = s.computed->size() == 0 ? 0 : g.nchunks();
    const size_t isz = itemsize(s.computed->dtype());
    const bool to_writer = s.where != KeptIn::Dense;
    const int64_t buffers = output_buffer_bytes(
        s.computed->shape(), s.chunks, to_writer ? shrink_chunks(s.chunks, isz, s.node->kept_block_bytes()) : Shape{},
        isz, to_writer);
    Costing costing(kept, p.windows, p.options.max_memory, p.nworkers, n <= 1, &asked);
    int64_t working = 0;
    int64_t forked = 0;
    // Units of its pass: chunks, or groups of them (each pulled whole, held beside its chunks).
    const bool grouped = !s.fill_group.empty() && n;
    const ChunkGroups groups(g, grouped ? s.fill_group : Shape(g.grid().size(), 1));
    const int64_t units = n ? groups.count() : 0;
    const int64_t samples = std::min<int64_t>(units, kMaxSampledStageChunks);
    if (samples < units) asked.ask_all();
    for (int64_t k = 0; k < samples; ++k) {
      const int64_t id = samples == units ? k : static_cast<int64_t>(static_cast<__int128>(k) * units / samples);
      const Box unit = grouped ? groups.box(id) : g.chunk_box(id);
      ChunkCost c = costing.of(*s.computed, Region::from_box(unit));
      if (grouped) c.working = sat_add(c.working, sat_mul(unit.size(), static_cast<int64_t>(isz)));
      working = std::max(working, c.working);
      forked = std::max(forked, c.forked);
      if (s.carried_by) continue;  // a run of every task does not compute it (its reads: none)
      for (auto& [name, b] : c.per_source) {
        int64_t& t = p.source_bytes[name];
        t = sat_add(t, sat_mul(b, units / std::max<int64_t>(1, samples)));
      }
      p.kept_read_bytes = sat_add(p.kept_read_bytes, sat_mul(c.kept, units / std::max<int64_t>(1, samples)));
    }
    const int64_t ntasks = grouped ? units : n ? ceil_div(n, chunks_per_task(*s.computed, g, p.nworkers)) : 0;
    s.memory.per_task = n ? sat_add(working, buffers) : 0;
    s.memory.threads = pass_threads(n, ntasks, p.nworkers);
    s.memory.forked = forked;
    kept.stop.insert(s.node.get());
    kept.read[s.node.get()] = {s.where == KeptIn::Dense, sat_mul(prod(s.chunks), static_cast<int64_t>(isz))};
  }

  // Output tasks.
  p.tasks.clear();
  p.tasks_memory = PassMemory{};
  if (p.nchunks > 0) {
    const ChunkGrid grid = p.grid();
    const int64_t per = chunks_per_task(*p.root, grid, p.nworkers);
    const size_t isz = itemsize(p.root->dtype());
    const int64_t out_held =
        output_buffer_bytes(p.root->shape(), p.chunks, p.blocks, isz, p.target == PlanTarget::Compressed);
    const bool exact = p.nchunks <= kMaxProjectedChunks;
    if (!exact) asked.ask_all();
    Costing costing(kept, p.windows, p.options.max_memory, p.nworkers, p.nchunks <= 1, &asked);
    int64_t most = 0;
    int64_t forked = 0;
    for (int64_t first = 0; first < p.nchunks; first += per) {
      PlanTask t;
      t.first_chunk = first;
      t.last_chunk = std::min(p.nchunks, first + per);
      int64_t working = 0;
      for (int64_t id = first; id < (exact ? t.last_chunk : first + 1); ++id) {
        ChunkCost c = costing.of(*p.root, Region::from_box(grid.chunk_box(id)));
        const int64_t times = exact ? 1 : t.last_chunk - first;
        working = std::max(working, c.working);
        forked = std::max(forked, c.forked);
        t.source_bytes = sat_add(t.source_bytes, sat_mul(c.source, times));
        p.kept_read_bytes = sat_add(p.kept_read_bytes, sat_mul(c.kept, times));
        for (auto& [name, b] : c.per_source) {
          int64_t& s = p.source_bytes[name];
          s = sat_add(s, sat_mul(b, times));
        }
      }
      t.projected_bytes = sat_add(working, out_held);
      most = std::max(most, t.projected_bytes);
      p.tasks.push_back(t);
    }
    p.tasks_memory.per_task = most;
    p.tasks_memory.threads = pass_threads(p.nchunks, static_cast<int64_t>(p.tasks.size()), p.nworkers);
    p.tasks_memory.forked = forked;
  }

  asked.settle(p.stages);

  p.fetch_bytes = fetch_cache_bytes(p);
  // The one projection, from the passes above and the stages' kept copies.
  const MemoryProjection mp = project_plan(p);
  p.kept_bytes = mp.kept;
  p.projected_peak = mp.peak();
  p.memory_model = mp.describe();
}

std::string tasks_pass_line(const Plan& p) {
  if (p.tasks.empty()) return "tasks: none (empty result)";
  const int64_t per = p.tasks[0].last_chunk - p.tasks[0].first_chunk;
  return "tasks: " + std::to_string(p.tasks.size()) + " of " + std::to_string(per) + " output chunk" +
         (per == 1 ? "" : "s") + ", at most " + format_bytes(p.tasks_memory.per_task) + " each; projected peak " +
         p.memory_model;
}

}  // namespace b2lazy
