#include "ops/histogram/bincount_node.hpp"

#include <cstring>

#include "exec/eval_state.hpp"
#include "exec/scratch.hpp"
#include "exec/thread_state.hpp"

namespace b2lazy {

namespace {
constexpr int64_t kSlab = int64_t(1) << 18;  // elements of x pulled at a time (2 MiB of int64)

Region span(int64_t a, int64_t n) { return Region{{a}, {1}, {n}}; }
}  // namespace

BincountNode::BincountNode(const NodePtr& x, const NodePtr& weights, int64_t length)
    : Node(weights ? DType::F64 : DType::I64, {length}, weights ? std::vector<NodePtr>{x, weights} : std::vector<NodePtr>{x}) {}

std::string BincountNode::describe() const {
  return std::string("bincount") + (inputs().size() > 1 ? " (weighted)" : "") + " -> " + dtype_name(dtype()) + " " +
         shape_str(shape()) + "; streams x whole in slabs of " + std::to_string(kSlab) + " elements";
}

int64_t BincountNode::slab_elements() const { return kSlab; }

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

void BincountNode::fill(const Region& region, void* out, ThreadState& ts) const {
  const int64_t nout = region.count[0], first = region.start[0], step = region.step[0];
  const bool weighted = inputs().size() > 1;
  std::memset(out, 0, static_cast<size_t>(nout) * 8);
  if (nout == 0) return;
  const int64_t last = region.last(0);
  const int64_t n = inputs()[0]->size();
  for (int64_t a = 0; a < n; a += kSlab) {
    if (ts.eval) ts.eval->check_cancel();
    const Region s = span(a, std::min(kSlab, n - a));
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
}

}  // namespace b2lazy
