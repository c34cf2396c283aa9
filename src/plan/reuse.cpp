#include "plan/reuse.hpp"
#include "core/saturating.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace b2lazy {

namespace {

// Planning looks at this many output chunks at most (evenly spread, first and last
// included); a region outside the planned box is still correct, just computed in place.
constexpr int64_t kMaxPlannedChunks = 4096;

struct Requests {
  NodePtr node;
  std::vector<Region> regions;
  std::vector<int64_t> units;  // the output chunk that asked each region (through nodes looked through)
  int64_t total = 0;
  int64_t decompressed = 0;  // sources: bytes the requests decompress
  Box bbox;
  int64_t computed = 0;  // elements the requests compute (Node::computed_region), and their hull
  Box computed_bbox;
  // The same region asked by two units (x^T x's upper tile, by the tile and its mirror):
  // overlap even when the requests hold no more elements than their hull (a triangle).
  std::set<std::vector<int64_t>> asked;
  bool repeated = false;
};

Box hull(const Box& a, const Box& b) {
  Box r = a;
  for (size_t d = 0; d < r.ndim(); ++d) {
    r.start[d] = std::min(a.start[d], b.start[d]);
    r.stop[d] = std::max(a.stop[d], b.stop[d]);
  }
  return r;
}

// The shape of a typical request: the one asking for the most elements altogether. (The
// first one asked may be an odd one out: a TSQR's short last panel, 16 rows beside 40
// panels of 26214, made a source re-packed in tiles of 16 rows.)
Shape typical_request(const Requests& q) {
  if (q.regions.empty()) return q.bbox.shape();
  std::map<Shape, int64_t> elements;
  for (const Region& r : q.regions) {
    int64_t& e = elements[r.count];
    e = sat_add(e, r.size());
  }
  auto most = std::max_element(elements.begin(), elements.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return most->first;
}

bool settles(const Node& n, const PlanningState& ps) { return ps.decided.count(&n) || ps.settled.count(&n); }

// A node evaluated along this many paths of one output chunk (or more) is computed
// once, even when nothing marks it cacheable; so is one on two paths with another shared
// node below it: nested sharing such as `e = e[::-1] + e`, repeated, doubles the work per
// level (2**depth pulls of the innermost node).
constexpr int64_t kMaxPaths = 4;

// The part of the graph under `root` still to plan, each node visited once (iterative,
// so depth costs no stack): nodes found settled are added to ps.settled; the others get
// a rank in a topological order, consumers before their inputs (reverse post-order).
// `promoted`: computed nodes reached along kMaxPaths paths or more, or along two with a
// shared computed node below them (paths counted from the last promoted node above,
// which is computed once), planned as computed once.
struct Unsettled {
  std::unordered_map<const Node*, size_t> rank;
  std::unordered_set<const Node*> promoted;
  bool any_cacheable_below_root = false;
  // Nodes with a stored source (not settled) below them, or one themselves: a stage's
  // pass is walked down only through these.
  std::unordered_set<const Node*> reach_sources;
  bool candidate(const Node& n) const { return reuse_candidate(n) || promoted.count(&n); }
};

// Distinct inputs: a node pulls an input it lists twice once (a fused program's leaves).
template <class F> void for_each_distinct_input(const Node& n, F f) {
  const auto& ins = n.inputs();
  for (size_t i = 0; i < ins.size(); ++i) {
    bool repeat = false;
    for (size_t j = 0; j < i && !repeat; ++j) repeat = ins[j].get() == ins[i].get();
    if (!repeat) f(ins[i].get());
  }
}

// Distinct consumers of every node under root that pull it in the same pass as their own
// consumers (not reuse candidates, which pull theirs in a pass of their own when reused),
// into ps.consumers; each node visited once.
void count_consumers(const Node& root, PlanningState& ps) {
  std::unordered_set<const Node*> seen{&root};
  std::vector<const Node*> stack{&root};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    for_each_distinct_input(*n, [&](const Node* in) {
      ++ps.visits;
      int& c = ps.consumers[in];
      if (!reuse_candidate(*n)) ++c;
      if (seen.insert(in).second) stack.push_back(in);
    });
  }
  ps.consumers.emplace(&root, 0);  // counted: the map is not empty even for a single node
}

Unsettled unsettled_part(const Node& root, PlanningState& ps) {
  Unsettled u;
  if (settles(root, ps)) return u;
  // 1. Post-order of the nodes under root not settled by earlier plans.
  std::vector<const Node*> post;
  std::unordered_set<const Node*> seen{&root};
  std::vector<std::pair<const Node*, size_t>> stack{{&root, 0}};
  while (!stack.empty()) {
    auto& [n, next] = stack.back();
    if (next < n->inputs().size()) {
      const Node* in = n->inputs()[next++].get();
      ++ps.visits;
      if (!settles(*in, ps) && seen.insert(in).second) stack.push_back({in, 0});
      continue;
    }
    post.push_back(n);
    stack.pop_back();
  }
  // 2. Shared computed nodes below each node (inputs first): pulling such a node along
  // several paths multiplies the paths below it too (nested sharing grows exponentially).
  // Consumers are counted over the whole graph of the evaluation (the first root planned),
  // so a plan rooted lower down does not take a shared node for an unshared one.
  if (ps.consumers.empty()) count_consumers(root, ps);
  auto computed = [](const Node& n) { return !n.inputs().empty() && !reuse_candidate(n); };
  auto shared = [&](const Node* n) {
    auto it = ps.consumers.find(n);
    return computed(*n) && it != ps.consumers.end() && it->second >= 2;
  };
  std::unordered_set<const Node*> shared_below;
  for (const Node* n : post)
    for_each_distinct_input(*n, [&](const Node* in) {
      if (settles(*in, ps)) return;
      if (shared(in) || shared_below.count(in)) shared_below.insert(n);
    });
  // 3. Paths from root, consumers first; a node computed once restarts the count below it.
  // Promoted: computed nodes on kMaxPaths paths, or on two with sharing below them.
  std::unordered_map<const Node*, int64_t> paths{{&root, 1}};
  for (size_t i = post.size(); i-- > 0;) {
    const Node* n = post[i];
    int64_t p = paths[n];  // a copy: inserting below may rehash the map
    if (n != &root && computed(*n) && (p >= kMaxPaths || (p >= 2 && shared_below.count(n)))) {
      u.promoted.insert(n);
      p = 1;
    }
    // A candidate's inputs are counted from their other consumers only: reused, it pulls
    // them in a pass of its own (work added, not multiplied); looked through, the walk
    // meets its inputs again.
    if (reuse_candidate(*n) && n != &root) continue;
    for_each_distinct_input(*n, [&](const Node* in) {
      if (!settles(*in, ps)) paths[in] = sat_add(paths[in], p);
    });
  }
  // 4. Settled bottom-up: no candidate in it, nothing below to plan, and no sharing below
  // (a later plan rooted higher up may count more paths to it and promote nodes there).
  std::unordered_set<const Node*> unsettled;
  for (const Node* n : post) {
    bool settled = !u.candidate(*n) && !shared(n) && !shared_below.count(n);
    for (auto& in : n->inputs()) settled = settled && !unsettled.count(in.get());
    if (settled) {
      ps.settled.insert(n);
    } else {
      unsettled.insert(n);
      // (the root too when cacheable: its chunks may compute overlapping parts, as a sort's
      // lanes cut by the output chunks)
      if (u.candidate(*n) && (n != &root || n->cacheable())) u.any_cacheable_below_root = true;
    }
  }
  for (const Node* n : post) {  // inputs first
    if (!unsettled.count(n)) continue;
    bool reach = n->decompresses();
    for (auto& in : n->inputs()) reach = reach || u.reach_sources.count(in.get());
    if (reach) u.reach_sources.insert(n);
  }
  std::vector<const Node*> order;
  for (const Node* n : post)
    if (unsettled.count(n)) order.push_back(n);
  for (size_t i = 0; i < order.size(); ++i) u.rank[order[order.size() - 1 - i]] = i;
  return u;
}

class Walker {
 public:
  Walker(PlanningState& ps, const Unsettled& u) : ps_(ps), u_(u) {}
  std::unordered_map<const Node*, Requests> frontier;

