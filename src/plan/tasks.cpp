#include "plan/tasks.hpp"

#include <algorithm>
#include <set>

#include "b2lazy/checked.hpp"
#include "core/saturating.hpp"
#include "plan/chunking.hpp"
#include "plan/format.hpp"
#include "plan/memory.hpp"
#include "plan/propagate.hpp"

namespace b2lazy {

int64_t chunks_per_task(const Node& root, const ChunkGrid& grid, int nworkers) {
  if (grid.grid().empty() || !has_row_sharing(root)) return 1;
  const int64_t row = grid.grid().back();
  return row > 1 && grid.nchunks() / row >= nworkers ? row : 1;
}

namespace {

// Projections are exact up to this many output chunks; beyond, each task is projected
// from its first chunk.
constexpr int64_t kMaxProjectedChunks = 16384;

// What one chunk of a pass costs: memory its fill holds beyond the chunk (Node::fill_bytes
// of the root through the memory model, kept bands included), and bytes decompressed per
// source.
struct ChunkCost {
  int64_t working = 0, source = 0;
  std::map<std::string, int64_t> per_source;
};

class Costing {
 public:
  // `kept`: the stages computed before this pass, each read from where it is kept (a
  // dense copy in place, else by chunks).
  Costing(const std::map<const Node*, bool>& kept, const std::set<const Node*>& stop, size_t max_memory,
          int nworkers, bool single_chunk)
      : kept_(kept), max_memory_(max_memory), nworkers_(nworkers), single_chunk_(single_chunk),
        prop_(stop, [this, &stop](const Edge&, const Node& n, const Region& r, bool first) {
          if (!first || stop.count(&n)) return;  // computed once: read from where it is kept
          if (const int64_t d = n.decompressed_bytes(r)) {
            cost_.source = sat_add(cost_.source, d);
            int64_t& s = cost_.per_source[n.source_name()];
            s = sat_add(s, d);
          }
        }) {}

  ChunkCost of(const Node& root, const Region& r) {
    cost_ = ChunkCost{};
    prop_.run({nullptr, 0}, root, r);
    // A model per chunk: its memo holds this chunk's regions only.
    MemoryModel m(max_memory_, nworkers_, single_chunk_);
    for (auto& [n, dense] : kept_) m.set_cached(n, dense);
    cost_.working = m.pull_bytes(root, r);
    return cost_;
  }

 private:
  const std::map<const Node*, bool>& kept_;
  size_t max_memory_;
  int nworkers_;
  bool single_chunk_;
  ChunkCost cost_;
  Propagation prop_;
};

}  // namespace

void plan_tasks(Plan& p) {
  std::set<const Node*> stop;
  std::map<const Node*, bool> kept_in;  // stages so far: kept dense?
  // Stages: each computed with the ones before it kept (and read from there).
  int64_t kept = 0, peak = 0;
  for (PlanStage& s : p.stages) {
    const ChunkGrid g(s.computed->shape(), s.chunks);
    const int64_t n = s.computed->size() == 0 ? 0 : g.nchunks();
    const int64_t chunk_bytes = sat_mul(prod(s.chunks), static_cast<int64_t>(itemsize(s.computed->dtype())));
    Costing costing(kept_in, stop, p.options.max_memory, p.nworkers, n <= 1);
    int64_t working = 0;
    const int64_t samples = std::min<int64_t>(n, 4096);
    for (int64_t k = 0; k < samples; ++k) {
      const int64_t id = samples == n ? k : static_cast<int64_t>(static_cast<__int128>(k) * n / samples);
      ChunkCost c = costing.of(*s.computed, Region::from_box(g.chunk_box(id)));
      working = std::max(working, c.working);
      for (auto& [name, b] : c.per_source) {
        int64_t& t = p.source_bytes[name];
        t = sat_add(t, sat_mul(b, n / std::max<int64_t>(1, samples)));
      }
    }
    const int64_t own = s.where == KeptIn::Spilled ? 0 : s.bytes;  // (compressed: counted uncompressed)
    s.projected_bytes = sat_add(sat_add(kept, own), sat_mul(p.nworkers, sat_add(working, sat_mul(2, chunk_bytes))));
    peak = std::max(peak, s.projected_bytes);
    kept = sat_add(kept, own);
    stop.insert(s.node.get());
    kept_in[s.node.get()] = s.where == KeptIn::Dense;
  }
  p.kept_bytes = kept;

  // Output tasks.
  p.tasks.clear();
  if (p.nchunks == 0) {
    p.projected_peak = peak;
    p.passes.push_back("tasks: none (empty result)");
    return;
  }
  const ChunkGrid grid = p.grid();
  const int64_t per = chunks_per_task(*p.root, grid, p.nworkers);
  const int64_t out_bytes = sat_mul(prod(p.chunks), static_cast<int64_t>(itemsize(p.root->dtype())));
  // A compressed target also holds the compressed chunk (at most about its size).
  const int64_t out_held = p.target == PlanTarget::Compressed ? sat_mul(2, out_bytes) : out_bytes;
  const bool exact = p.nchunks <= kMaxProjectedChunks;
  Costing costing(kept_in, stop, p.options.max_memory, p.nworkers, p.nchunks <= 1);
  int64_t most = 0;
  for (int64_t first = 0; first < p.nchunks; first += per) {
    PlanTask t;
    t.first_chunk = first;
    t.last_chunk = std::min(p.nchunks, first + per);
    int64_t working = 0;
    for (int64_t id = first; id < (exact ? t.last_chunk : first + 1); ++id) {
      ChunkCost c = costing.of(*p.root, Region::from_box(grid.chunk_box(id)));
      const int64_t times = exact ? 1 : t.last_chunk - first;
      working = std::max(working, c.working);
      t.source_bytes = sat_add(t.source_bytes, sat_mul(c.source, times));
      for (auto& [name, b] : c.per_source) {
        int64_t& s = p.source_bytes[name];
        s = sat_add(s, sat_mul(b, times));
      }
    }
    t.projected_bytes = sat_add(working, out_held);
    most = std::max(most, t.projected_bytes);
    p.tasks.push_back(t);
  }
  p.projected_peak =
      std::max(peak, sat_add(kept, sat_mul(std::min<int64_t>(p.nworkers, static_cast<int64_t>(p.tasks.size())), most)));
  p.passes.push_back("tasks: " + std::to_string(p.tasks.size()) + " of " + std::to_string(per) + " output chunk" +
                     (per == 1 ? "" : "s") + ", at most " + format_bytes(most) + " each; projected peak " +
                     format_bytes(p.projected_peak));
}

}  // namespace b2lazy
