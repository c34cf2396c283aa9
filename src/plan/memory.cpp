#include "plan/memory.hpp"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include "b2lazy/error.hpp"
#include "core/saturating.hpp"
#include "plan/chunking.hpp"
#include "plan/format.hpp"
#include "plan/tasks.hpp"

namespace b2lazy {

namespace {
constexpr int64_t kMiB = int64_t(1) << 20;

std::string mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / static_cast<double>(kMiB));
  return buf;
}

// Blocks whole along every axis after the first one split: the chunk's C order is its
// block-major order, so the writer compresses a C-order chunk as it is.
bool c_order_blocks(const Shape& chunk, const Shape& blocks) {
  if (blocks.size() != chunk.size()) return false;
  size_t p = 0;
  while (p < blocks.size() && blocks[p] == 1) ++p;
  for (size_t d = p + 1; d < blocks.size(); ++d)
    if (blocks[d] != chunk[d]) return false;
  return true;
}
}  // namespace

int64_t output_buffer_bytes(const Shape& shape, const Shape& chunks, const Shape& blocks, size_t itemsize,
                            bool to_writer) {
  const int64_t isz = static_cast<int64_t>(itemsize);
  const int64_t chunk = sat_mul(prod(chunks), isz);
  if (to_writer) return sat_add(sat_mul(2, chunk), c_order_blocks(chunks, blocks) ? 0 : chunk);
  // (a chunk that is not a range of the result is gathered)
  return contiguous_chunks(shape, itemsize, static_cast<size_t>(chunk)) == chunks ? 0 : chunk;
}

int64_t kept_in_memory(const PlanStage& s) { return s.where == KeptIn::Spilled ? 0 : s.bytes; }

std::string MemoryProjection::describe() const {
  std::string s = mib(peak()) + " (";
  if (kept > windows) s += "kept by the stages " + mib(kept - windows) + " + ";
  if (windows) s += "windows of decompressed blocks " + mib(windows) + " + ";
  if (fetched) s += "fetched store reads " + mib(fetched) + " + ";
  if (calling) s += "the calling thread " + mib(calling) + " + ";
  s += std::to_string(workers) + " worker" + (workers == 1 ? "" : "s") + " x " + mib(per_worker);
  return s + ")";
}

MemoryProjection project_plan(const Plan& p) {
  MemoryProjection m;
  auto arena = [](int64_t bytes) { return bytes > 0 ? std::max(kArenaBlockBytes, bytes) : 0; };
  auto add_pass = [&](const PassMemory& pm) {
    if (pm.per_task <= 0) return;
    if (pm.threads == 0) {  // its one chunk, on the calling thread; what it forks, on every worker
      const int64_t forked = sat_mul(p.nworkers, pm.forked);
      m.calling = std::max(m.calling, arena(pm.per_task > forked ? pm.per_task - forked : 0));
      if (pm.forked) {
        m.workers = std::max(m.workers, p.nworkers);
        m.per_worker = std::max(m.per_worker, arena(pm.forked));
      }
      return;
    }
    m.workers = std::max(m.workers, pm.threads);
    m.per_worker = std::max(m.per_worker, arena(pm.per_task));
  };
  for (const PlanStage& s : p.stages) {
    m.kept = sat_add(m.kept, kept_in_memory(s));
    add_pass(s.memory);
  }
  for (const PlanWindow& w : p.windows) m.windows = sat_add(m.windows, w.bytes);
  m.kept = sat_add(m.kept, m.windows);
  add_pass(p.tasks_memory);
  m.fetched = p.fetch_bytes;
  return m;
}