  // One unit of evaluation (an output chunk, or a region of a node looked through): a
  // node asked the same region twice within it is walked once, as fused programs pull
  // each leaf once.
  void start_unit(int64_t unit) {
    seen_.clear();
    unit_ = unit;
  }

  void walk(const NodePtr& n, const Region& r) {
    ++ps_.visits;
    if (r.size() == 0 || settles(*n, ps_)) return;
    std::vector<Region>& seen = seen_[n.get()];
    if (std::find(seen.begin(), seen.end(), r) != seen.end()) return;
    seen.push_back(r);
    // A stage's pass stops at the computed nodes it pulls: computed once too, each counts
    // its own pass (walking through them would walk nested stages once per level above).
    if (stage_pass_ && ((u_.candidate(*n) && !n->decompresses()) || !u_.reach_sources.count(n.get()))) return;
    if (u_.candidate(*n)) {
      auto [it, fresh] = frontier.try_emplace(n.get());
      Requests& q = it->second;
      const Region c = n->computed_region(r);
      if (fresh) {
        q.node = n;
        q.bbox = r.bounds();
        q.computed_bbox = c.bounds();
        order_.push({u_.rank.at(n.get()), n.get()});
      } else {
        q.bbox = hull(q.bbox, r.bounds());
        q.computed_bbox = hull(q.computed_bbox, c.bounds());
      }
      q.total += r.size();
      q.computed += c.size();
      q.decompressed = sat_add(q.decompressed, n->decompressed_bytes(r));
      std::vector<int64_t> key(r.start);
      key.insert(key.end(), r.step.begin(), r.step.end());
      key.insert(key.end(), r.count.begin(), r.count.end());
      // (A stage's pass is counted in what the source costs, not replayed through a window
      // with the tasks' pulls: it runs before them.)
      if (stage_pass_) return;
      q.repeated = !q.asked.insert(std::move(key)).second || q.repeated;
      q.regions.push_back(r);
      q.units.push_back(unit_);
      return;
    }
    descend(n, r);
  }

