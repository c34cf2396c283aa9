#include "plan/reuse.hpp"

#include <algorithm>
#include <functional>
#include <queue>
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

bool settles(const Node& n, const EvalState& ev) { return ev.materialized.count(&n) || ev.settled.count(&n); }

// The part of the graph under `root` still to plan, each node visited once (iterative,
// so depth costs no stack): nodes found settled are added to ev.settled; the others get
// a rank in a topological order, consumers before their inputs (reverse post-order).
struct Unsettled {
  std::unordered_map<const Node*, size_t> rank;
  bool any_cacheable_below_root = false;
};

Unsettled unsettled_part(const Node& root, EvalState& ev) {
  Unsettled u;
  std::vector<const Node*> post;
  std::unordered_map<const Node*, bool> done;  // node -> settled (once its inputs are done)
  std::vector<std::pair<const Node*, size_t>> stack{{&root, 0}};
  if (settles(root, ev)) return u;
  done.emplace(&root, false);
  while (!stack.empty()) {
    auto& [n, next] = stack.back();
    if (next < n->inputs().size()) {
      const Node* in = n->inputs()[next++].get();
      ++ev.plan_visits;
      if (!settles(*in, ev) && done.emplace(in, false).second) stack.push_back({in, 0});
      continue;
    }
    bool settled = !n->cacheable();
    for (auto& in : n->inputs()) settled = settled && (settles(*in, ev));
    if (settled) {
      ev.settled.insert(n);
    } else {
      post.push_back(n);
      if (n != &root && n->cacheable()) u.any_cacheable_below_root = true;
    }
    stack.pop_back();
  }
  for (size_t i = 0; i < post.size(); ++i) u.rank[post[post.size() - 1 - i]] = i;
  return u;
}

class Walker {
 public:
  Walker(EvalState& ev, const Unsettled& u) : ev_(ev), u_(u) {}
  std::unordered_map<const Node*, Requests> frontier;

  // One unit of evaluation (an output chunk, or a region of a node looked through): a
  // node asked the same region twice within it is walked once, as fused programs pull
  // each leaf once.
  void start_unit() { seen_.clear(); }

  void walk(const NodePtr& n, const Region& r) {
    ++ev_.plan_visits;
    if (r.size() == 0 || settles(*n, ev_)) return;
    std::vector<Region>& seen = seen_[n.get()];
    if (std::find(seen.begin(), seen.end(), r) != seen.end()) return;
    seen.push_back(r);
    if (n->cacheable()) {
      auto [it, fresh] = frontier.try_emplace(n.get());
      Requests& q = it->second;
      if (fresh) {
        q.node = n;
        q.bbox = r.bounds();
        order_.push({u_.rank.at(n.get()), n.get()});
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

  // The frontier node to decide next: the first in topological order, so every request
  // from its consumers (looked through or not) has arrived. Null when none is left.
  Requests* next() {
    if (order_.empty()) return nullptr;
    const Node* n = order_.top().second;
    order_.pop();
    return &frontier.at(n);
  }

 private:
  EvalState& ev_;
  const Unsettled& u_;
  std::unordered_map<const Node*, std::vector<Region>> seen_;
  using Ranked = std::pair<size_t, const Node*>;
  std::priority_queue<Ranked, std::vector<Ranked>, std::greater<Ranked>> order_;
};

}  // namespace

bool needs_planning(const Node& n, EvalState& ev) {
  const Unsettled u = unsettled_part(n, ev);
  return !u.rank.empty();
}

std::vector<ReusedNode> find_reused(const NodePtr& root, const ChunkGrid& grid, EvalState& ev) {
  // Plain elementwise graphs, and graphs whose cacheable nodes are all materialised
  // already, need no plan. (The root itself is never reused: its chunks are disjoint.)
  const Unsettled u = unsettled_part(*root, ev);
  if (!u.any_cacheable_below_root) return {};
  Walker w(ev, u);
  const int64_t n = grid.nchunks();
  const int64_t stride = std::max<int64_t>(1, n / kMaxPlannedChunks);
  auto walk_chunk = [&](int64_t id) {
    w.start_unit();
    w.walk(root, Region::from_box(grid.chunk_box(id)));
  };
  for (int64_t id = 0; id < n; id += stride) walk_chunk(id);
  if (n > 1 && (n - 1) % stride) walk_chunk(n - 1);

  std::vector<ReusedNode> reused;
  // Decide consumers before their inputs; looking through a node not reused adds
  // requests to the nodes below it, which are decided later.
  while (Requests* q = w.next()) {
    if (q->total > q->bbox.size()) {
      reused.push_back({q->node, q->bbox});
    } else {
      std::vector<Region> regions = std::move(q->regions);
      for (auto& r : regions) {
        w.start_unit();
        w.descend(q->node, r);
      }
    }
  }
  return reused;
}

}  // namespace b2lazy
