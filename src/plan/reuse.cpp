#include "plan/reuse.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "exec/eval_state.hpp"
#include "plan/chunking.hpp"

namespace b2lazy {

namespace {

// Planning looks at this many output chunks at most (evenly spread, first and last
// included); a region outside the planned box is still correct, just computed in place.
constexpr int64_t kMaxPlannedChunks = 4096;

struct Requests {
  NodePtr node;
  std::vector<Region> regions;
  int64_t total = 0;
  Box bbox;
};

Box hull(const Box& a, const Box& b) {
  Box r = a;
  for (size_t d = 0; d < r.ndim(); ++d) {
    r.start[d] = std::min(a.start[d], b.start[d]);
    r.stop[d] = std::max(a.stop[d], b.stop[d]);
  }
  return r;
}

class Walker {
 public:
  explicit Walker(const EvalState& ev) : ev_(ev) {}
  std::unordered_map<const Node*, Requests> frontier;
  std::vector<const Node*> order;  // first-seen order, outermost first

  // Shared subexpressions are walked once per output chunk, not once per path to them.
  void start_chunk() { seen_.clear(); }

  void walk(const NodePtr& n, const Region& r) {
    if (r.size() == 0 || ev_.materialized.count(n.get())) return;
    std::vector<Region>& seen = seen_[n.get()];
    if (std::find(seen.begin(), seen.end(), r) != seen.end()) return;
    seen.push_back(r);
    if (n->cacheable()) {
      auto [it, fresh] = frontier.try_emplace(n.get());
      Requests& q = it->second;
      if (fresh) {
        q.node = n;
        q.bbox = r.bounds();
        order.push_back(n.get());
      } else {
        q.bbox = hull(q.bbox, r.bounds());
      }
      q.total += r.size();
      q.regions.push_back(r);
      return;
    }
    descend(n, r);
  }

  void descend(const NodePtr& n, const Region& r) {
    auto ins = n->input_regions(r);
    for (size_t i = 0; i < ins.size() && i < n->inputs().size(); ++i) walk(n->inputs()[i], ins[i]);
  }

 private:
  const EvalState& ev_;
  std::unordered_map<const Node*, std::vector<Region>> seen_;
};

}  // namespace

std::vector<ReusedNode> find_reused(const NodePtr& root, const ChunkGrid& grid, const EvalState& ev) {
  if (!any_node(*root, [](const Node& n) { return n.cacheable(); })) return {};  // plain elementwise graphs need no plan
  Walker w(ev);
  const int64_t n = grid.nchunks();
  const int64_t stride = std::max<int64_t>(1, n / kMaxPlannedChunks);
  auto walk_chunk = [&](int64_t id) {
    w.start_chunk();
    w.walk(root, Region::from_box(grid.chunk_box(id)));
  };
  for (int64_t id = 0; id < n; id += stride) walk_chunk(id);
  if (n > 1 && (n - 1) % stride) walk_chunk(n - 1);

  std::vector<ReusedNode> reused;
  // Decide outermost first; looking through a node not reused adds deeper requests.
  for (size_t i = 0; i < w.order.size(); ++i) {
    Requests& q = w.frontier[w.order[i]];
    if (q.total > q.bbox.size()) {
      reused.push_back({q.node, q.bbox});
    } else {
      std::vector<Region> regions = std::move(q.regions);
      for (auto& r : regions) {
        w.start_chunk();
        w.descend(q.node, r);
      }
    }
  }
  return reused;
}

}  // namespace b2lazy
