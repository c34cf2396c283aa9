// compute_all (b2lazy/compute_all.hpp): one plan per array, run in order, the stages
// computed by one handed to the next (runtime/stage_results.hpp, CarriedStages).
#include "b2lazy/compute_all.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "b2lazy/error.hpp"
#include "b2lazy/plan.hpp"
#include "graph/run_compute.hpp"
#include "plan/memory.hpp"
#include "plan/tasks.hpp"
#include "runtime/own_context.hpp"
#include "runtime/stage_results.hpp"

namespace b2lazy {

namespace {

using Plans = std::vector<std::shared_ptr<Plan>>;

// The plan's stage of node `n` within the box `c` holds (what it counts as kept), or null.
const PlanStage* stage_of(const Plan& p, const Node* n, const CarriedStage& c) {
  for (const PlanStage& s : p.stages)
    if (s.node.get() == n && c.holds(s.box)) return &s;
  return nullptr;
}

// Every node of a graph (an evaluation of it may pull any of them).
NodeSet graph_nodes(const Node& root) {
  NodeSet seen{&root};
  std::vector<const Node*> todo{&root};
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    for (const NodePtr& in : n->inputs())
      if (seen.insert(in.get()).second) todo.push_back(in.get());
  }
  return seen;
}

// The nodes of `graph` a later evaluation of `root` reaches first: cacheable ones (what a
// plan can keep for it) met walking down from `root` through the nodes `graph` does not
// have or cannot keep. (Not every shared node: keeping what lies below a kept one, as
// svd_compressed's panel factorisations below B's SVD, would store what no one reads.)
void shared_frontier(const Node& root, const NodeSet& graph, NodeSet& out) {
  NodeSet seen{&root};
  std::vector<const Node*> todo{&root};
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (graph.count(n) && n->cacheable()) {
      out.insert(n);
      continue;
    }
    for (const NodePtr& in : n->inputs())
      if (seen.insert(in.get()).second) todo.push_back(in.get());
  }
}

// Before plan `i` runs: drops the carried nodes no plan from `i` on has in its graph, then, while the
// ones held in memory that plan `i` does not count as its own (kept in memory) do not fit
// beside its projected peak within max_memory, the largest of those (a later plan computes
// it again).
void prune(CarriedStages& carried, const Plans& plans, const std::vector<NodeSet>& nodes, size_t i) {
  std::erase_if(carried, [&](const auto& e) {
    for (size_t j = i; j < plans.size(); ++j)
      if (nodes[j].count(e.first)) return false;
    return true;
  });
  const Plan& p = *plans[i];
  auto extra = [&](const CarriedStages::value_type& e) {
    const PlanStage* s = stage_of(p, e.first, e.second);
    return s && s->where != KeptIn::Spilled ? int64_t(0) : e.second.memory;
  };
  for (;;) {
    int64_t held = 0;
    auto largest = carried.end();
    for (auto it = carried.begin(); it != carried.end(); ++it) {
      const int64_t b = extra(*it);
      held += b;
      if (b > 0 && (largest == carried.end() || b > extra(*largest))) largest = it;
    }
    if (largest == carried.end() || static_cast<size_t>(p.projected_peak + held) <= p.options.max_memory) return;
    carried.erase(largest);
  }
}

}  // namespace

std::vector<Array> compute_all(const std::vector<Array>& arrays, const std::vector<ComputeOptions>& opts,
                               Context* ctx) {
  if (opts.empty() || (opts.size() != 1 && opts.size() != arrays.size()))
    throw ValueError("compute_all: give one ComputeOptions for all the arrays or one per array (" +
                     std::to_string(arrays.size()) + " arrays, " + std::to_string(opts.size()) + " options)");
  auto own = own_context(ctx);
  auto options = [&](size_t i) -> const ComputeOptions& { return opts[std::min(i, opts.size() - 1)]; };
  std::vector<NodeSet> nodes;
  for (const Array& a : arrays) nodes.push_back(graph_nodes(*a.node()));
  // Each plan keeps, of its computed nodes, the first each later array reaches (a
  // factorisation whose Q one array reads and R the next is factored once).
  Plans plans(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    NodeSet later;
    for (size_t j = i + 1; j < arrays.size(); ++j) shared_frontier(*arrays[j].node(), nodes[i], later);
    plans[i] = std::make_shared<Plan>(
        build_plan(arrays[i].node(), options(i), PlanTarget::Compressed, ctx->nthreads(), &later));
  }
  for (const auto& p : plans) check_plan_budget(*p);  // before any output is written
  auto carried = std::make_shared<CarriedStages>();
  std::vector<Array> out;
  for (size_t i = 0; i < plans.size(); ++i) {
    prune(*carried, plans, nodes, i);
    Plan& p = *plans[i];
    if (!p.stage_results) p.stage_results = std::make_shared<StageResults>();
    p.stage_results->carried = carried;
    out.push_back(run_compute(plans[i], options(i), *ctx));
    p.stage_results->carried.reset();  // (the result keeps its plan, not the others' stages)
  }
  return out;
}

}  // namespace b2lazy
