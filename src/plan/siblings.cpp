#include "plan/siblings.hpp"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace b2lazy {

namespace {

// A group folds at most this many reductions at once (each holds its accumulators).
constexpr size_t kMostMembers = 8;

// The stored sources `input` reads through elementwise nodes only (sorted), or none when
// something else computes on the way (a nested reduction is a stage of its own, planned
// by the reuse pass; folding it in lockstep would hide its pulls).
std::vector<const Node*> elementwise_sources(const Node& input) {
  std::vector<const Node*> found, stack{&input};
  std::unordered_set<const Node*> seen{&input};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n->decompresses()) {
      found.push_back(n);
      continue;
    }
    if (n->inputs().empty()) continue;  // constants, buffers in memory
    if (!n->is_elementwise()) return {};
    for (const NodePtr& in : n->inputs())
      if (seen.insert(in.get()).second) stack.push_back(in.get());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

std::vector<PlanSiblings> find_siblings(const NodePtr& root) {
  // Every node once; candidates by key and sources, in the order first met.
  std::map<std::pair<std::string, std::vector<const Node*>>, std::vector<NodePtr>> groups;
  std::vector<std::pair<std::string, std::vector<const Node*>>> order;
  std::unordered_set<const Node*> seen{root.get()};
  std::vector<NodePtr> stack{root};
  while (!stack.empty()) {
    NodePtr n = stack.back();
    stack.pop_back();
    for (const NodePtr& in : n->inputs())
      if (seen.insert(in.get()).second) stack.push_back(in);
    const std::string key = n->lockstep_key();
    if (key.empty() || n->inputs().size() != 1) continue;
    std::vector<const Node*> sources = elementwise_sources(*n->inputs()[0]);
    if (sources.empty()) continue;
    auto k = std::make_pair(key, sources);
    auto [it, fresh] = groups.try_emplace(k);
    if (fresh) order.push_back(k);
    if (it->second.size() < kMostMembers) it->second.push_back(n);
  }
  // The owning pointers of the sources (found again under the members).
  std::vector<PlanSiblings> out;
  for (const auto& k : order) {
    std::vector<NodePtr>& members = groups[k];
    if (members.size() < 2) continue;
    PlanSiblings s;
    s.members = members;
    std::vector<NodePtr> st{members[0]->inputs()[0]};
    std::unordered_set<const Node*> met;
    while (!st.empty() && s.shared.size() < k.second.size()) {
      NodePtr n = st.back();
      st.pop_back();
      if (!met.insert(n.get()).second) continue;
      if (n->decompresses()) {
        s.shared.push_back(n);
        continue;
      }
      for (const NodePtr& in : n->inputs()) st.push_back(in);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace b2lazy
