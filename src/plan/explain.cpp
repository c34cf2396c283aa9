#include "plan/explain.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "exec/eval_state.hpp"
#include "ops/elementwise/elementwise_node.hpp"
#include "ops/elementwise/program.hpp"
#include "plan/chunking.hpp"
#include "plan/reuse.hpp"

namespace b2lazy {

namespace {
std::string mib(double bytes) {
  char buf[32];
  if (bytes >= 1024.0 * 1048576) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1048576));
  else if (bytes >= 1048576) std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576);
  else std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024);
  return buf;
}

double nbytes(const Node& n, const Region& r) { return static_cast<double>(r.size()) * static_cast<double>(itemsize(n.dtype())); }

std::string region_str(const Region& r) {
  std::string s = "[";
  for (size_t d = 0; d < r.ndim(); ++d) {
    if (d) s += ", ";
    s += std::to_string(std::min(r.start[d], r.last(d))) + ":" + std::to_string(std::max(r.start[d], r.last(d)) + 1);
    if (r.step[d] != 1) s += ":" + std::to_string(r.step[d]);
  }
  return s + "]";
}

// An edge of the graph: input `index` of `parent` (parent null: the output itself).
using Edge = std::pair<const Node*, size_t>;

// Walks the regions one output chunk asks of every node (Node::input_regions), stopping
// at the nodes computed once. `visit(edge, node, region, first)` sees each request;
// `first` is false when the chunk already asked that node for that region along another
// edge: the walk does not go below it again (as the planner, and as a fused program
// pulls each leaf once), so shared subexpressions cost one visit, not one per path.
using Visit = std::function<void(const Edge&, const Node&, const Region&, bool first)>;

class Propagation {
 public:
  Propagation(const std::set<const Node*>& stop, Visit visit) : stop_(stop), visit_(std::move(visit)) {}

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
      for (size_t i = k; i-- > 0;)  // first input first, as a recursive walk would
        todo.push_back({{s.node, i}, s.node->inputs()[i].get(), std::move(regions[i])});
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
  std::map<const Node*, std::vector<Region>> seen_;
};
}  // namespace

