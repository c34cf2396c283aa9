#include "plan/reuse.hpp"

#include <algorithm>
#include <unordered_map>

#include "exec/eval_state.hpp"

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

  void walk(const NodePtr& n, const Region& r) {
    if (r.size() == 0 || ev_.materialized.count(n.get())) return;
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
};

}  // namespace

std::vector<ReusedNode> find_reused(const NodePtr& root, const ChunkGrid& grid, const EvalState& ev) {
  Walker w(ev);
  const int64_t n = grid.nchunks();
  const int64_t stride = std::max<int64_t>(1, n / kMaxPlannedChunks);
  for (int64_t id = 0; id < n; id += stride) w.walk(root, Region::from_box(grid.chunk_box(id)));
  if (n > 1 && (n - 1) % stride) w.walk(root, Region::from_box(grid.chunk_box(n - 1)));

  std::vector<ReusedNode> reused;
  // Decide outermost first; looking through a node not reused adds deeper requests.
  for (size_t i = 0; i < w.order.size(); ++i) {
    Requests& q = w.frontier[w.order[i]];
    if (q.total > q.bbox.size()) {
      reused.push_back({q.node, q.bbox});
    } else {
      std::vector<Region> regions = std::move(q.regions);
      for (auto& r : regions) w.descend(q.node, r);
    }
  }
  return reused;
}

}  // namespace b2lazy
