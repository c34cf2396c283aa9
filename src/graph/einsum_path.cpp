// einsum's contraction order: estimate each pairwise contraction's operations and result
// size from the operands' shapes, and pick the order greedily or over all orders (the
// ideas of opt_einsum's greedy and optimal paths).
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "b2lazy/einsum.hpp"
#include "b2lazy/error.hpp"

namespace b2lazy {

namespace {

using Labels = std::set<int>;

struct Problem {
  std::map<int, double> size;  // each label's (broadcast) length
  std::vector<Labels> terms;   // each operand's labels once its own sums are taken
  Labels output;
};

Problem problem(const EinsumSubscripts& s, const std::vector<Shape>& shapes) {
  if (shapes.size() != s.inputs.size())
    throw ValueError("einsum: " + std::to_string(shapes.size()) + " shapes for " + std::to_string(s.inputs.size()) +
                     " operands");
  Problem p;
  p.output.insert(s.output.begin(), s.output.end());
  std::map<int, int> seen;  // in how many operands
  for (size_t k = 0; k < shapes.size(); ++k) {
    if (shapes[k].size() != s.inputs[k].size())
      throw ValueError("einsum: operand " + std::to_string(k) + " has " + std::to_string(shapes[k].size()) +
                       " axes, its subscripts " + std::to_string(s.inputs[k].size()));
    Labels mine;
    for (size_t d = 0; d < shapes[k].size(); ++d) {
      const int l = s.inputs[k][d];
      double& n = p.size[l];
      n = std::max(n, static_cast<double>(shapes[k][d]));
      if (mine.insert(l).second) ++seen[l];
    }
  }
  for (size_t k = 0; k < shapes.size(); ++k) {
    Labels t;
    for (size_t d = 0; d < shapes[k].size(); ++d) {
      const int l = s.inputs[k][d];
      if (shapes[k][d] == 1 && p.size[l] != 1) continue;  // broadcast: indexed away
      if (seen[l] == 1 && !p.output.count(l)) continue;   // summed by the operand alone
      t.insert(l);
    }
    p.terms.push_back(std::move(t));
  }
  return p;
}

double volume(const Labels& ls, const Problem& p) {
  double v = 1;
  for (int l : ls) v *= p.size.at(l);
  return v;
}

Labels join(const Labels& a, const Labels& b) {
  Labels u = a;
  u.insert(b.begin(), b.end());
  return u;
}

// The labels a contraction of `a` and `b` keeps: those the output or another term needs.
Labels kept(const Labels& a, const Labels& b, const Labels& needed) {
  Labels r;
  for (int l : join(a, b))
    if (needed.count(l)) r.insert(l);
  return r;
}

Labels needed_besides(const std::vector<Labels>& terms, size_t i, size_t j, const Labels& output) {
  Labels n = output;
  for (size_t k = 0; k < terms.size(); ++k)
    if (k != i && k != j) n.insert(terms[k].begin(), terms[k].end());
  return n;
}

void apply(std::vector<Labels>& terms, EinsumStep st, const Labels& output) {
  const Labels r = kept(terms[st.first], terms[st.second], needed_besides(terms, st.first, st.second, output));
  terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(st.second));
  terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(st.first));
  terms.push_back(r);
}

std::vector<EinsumStep> greedy(Problem p) {
  std::vector<EinsumStep> path;
  while (p.terms.size() > 1) {
    using Key = std::tuple<int, double, double>;  // (no shared label, size added, operations)
    Key best{2, 0, 0};
    EinsumStep pick{0, 1};
    for (size_t i = 0; i < p.terms.size(); ++i)
      for (size_t j = i + 1; j < p.terms.size(); ++j) {
        const Labels& a = p.terms[i];
        const Labels& b = p.terms[j];
        bool shared = false;
        for (int l : a) shared = shared || b.count(l);
        const Labels r = kept(a, b, needed_besides(p.terms, i, j, p.output));
        const Key key{shared ? 0 : 1, volume(r, p) - volume(a, p) - volume(b, p), volume(join(a, b), p)};
        if (key < best) best = key, pick = {i, j};
      }
    path.push_back(pick);
    apply(p.terms, pick, p.output);
  }
  return path;
}

