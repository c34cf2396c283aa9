#include "plan/carry.hpp"

#include <set>
#include <unordered_map>

#include "plan/propagate.hpp"

namespace b2lazy {

Shape CarryLinks::key(const Region& r, int axis, int64_t position) {
  Shape k;
  k.reserve(3 * r.ndim() + 1);
  for (size_t d = 0; d < r.ndim(); ++d) {
    if (static_cast<int>(d) == axis) continue;
    k.push_back(r.start[d]);
    k.push_back(r.step[d]);
    k.push_back(r.count[d]);
  }
  k.push_back(position);
  return k;
}

namespace {

// Checking the chain walks every output chunk once; beyond this many the stage stays.
constexpr int64_t kMaxCarriedChunks = int64_t(1) << 18;

// Nodes reachable from `n` (n included), not below `stop`.
using Reached = std::unordered_map<const Node*, NodePtr>;
void reach(const NodePtr& n, const std::set<const Node*>& stop, Reached& seen) {
  std::vector<NodePtr> todo{n};
  while (!todo.empty()) {
    NodePtr x = std::move(todo.back());
    todo.pop_back();
    if (!seen.emplace(x.get(), x).second || stop.count(x.get())) continue;
    for (auto& in : x->inputs()) todo.push_back(in);
  }
}

// The links of `n`'s carries over the output chunks, or null when a region does not
// follow one asked by an earlier chunk (or two regions start where one ends).
std::shared_ptr<CarryLinks> chain(const Plan& p, const Node& n, const std::set<const Node*>& stop) {
  const int axis = n.carry().axis;
  const ChunkGrid grid = p.grid();
  auto links = std::make_shared<CarryLinks>();
  std::map<Shape, int64_t> ends;  // where regions asked so far end -> their chunk
  bool ok = true, asked = false;
  int64_t chunk = 0;
  std::vector<Region> mine;
  Propagation prop(stop, [&](const Edge&, const Node& x, const Region& r, bool first) {
    if (&x == &n && first && r.size() > 0) mine.push_back(r);
  });
  for (; ok && chunk < p.nchunks; ++chunk) {
    mine.clear();
    prop.run({nullptr, 0}, *p.root, Region::from_box(grid.chunk_box(chunk)));
    for (const Region& r : mine) {  // all of this chunk's consumers first: a chunk does not feed itself
      asked = true;
      const Box b = r.bounds();
      const size_t k = static_cast<size_t>(axis);
      if (b.start[k] == 0) continue;
      const Shape start = CarryLinks::key(r, axis, b.start[k]);
      auto it = ends.find(start);
      if (it == ends.end() || !links->producer.emplace(start, it->second).second) {  // (taken once)
        ok = false;
        break;
      }
    }
    for (const Region& r : mine) {
      const Box b = r.bounds();
      const Shape end = CarryLinks::key(r, axis, b.stop[static_cast<size_t>(axis)]);
      if (!ends.emplace(end, chunk).second) ok = false;  // asked twice: its carry would be taken twice
    }
  }
  return ok && asked ? links : nullptr;
}

}  // namespace

void plan_carries(Plan& p) {
  if (p.stages.empty() || p.nchunks <= 1 || p.nchunks > kMaxCarriedChunks) return;
  std::set<const Node*> stop;
  for (const PlanStage& s : p.stages) stop.insert(s.node.get());
  // Nodes the output tasks pull, and nodes some stage's pass pulls.
  Reached by_tasks, by_stages;
  reach(p.root, stop, by_tasks);
  for (const PlanStage& s : p.stages)
    for (auto& in : s.node->inputs()) reach(in, stop, by_stages);
  for (PlanStage& s : p.stages) {
    if (s.source) continue;
    // Its one consumer: a node pulled by the output tasks only, taking it as a carry.
    NodePtr consumer;
    int consumers = 0;
    for (auto& [x, ptr] : by_tasks)
      for (size_t i = 0; i < x->inputs().size(); ++i)
        if (x->inputs()[i] == s.node) {
          ++consumers;
          if (x->carry().input == static_cast<int>(i)) consumer = ptr;
        }
    if (!consumer || consumers != 1 || by_stages.count(consumer.get()) || by_stages.count(s.node.get())) continue;
    auto links = chain(p, *consumer, stop);
    if (!links) continue;
    s.carried_by = consumer;
    s.links = std::move(links);
    p.passes.push_back("carries: " + s.node->describe() + " passed from output chunk to output chunk by " +
                       consumer->kind() + " (" + std::to_string(s.links->producer.size()) +
                       " links) when every task runs in order; computed as a stage only for part of the tasks");
  }
}

}  // namespace b2lazy