std::string explain_plan(const NodePtr& root, const ChunkGrid& grid, size_t max_memory, Context& ctx,
                         const Stats* measured) {
  std::ostringstream os;
  const int64_t nchunks = root->size() == 0 ? 0 : grid.nchunks();
  const double out_bytes = static_cast<double>(root->size()) * static_cast<double>(itemsize(root->dtype()));
  const Shape chunk = grid.chunks();
  const double chunk_bytes = static_cast<double>(prod(chunk)) * static_cast<double>(itemsize(root->dtype()));
  os << "plan: " << dtype_name(root->dtype()) << " " << shape_str(root->shape()) << " = " << mib(out_bytes) << " in "
     << nchunks << " output chunk" << (nchunks == 1 ? "" : "s") << " of " << shape_str(chunk) << " = "
     << mib(chunk_bytes) << ", " << ctx.nthreads() << " worker" << (ctx.nthreads() == 1 ? "" : "s") << "\n";

  // What is computed once: the planner's own decision (plan/reuse).
  EvalState ev(ctx, max_memory);
  std::vector<ReusedNode> reused;
  if (nchunks > 0) reused = find_reused(root, grid, ev);
  std::set<const Node*> stop;
  for (auto& r : reused) stop.insert(r.node.get());

  // A typical output chunk: the middle one. What it asks along each edge.
  std::map<Edge, std::pair<const Node*, Region>> asked;
  const int64_t typical = nchunks / 2;
  if (nchunks > 0)
    Propagation(stop, [&](const Edge& e, const Node& n, const Region& r, bool) {
      asked.emplace(e, std::make_pair(&n, r));
    }).run({nullptr, 0}, *root, Region::from_box(grid.chunk_box(typical)));

  os << "tree (what output chunk " << typical << " asks of each node):\n";
  std::set<const Node*> shown;
  std::function<void(const NodePtr&, const Edge&, int)> show = [&](const NodePtr& n, const Edge& edge, int depth) {
    const std::string pad(static_cast<size_t>(depth) * 2 + 2, ' ');
    const bool again = !shown.insert(n.get()).second;
    std::string ask;
    if (auto it = asked.find(edge); it != asked.end())
      ask = "  <- asked " + region_str(it->second.second) + " = " + mib(nbytes(*n, it->second.second));
    if (stop.count(n.get())) ask += "  [computed once]";
    if (auto* e = dynamic_cast<const ElementwiseNode*>(n.get())) {
      const Program& p = e->program();
      os << pad << "fused elementwise -> " << dtype_name(n->dtype()) << " " << shape_str(n->shape()) << " ("
         << p.code.size() << " instructions, " << p.leaves.size() << " inputs)" << ask << "\n";
      if (again) return;
      std::istringstream lines(p.to_string());
      for (std::string line; std::getline(lines, line);) os << pad << "  | " << line << "\n";
    } else {
      os << pad << n->describe() << ask << "\n";
      if (again) return;
    }
    for (size_t i = 0; i < n->inputs().size(); ++i) show(n->inputs()[i], {n.get(), i}, depth + 1);
  };
  show(root, {nullptr, 0}, 0);

  // Computed once: dense in memory or spilled compressed (executor's rule).
  os << "computed once (several output chunks need the same part):\n";
  double cached_bytes = 0;
  if (reused.empty()) os << "  nothing: each node is pulled only by the output chunks that need it\n";
  for (auto& r : reused) {
    const double b = static_cast<double>(r.box.size()) * static_cast<double>(itemsize(r.node->dtype()));
    const bool dense = b <= static_cast<double>(max_memory) / 4;
    if (dense) cached_bytes += b;
    os << "  " << r.node->describe() << ": box " << shape_str(r.box.shape()) << " = " << mib(b) << ", "
       << (dense ? "kept in memory (fits a quarter of the " + mib(static_cast<double>(max_memory)) + " budget)"
                 : "spilled compressed (over a quarter of the " + mib(static_cast<double>(max_memory)) + " budget)")
       << "\n";
  }

  // Estimated reads: every output chunk's requests down to the sources (sampled when
  // there are many chunks), plus each computed-once node's box, once.
  std::map<std::string, double> reads;
  Propagation count_sources(stop, [&](const Edge&, const Node& n, const Region& r, bool first) {
    if (first && n.inputs().empty() && !n.source_name().empty()) reads[n.source_name()] += nbytes(n, r);
  });
  const int64_t samples = std::min<int64_t>(nchunks, 4096);
  double typical_bytes = 0;
  for (int64_t k = 0; k < samples; ++k) {
    const int64_t id = samples == nchunks ? k : static_cast<int64_t>(static_cast<__int128>(k) * nchunks / samples);
    count_sources.run({nullptr, 0}, *root, Region::from_box(grid.chunk_box(id)));
  }
  if (samples && samples < nchunks)
    for (auto& [name, b] : reads) b *= static_cast<double>(nchunks) / static_cast<double>(samples);
  for (auto& r : reused) {
    const Region box = Region::from_box(r.box);
    const auto regions = r.node->input_regions(box);
    for (size_t i = 0; i < regions.size() && i < r.node->inputs().size(); ++i)
      count_sources.run({r.node.get(), i}, *r.node->inputs()[i], regions[i]);
  }
  for (auto& [e, nr] : asked) typical_bytes += nbytes(*nr.first, nr.second);
  const double kept = has_contraction(*root) ? 16.0 * 1048576 : 0;
  const double peak = ctx.nthreads() * (typical_bytes + chunk_bytes + kept) + cached_bytes;

  os << "estimates:\n";
  os << "  read (decompressed):";
  if (reads.empty()) os << " nothing from storage";
  for (auto& [name, b] : reads) os << "\n    " << name << ": " << mib(b);
  os << "\n  written: " << mib(out_bytes) << " before compression\n";
  os << "  peak memory: at most about " << mib(peak) << " (" << ctx.nthreads() << " workers x (buffers of a typical chunk "
     << mib(typical_bytes) << " + output chunk" << (kept > 0 ? " + 16 MiB kept band" : "") << ")"
     << (cached_bytes > 0 ? " + " + mib(cached_bytes) + " computed once" : "") << ")\n";

  if (measured) {
    const Stats& s = *measured;
    os << "measured:\n  read (decompressed):";
    if (s.bytes_decompressed.empty()) os << " nothing from storage";
    for (auto& [name, b] : s.bytes_decompressed) {
      os << "\n    " << name << ": " << mib(static_cast<double>(b));
      auto c = s.chunks_decompressed.find(name);
      auto d = s.distinct_chunks_decompressed.find(name);
      auto m = s.max_decompressions_per_chunk.find(name);
      if (c != s.chunks_decompressed.end() && d != s.distinct_chunks_decompressed.end() &&
          m != s.max_decompressions_per_chunk.end())
        os << " (" << c->second << " chunk reads, " << d->second << " distinct, at most " << m->second << " of one)";
    }
    os << "\n  written: " << mib(static_cast<double>(s.bytes_written)) << " compressed, " << s.output_chunks
       << " output chunks" << (s.block_major_path ? " (block-major path)" : "") << "\n";
    os << "  computed once: " << s.cache_misses << " node" << (s.cache_misses == 1 ? "" : "s") << ", " << s.cache_hits
       << " reads of them\n";
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.3f", s.seconds);
    os << "  peak scratch: " << mib(static_cast<double>(s.peak_scratch_bytes)) << "; " << secs << " s\n";
  }
  return os.str();
}

}  // namespace b2lazy