  // Each input's region, or the pieces the node pulls it in (what they decompress).
  void descend(const NodePtr& n, const Region& r) {
    auto ins = n->input_regions(r);
    for (size_t i = 0; i < ins.size() && i < n->inputs().size(); ++i) {
      const auto pieces = ps_.worker_bytes ? n->pull_pieces(r, i, ps_.worker_bytes) : std::vector<Region>{};
      if (pieces.empty()) walk(n->inputs()[i], ins[i]);
      for (const Region& p : pieces) {
        // Each piece is a pull of its own: what it asks below is asked again by the next
        // (a reduction's slabs each pull the same mean(u) they subtract).
        auto outer = std::exchange(seen_, {});
        walk(n->inputs()[i], p);
        seen_ = std::move(outer);
      }
    }
  }

  // What the pass computing `box` of `n` once pulls of the stored sources below it (each
  // decompressed again by that pass), up to the computed nodes it pulls.
  void walk_stage_pass(const NodePtr& n, const Box& box, int64_t unit) {
    start_unit(unit);
    stage_pass_ = true;
    descend(n, Region::from_box(box));
    stage_pass_ = false;
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
  PlanningState& ps_;
  const Unsettled& u_;
  std::unordered_map<const Node*, std::vector<Region>> seen_;
  int64_t unit_ = 0;
  bool stage_pass_ = false;
  using Ranked = std::pair<size_t, const Node*>;
  std::priority_queue<Ranked, std::vector<Ranked>, std::greater<Ranked>> order_;
};

}  // namespace

bool reuse_candidate(const Node& n) { return n.cacheable() || n.decompresses(); }

bool needs_planning(const Node& n, PlanningState& ps) {
  const Unsettled u = unsettled_part(n, ps);
  return !u.rank.empty();
}

std::vector<ReusedNode> find_reused(const NodePtr& root, const ChunkGrid& grid, PlanningState& ps) {
  // Plain elementwise graphs, and graphs whose cacheable nodes are all materialised
  // already, need no plan. (The root itself is never reused: its chunks are disjoint.)
  const Unsettled u = unsettled_part(*root, ps);
  if (!u.any_cacheable_below_root) return {};
  Walker w(ps, u);
  const int64_t n = grid.nchunks();
  const int64_t stride = std::max<int64_t>(1, n / kMaxPlannedChunks);
  auto walk_chunk = [&](int64_t id) {
    w.start_unit(id);
    w.walk(root, Region::from_box(grid.chunk_box(id)));
  };
  for (int64_t id = 0; id < n; id += stride) walk_chunk(id);
  if (n > 1 && (n - 1) % stride) walk_chunk(n - 1);

  // Sampled chunks stand for the ones between them.
  const int64_t walked = (n + stride - 1) / stride + (n > 1 && (n - 1) % stride ? 1 : 0);
  const double scale = static_cast<double>(n) / static_cast<double>(std::max<int64_t>(1, walked));
  std::vector<ReusedNode> reused;
  // Decide consumers before their inputs; looking through a node not reused adds
  // requests to the nodes below it, which are decided later.
  while (Requests* q = w.next()) {
    const Node& node = *q->node;
    const int64_t isz = static_cast<int64_t>(itemsize(node.dtype()));
    const bool promoted = u.promoted.count(&node) > 0;
    const Shape request = typical_request(*q);
    ReusedNode r{q->node, q->bbox, request, 0, 0, !node.cacheable() && !promoted};
    // A source the passes would decompress twice or more is a candidate: read through a
    // window of its blocks, or kept (the stages pass decides, build.cpp).
    if (r.source) {
      r.pulled = sat_cast(static_cast<double>(q->decompressed) * scale);
      r.asked = sat_cast(static_cast<double>(q->total) * static_cast<double>(isz) * scale);
      r.once = node.decompressed_bytes(Region::from_box(q->bbox));
      if (r.once > 0 && r.pulled / 2 >= r.once) {
        // Every chunk walked, in order: their pulls replayed through windows of blocks.
        if (stride == 1 && !q->regions.empty()) r.window = choose_window(node, q->regions, q->units, ps.nworkers);
        reused.push_back(std::move(r));
      }
      continue;
    }
    // (A node computed whole is kept when something pulls it, not inside its own stage's
    // pass; so is one whose requests compute overlapping parts: a sort of lanes cut by the
    // output chunks — kept over the parts computed.)
    const bool whole = node.computed_whole() && !ps.computing.count(&node);
    const bool wider = q->computed > q->computed_bbox.size() && !ps.computing.count(&node);
    const bool later = node.cacheable() && ps.later && ps.later->count(&node) && !ps.computing.count(&node);
    if (q->total > q->bbox.size() || q->repeated || promoted || whole || wider || later) {
      if (wider || later) r.box = q->computed_bbox;
      r.own_chunks = whole || wider || later;
      r.pulled = sat_mul(std::max(q->total, wider ? q->computed : 0), isz);
      r.once = sat_mul(r.box.size(), isz);
      // Its pass reads the sources below it once more: a source the tasks read too is
      // read by both, which the decision to keep it weighs.
      if (!ps.followers.count(&node)) w.walk_stage_pass(q->node, r.box, n + static_cast<int64_t>(reused.size()));
      reused.push_back(std::move(r));
    } else if (!ps.followers.count(&node)) {
      std::vector<Region> regions = std::move(q->regions);
      const std::vector<int64_t> units = std::move(q->units);
      for (size_t i = 0; i < regions.size(); ++i) {
        w.start_unit(units[i]);
        w.descend(q->node, regions[i]);
      }
    }
  }
  return reused;
}

}  // namespace b2lazy
