// Node::pull: the one place where a materialised node's cached copy is used.
#include <cstring>

#include "b2lazy/node.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {
const Materialized* cached(const Node* n, const Region& region, ThreadState& ts) {
  const Materialized* m = ts.eval ? ts.eval->stage(n) : nullptr;
  if (!m || (region.size() > 0 && !m->box.contains(region.bounds()))) return nullptr;
  return m;
}

const void* lent(const Node* n, const Region& region, const ThreadState& ts) {
  return ts.nodes ? ts.nodes->lent(n, region) : nullptr;
}

Region shifted(const Region& r, const Box& box) {
  Region s = r;
  for (size_t d = 0; d < s.ndim(); ++d) s.start[d] -= box.start[d];
  return s;
}
}  // namespace

void Node::pull(const Region& region, void* out, ThreadState& ts) const {
  if (ts.eval) ts.eval->check_cancel();  // long work inside one chunk stops too
  if (const void* p = lent(this, region, ts)) {
    std::memcpy(out, p, static_cast<size_t>(region.size()) * itemsize(dtype()));
    return;
  }
  if (const Materialized* m = cached(this, region, ts)) {
    ++ts.cache_hits;
    m->source->fill(shifted(region, m->box), out, ts);
    return;
  }
  fill(region, out, ts);
}

const void* Node::pull_view(const Region& region, ThreadState& ts) const {
  if (const void* p = lent(this, region, ts)) return p;
  if (const Materialized* m = cached(this, region, ts)) {
    const void* p = m->source->view(shifted(region, m->box));
    if (p) ++ts.cache_hits;
    return p;
  }
  return view(region);
}

const void* Node::pull_view_rows(const Region& region, int64_t& row_stride, ThreadState& ts) const {
  if (const void* p = lent(this, region, ts)) {  // lent values are dense
    row_stride = region.ndim() ? region.count.back() : 1;
    return p;
  }
  if (const Materialized* m = cached(this, region, ts)) {
    const void* p = m->source->view_rows(shifted(region, m->box), row_stride);
    if (p) ++ts.cache_hits;
    return p;
  }
  return view_rows(region, row_stride);
}

}  // namespace b2lazy