// Fewest operations over all orders: dynamic programming over subsets of the operands.
std::vector<EinsumStep> optimal(const Problem& p) {
  const size_t n = p.terms.size();
  const uint32_t all = (1u << n) - 1;
  std::vector<Labels> labels(all + 1);
  std::vector<double> cost(all + 1, std::numeric_limits<double>::infinity());
  std::vector<uint32_t> split(all + 1, 0);
  for (uint32_t m = 1; m <= all; ++m) {
    Labels inside, outside = p.output;
    for (size_t k = 0; k < n; ++k) {
      const Labels& t = p.terms[k];
      (m >> k & 1 ? inside : outside).insert(t.begin(), t.end());
    }
    for (int l : inside)
      if (outside.count(l)) labels[m].insert(l);
    if ((m & (m - 1)) == 0) {
      labels[m] = p.terms[static_cast<size_t>(__builtin_ctz(m))];
      cost[m] = 0;
    }
  }
  for (uint32_t m = 1; m <= all; ++m) {
    if ((m & (m - 1)) == 0) continue;
    const uint32_t low = m & (~m + 1);
    for (uint32_t sub = (m - 1) & m; sub; sub = (sub - 1) & m) {
      if (!(sub & low)) continue;  // each split once: the part with the lowest operand first
      const uint32_t rest = m ^ sub;
      const double c = cost[sub] + cost[rest] + volume(join(labels[sub], labels[rest]), p);
      if (c < cost[m]) cost[m] = c, split[m] = sub;
    }
  }
  // The tree as steps over the current list of operands (ids: subsets).
  std::vector<uint32_t> current;
  for (size_t k = 0; k < n; ++k) current.push_back(1u << k);
  std::vector<EinsumStep> path;
  auto pos = [&](uint32_t id) {
    return static_cast<size_t>(std::find(current.begin(), current.end(), id) - current.begin());
  };
  auto build = [&](auto&& self, uint32_t m) -> void {
    if ((m & (m - 1)) == 0) return;
    self(self, split[m]);
    self(self, m ^ split[m]);
    size_t i = pos(split[m]), j = pos(m ^ split[m]);
    if (i > j) std::swap(i, j);
    path.push_back({i, j});
    current.erase(current.begin() + static_cast<std::ptrdiff_t>(j));
    current.erase(current.begin() + static_cast<std::ptrdiff_t>(i));
    current.push_back(m);
  };
  build(build, all);
  return path;
}

}  // namespace

std::vector<EinsumStep> einsum_path(const EinsumSubscripts& s, const std::vector<Shape>& shapes, EinsumOptimize how) {
  const Problem p = problem(s, shapes);
  const size_t n = p.terms.size();
  if (n < 2) return {};
  if (how == EinsumOptimize::LeftToRight || n == 2) {
    std::vector<EinsumStep> path{{0, 1}};
    for (size_t m = n - 1; m > 1; --m) path.push_back({0, m - 1});
    return path;
  }
  if (how == EinsumOptimize::Optimal && n <= 10) return optimal(p);
  return greedy(p);
}

double einsum_path_flops(const EinsumSubscripts& s, const std::vector<Shape>& shapes,
                         const std::vector<EinsumStep>& path) {
  Problem p = problem(s, shapes);
  double flops = 0;
  for (const EinsumStep& st : path) {
    if (st.first >= st.second || st.second >= p.terms.size())
      throw ValueError("einsum: path step (" + std::to_string(st.first) + ", " + std::to_string(st.second) +
                       ") does not name two of the " + std::to_string(p.terms.size()) + " operands left");
    flops += volume(join(p.terms[st.first], p.terms[st.second]), p);
    apply(p.terms, st, p.output);
  }
  if (p.terms.size() > 1)
    throw ValueError("einsum: the path leaves " + std::to_string(p.terms.size()) + " operands uncontracted");
  return flops;
}

}  // namespace b2lazy
