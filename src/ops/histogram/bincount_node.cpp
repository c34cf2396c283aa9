#include "ops/histogram/bincount_node.hpp"

#include <cstring>

#include "runtime/evaluation.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {
constexpr int64_t kSlab = int64_t(1) << 18;  // elements of x pulled at a time (2 MiB of int64)

Region span(int64_t a, int64_t n) { return Region{{a}, {1}, {n}}; }
}  // namespace

BincountNode::BincountNode(const NodePtr& x, const NodePtr& weights, int64_t length)
    : Node(weights ? DType::F64 : DType::I64, {length},
           weights ? std::vector<NodePtr>{x, weights} : std::vector<NodePtr>{x}) {}

std::string BincountNode::describe() const {
  return std::string("bincount") + (inputs().size() > 1 ? " (weighted)" : "") + " -> " + dtype_name(dtype()) + " " +
         shape_str(shape()) + "; streams x whole in slabs of " + std::to_string(kSlab) + " elements";
}

std::vector<Region> BincountNode::input_regions(const Region&) const {
  std::vector<Region> r;
  for (const NodePtr& in : inputs()) r.push_back(Region::whole(in->shape()));
  return r;
}

std::vector<Region> BincountNode::pull_pieces(const Region&, size_t input, size_t) const {
  const int64_t n = inputs()[input]->size();
  std::vector<Region> pieces;
  if (n <= kSlab) return pieces;
  for (int64_t a = 0; a < n; a += kSlab) pieces.push_back(span(a, std::min(kSlab, n - a)));
  return pieces;
}

int64_t BincountNode::fill_bytes(const Region&, const MemoryModel&) const {
  return std::min(kSlab, inputs()[0]->size()) * 16;  // a slab of x and one of the weights
}

// Adds slab `a` .. a + kSlab of x (and of the weights) into `out` (the region's counts).
void BincountNode::count_slab(int64_t a, const Region& region, void* out, ThreadState& ts) const {
  const int64_t first = region.start[0], step = region.step[0], last = region.last(0);
  const bool weighted = inputs().size() > 1;
  const Region s = span(a, std::min(kSlab, inputs()[0]->size() - a));
  ScratchScope scope(ts.scratch);
  auto* x = scope.alloc_n<int64_t>(static_cast<size_t>(s.size()));
  inputs()[0]->pull(s, x, ts);
  double* w = nullptr;
  if (weighted) {
    w = scope.alloc_n<double>(static_cast<size_t>(s.size()));
    inputs()[1]->pull(s, w, ts);
  }
  for (int64_t i = 0; i < s.size(); ++i) {
    const int64_t v = x[i];
    if (v < first || v > last) continue;
    int64_t k = v - first;
    if (step != 1) {
      if (k % step) continue;
      k /= step;
    }
    if (weighted) static_cast<double*>(out)[k] += w[i];
    else ++static_cast<int64_t*>(out)[k];
  }
}

void BincountNode::fill(const Region& region, void* out, ThreadState& ts) const {
  const int64_t nout = region.count[0];
  std::memset(out, 0, static_cast<size_t>(nout) * 8);
  if (nout == 0) return;
  const int64_t n = inputs()[0]->size(), nslabs = (n + kSlab - 1) / kSlab;
  const int nw = ts.eval ? ts.eval->workers() : 1;
  // Counts (exact in any order) spread over the workers, each into counts of its own,
  // when those stay small; sums of weights stay in x's order on one thread, so that they
  // do not depend on the thread count.
  if (inputs().size() == 1 && ts.can_fork && ts.eval && nw > 1 && nslabs > 1 && nout * 8 * nw <= (int64_t(64) << 20)) {
    std::vector<std::vector<int64_t>> part(static_cast<size_t>(nw));
    ts.eval->parallel_for(nslabs, [&](int64_t i, int worker, ThreadState& w) {
      auto& p = part[static_cast<size_t>(worker)];
      if (p.empty()) p.assign(static_cast<size_t>(nout), 0);
      count_slab(i * kSlab, region, p.data(), w);
    });
    auto* o = static_cast<int64_t*>(out);
    for (const auto& p : part)
      for (size_t k = 0; k < p.size(); ++k) o[k] += p[k];
    return;
  }
  for (int64_t a = 0; a < n; a += kSlab) {
    if (ts.eval) ts.eval->check_cancel();
    count_slab(a, region, out, ts);
  }
}

}  // namespace b2lazy