namespace {

// The store-reading sources (Node::store_read_bytes) that more than one pass reads: the
// stages' and the final one, each walked down to the nodes other stages compute.
std::vector<const Node*> sources_read_twice(const Plan& p) {
  std::unordered_set<const Node*> computed;
  for (const PlanStage& s : p.stages) computed.insert({s.node.get(), s.computed.get()});
  std::vector<const Node*> roots{p.root.get()};
  for (const PlanStage& s : p.stages) roots.push_back(s.computed.get());
  std::unordered_map<const Node*, int> passes;
  for (const Node* root : roots) {
    std::vector<const Node*> todo{root};
    std::unordered_set<const Node*> seen;
    while (!todo.empty()) {
      const Node* n = todo.back();
      todo.pop_back();
      if (!n || !seen.insert(n).second) continue;
      if (n != root && computed.count(n)) continue;
      if (n->store_read_bytes() > 0) ++passes[n];
      for (const NodePtr& i : n->inputs()) todo.push_back(i.get());
    }
  }
  std::vector<const Node*> out;
  for (const auto& [n, k] : passes)
    if (k > 1) out.push_back(n);
  return out;
}

}  // namespace

int64_t fetch_cache_bytes(const Plan& p) {
  if (!p.root) return 0;
  int64_t most_read = 0;
  std::vector<const Node*> todo{p.root.get()};
  std::unordered_set<const Node*> seen;
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    most_read = std::max(most_read, n->store_read_bytes());
    for (const NodePtr& i : n->inputs()) todo.push_back(i.get());
  }
  if (most_read <= 0) return 0;
  const int64_t share = static_cast<int64_t>(std::min<size_t>(p.options.max_memory / 8, size_t(256) << 20));
  if (share < most_read) return 0;
  // A source two passes read (a mean, then x - mean) is fetched once when its stored bytes
  // fit beside the rest of the plan within half the budget: the second pass finds them all
  // in the cache instead of over the network again.
  int64_t twice = 0;
  for (const Node* n : sources_read_twice(p)) {
    const ChunkGrid* g = n->storage_grid();
    twice = sat_add(twice, g ? sat_mul(g->nchunks(), n->store_read_bytes()) : INT64_MAX / 4);
  }
  if (twice > 0) {
    const int64_t keep = sat_add(twice, sat_mul(4, most_read));
    const int64_t others = project_plan(p).peak() - p.fetch_bytes;  // the rest of the plan
    if (keep > share && keep <= static_cast<int64_t>(p.options.max_memory / 2) &&
        sat_add(others, keep) <= static_cast<int64_t>(p.options.max_memory))
      return keep;
  }
  return share;
}

Shape fitted_blocks(const Shape& chunks, size_t itemsize) {
  return contiguous_chunks(chunks, itemsize, size_t(256) << 10);
}

void check_plan_budget(const Plan& plan) {
  const size_t budget = plan.options.max_memory;
  if (plan.nchunks == 0 || static_cast<size_t>(plan.projected_peak) <= budget) return;
  // Slabs, panels and what is kept follow the budget: plan again for whole MiB from the
  // projected peak up, until the plan made for a budget fits it.
  auto whole_mib = [](int64_t bytes) { return ceil_div(std::min<int64_t>(bytes, INT64_MAX - kMiB), kMiB); };
  int64_t need = std::max(whole_mib(plan.projected_peak),
                          whole_mib(static_cast<int64_t>(std::min<size_t>(budget, INT64_MAX / 2))) + 1);
  for (int i = 0; i < 32 && need < INT64_MAX / kMiB; ++i) {
    ComputeOptions o = plan.options;
    o.max_memory = static_cast<size_t>(need) * static_cast<size_t>(kMiB);
    const Plan q = build_plan(plan.root, o, plan.target, plan.nworkers);
    if (static_cast<size_t>(q.projected_peak) <= o.max_memory) break;
    need = std::max(whole_mib(q.projected_peak), need + std::max<int64_t>(1, need / 16));
  }
  throw ValueError("max_memory of " + mib(static_cast<int64_t>(std::min<size_t>(budget, INT64_MAX))) +
                   " is too small for this evaluation: its projected peak is " + plan.memory_model +
                   " with output chunks " + shape_str(plan.chunks) + "; the smallest budget that works is " +
                   std::to_string(need) + " MiB (or use fewer threads, or smaller storage chunks)");
}

}  // namespace b2lazy
