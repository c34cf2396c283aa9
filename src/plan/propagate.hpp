// Walks the regions one output chunk asks of every node (Node::input_regions), stopping
// at the nodes computed once. Used by the tasks pass (projected memory, source bytes)
// and by the printed plan (what a typical chunk asks of each node).
#pragma once
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "b2lazy/node.hpp"

namespace b2lazy {

// An edge of the graph: input `index` of `parent` (parent null: the output itself).
using Edge = std::pair<const Node*, size_t>;

// `visit(edge, node, region, first)` sees each request; `first` is false when the chunk
// already asked that node for that region along another edge: the walk does not go below
// it again (as the planner, and as a fused program pulls each leaf once), so shared
// subexpressions cost one visit, not one per path.
using Visit = std::function<void(const Edge&, const Node&, const Region&, bool first)>;

class Propagation {
 public:
  // worker_bytes > 0: inputs a node pulls in pieces (Node::pull_pieces) are walked piece
  // by piece, as read costs are estimated; 0: whole regions (input_regions).
  Propagation(const std::set<const Node*>& stop, Visit visit, size_t worker_bytes = 0)
      : stop_(stop), visit_(std::move(visit)), worker_bytes_(worker_bytes) {}

  void run(const Edge& edge, const Node& n, const Region& r) {
    seen_.clear();
    std::vector<Step> todo{{edge, &n, r}};
    while (!todo.empty()) {
      Step s = std::move(todo.back());
      todo.pop_back();
      std::vector<Region>& seen = seen_[s.node];
      const bool first = std::find(seen.begin(), seen.end(), s.region) == seen.end();
      visit_(s.edge, *s.node, s.region, first);
      if (!first || stop_.count(s.node) || s.region.size() == 0) continue;
      seen.push_back(s.region);
      auto regions = s.node->input_regions(s.region);
      const size_t k = std::min(regions.size(), s.node->inputs().size());
      for (size_t i = k; i-- > 0;) {  // first input first, as a recursive walk would
        auto pieces = worker_bytes_ ? s.node->pull_pieces(s.region, i, worker_bytes_) : std::vector<Region>{};
        if (pieces.empty()) pieces.push_back(std::move(regions[i]));
        for (size_t j = pieces.size(); j-- > 0;)
          todo.push_back({{s.node, i}, s.node->inputs()[i].get(), std::move(pieces[j])});
      }
    }
  }

 private:
  struct Step {
    Edge edge;
    const Node* node;
    Region region;
  };
  const std::set<const Node*>& stop_;
  Visit visit_;
  size_t worker_bytes_;
  std::map<const Node*, std::vector<Region>> seen_;
};

}  // namespace b2lazy
