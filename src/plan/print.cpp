// Plan::to_string: what explain() prints — the plan's own decisions, never re-derived.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "b2lazy/checked.hpp"
#include "b2lazy/plan.hpp"
#include "plan/format.hpp"
#include "plan/propagate.hpp"

namespace b2lazy {

namespace {

double nbytes(const Node& n, const Region& r) {
  return static_cast<double>(r.size()) * static_cast<double>(itemsize(n.dtype()));
}

std::string region_str(const Region& r) {
  std::string s = "[";
  for (size_t d = 0; d < r.ndim(); ++d) {
    if (d) s += ", ";
    s += std::to_string(std::min(r.start[d], r.last(d))) + ":" + std::to_string(std::max(r.start[d], r.last(d)) + 1);
    if (r.step[d] != 1) s += ":" + std::to_string(r.step[d]);
  }
  return s + "]";
}

void print_measured(std::ostringstream& os, const Stats& s) {
  os << "measured:\n  read (decompressed):";
  if (s.bytes_decompressed.empty()) os << " nothing from storage";
  for (auto& [name, b] : s.bytes_decompressed) {
    os << "\n    " << name << ": " << format_bytes(b);
    auto c = s.chunks_decompressed.find(name);
    auto d = s.distinct_chunks_decompressed.find(name);
    auto m = s.max_decompressions_per_chunk.find(name);
    if (c != s.chunks_decompressed.end() && d != s.distinct_chunks_decompressed.end() &&
        m != s.max_decompressions_per_chunk.end())
      os << " (" << c->second << " chunk reads, " << d->second << " distinct, at most " << m->second << " of one)";
  }
  os << "\n  written: " << format_bytes(s.bytes_written) << " compressed, " << s.output_chunks << " output chunks"
     << (s.block_major_path ? " (block-major path)" : "") << "\n";
  os << "  computed once: " << s.cache_misses << " node" << (s.cache_misses == 1 ? "" : "s") << ", " << s.sources_kept
     << " source" << (s.sources_kept == 1 ? "" : "s") << " kept, " << s.cache_hits << " reads of them";
  if (s.window_hits) os << "; " << s.window_hits << " blocks read from a window of decompressed blocks";
  if (s.stages_reused)
    os << " (" << s.stages_reused << " stage" << (s.stages_reused == 1 ? "" : "s")
       << " read from an earlier execution)";
  os << "\n";
  if (s.store_requests || s.prefetch_hits || s.prefetch_misses) {
    char wait[64];
    std::snprintf(wait, sizeof wait, "%.3f s waited for responses, %.3f s for reads fetched ahead",
                  s.store_wait_seconds, s.prefetch_wait_seconds);
    os << "  stores: " << s.store_requests << " requests, " << format_bytes(s.store_bytes) << ", " << s.store_retries
       << " retries, " << wait << "; reads fetched ahead " << s.prefetch_reads << ", found " << s.prefetch_hits
       << ", read by their task " << s.prefetch_misses << "\n";
  }
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.3f", s.seconds);
  os << "  peak scratch: " << format_bytes(s.peak_scratch_bytes) << " (projected peak "
     << format_bytes(s.projected_peak_bytes) << "); " << secs << " s\n";
}

}  // namespace

std::string Plan::to_string(const Stats* measured, int nthreads) const {
  std::ostringstream os;
  const int workers = nthreads > 0 ? nthreads : nworkers;
  const int64_t isz = static_cast<int64_t>(itemsize(root->dtype()));
  const int64_t out_bytes = root->size() * isz;
  os << "plan: " << dtype_name(root->dtype()) << " " << shape_str(root->shape()) << " = " << format_bytes(out_bytes)
     << " in " << nchunks << " output chunk" << (nchunks == 1 ? "" : "s") << " of " << shape_str(chunks) << " = "
     << format_bytes(prod(chunks) * isz) << ", " << workers << " worker" << (workers == 1 ? "" : "s") << ", max_memory "
     << format_bytes(static_cast<double>(options.max_memory)) << "\n";
  os << "passes:\n";
  for (auto& line : passes) os << "  " << line << "\n";

  std::set<const Node*> stop;
  for (auto& s : stages) stop.insert(s.node.get());
  // A typical output chunk: the middle one. What it asks along each edge.
  std::map<Edge, std::pair<const Node*, Region>> asked;
  const int64_t typical = nchunks / 2;
  if (nchunks > 0)
    Propagation(stop, [&](const Edge& e, const Node& n, const Region& r, bool) {
      asked.emplace(e, std::make_pair(&n, r));
    }).run({nullptr, 0}, *root, Region::from_box(grid().chunk_box(typical)));

  os << "tree (what output chunk " << typical << " asks of each node):\n";
  std::set<const Node*> shown;
  std::function<void(const NodePtr&, const Edge&, int)> show = [&](const NodePtr& n, const Edge& edge, int depth) {
    const std::string pad(static_cast<size_t>(depth) * 2 + 2, ' ');
    const bool again = !shown.insert(n.get()).second;
    std::string ask;
    if (auto it = asked.find(edge); it != asked.end())
      ask = it->second.second.size() == 0  // an input this chunk does not read (e.g. a GramNode's mirror)
                ? std::string("  <- asked nothing")
                : "  <- asked " + region_str(it->second.second) + " = " + format_bytes(nbytes(*n, it->second.second));
    if (stop.count(n.get())) ask += "  [computed once]";
    os << pad << n->describe() << ask << "\n";
    if (again) return;
    std::istringstream lines(n->listing());
    for (std::string line; std::getline(lines, line);) os << pad << "  | " << line << "\n";
    for (size_t i = 0; i < n->inputs().size(); ++i) show(n->inputs()[i], {n.get(), i}, depth + 1);
  };
  show(root, {nullptr, 0}, 0);

  os << "computed once (several output chunks need the same part):\n";
  if (stages.empty()) os << "  nothing: each node is pulled only by the output chunks that need it\n";
  for (auto& s : stages) {
    os << "  " << s.node->describe() << ": box " << shape_str(s.box.shape()) << " = " << format_bytes(s.bytes) << ", "
       << kept_in_name(s.where) << " in chunks " << shape_str(s.chunks) << " (the tasks would "
       << (s.source ? "decompress " : "compute ") << format_bytes(s.pulled_bytes)
       << " of it, once: " << format_bytes(s.once_bytes) << "); computing it holds " << format_bytes(s.memory.per_task)
       << (s.memory.threads ? " per worker" : " on the calling thread")
       << (s.memory.forked ? ", forked to the workers" : "") << "\n";
    if (!s.fill_group.empty())
      os << "    filled " << shape_str(s.fill_group)
         << " chunks at a time (each of its storage chunks decompressed once)\n";
    if (!s.needed.empty()) {
      int64_t n = 0;
      for (bool b : s.needed) n += b;
      os << "    computes " << n << " of its " << s.needed.size() << " chunks: the others are not asked for\n";
    }
    if (s.carried_by)
      os << "    not computed when every task runs in order in one process: " << s.carried_by->kind()
         << " passes its carry from output chunk to output chunk (" << s.links->producer.size() << " links)\n";
  }
  if (!windows.empty()) os << "read through a window of decompressed blocks (pulled again in turn by the tasks):\n";
  for (const PlanWindow& w : windows)
    os << "  " << w.node->describe() << ": its last " << w.blocks << " decompressed blocks, at most "
       << format_bytes(w.bytes) << " (the tasks would decompress " << format_bytes(w.pulled_bytes)
       << " of it, through the window: " << format_bytes(w.read_bytes) << ")\n";
  int64_t most = 0, most_src = 0;
  for (auto& t : tasks) most = std::max(most, t.projected_bytes), most_src = std::max(most_src, t.source_bytes);
  const int64_t per = tasks.empty() ? 0 : tasks[0].last_chunk - tasks[0].first_chunk;
  os << "tasks: " << tasks.size() << " of " << per << " output chunk" << (per == 1 ? "" : "s")
     << ", each projected at most " << format_bytes(most) << " and " << format_bytes(most_src) << " decompressed\n";

  os << "estimates:\n";
  os << "  read (decompressed):";
  if (source_bytes.empty()) os << " nothing from storage";
  for (auto& [name, b] : source_bytes) os << "\n    " << name << ": " << format_bytes(b);
  if (kept_read_bytes > 0) os << "\n    copies kept compressed or spilled: " << format_bytes(kept_read_bytes);
  os << "\n  written: " << format_bytes(out_bytes) << " before compression\n";
  os << "  peak memory: at most about " << memory_model << ", max_memory "
     << format_bytes(static_cast<double>(options.max_memory)) << "\n";
  if (measured) print_measured(os, *measured);
  return os.str();
}

}  // namespace b2lazy
