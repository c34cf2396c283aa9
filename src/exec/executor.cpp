#include "exec/executor.hpp"

#include <malloc.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>

#include "b2lazy/checked.hpp"
#include "b2lazy/error.hpp"
#include "core/big_alloc.hpp"
#include "core/strided_copy.hpp"
#include "exec/eval_state.hpp"
#include "exec/no_evaluation.hpp"
#include "exec/prefetcher.hpp"
#include "plan/chunking.hpp"
#include "plan/tasks.hpp"
#include "runtime/stage_results.hpp"
#include "runtime/thread_state.hpp"
#include "storage/b2nd_source.hpp"
#include "storage/b2nd_writer.hpp"
#include "storage/buffer_source.hpp"

namespace b2lazy {

namespace {

void eval_chunk(const Node& root, const ChunkGrid& grid, int64_t id, const Target& target, bool block_major,
                ThreadState& ts) {
  Box box = grid.chunk_box(id);
  Region region = Region::from_box(box);
  const size_t isz = itemsize(root.dtype());
  if (block_major) {  // whole padded chunks in Blosc2's block order, compressed as they are
    ScratchScope scope(ts.scratch);
    const int64_t n = target.writer->block_major_items();
    void* out = scope.alloc(n * isz);
    root.fill_block_major(id, n, out, ts);
    target.writer->write_block_major(id, out, ts);
    return;
  }
  if (target.writer) {
    ScratchScope scope(ts.scratch);
    void* buf = scope.alloc(box.size() * isz);
    root.pull(region, buf, ts);
    target.writer->write_chunk(id, buf, ts);
    return;
  }
  const Shape& shape = root.shape();
  Shape st = byte_strides(shape, isz);
  char* dst = static_cast<char*>(target.dense);
  for (size_t d = 0; d < shape.size(); ++d) dst += box.start[d] * st[d];
  if (is_contiguous_range(box, shape)) {
    root.pull(region, dst, ts);
    return;
  }
  ScratchScope scope(ts.scratch);
  void* buf = scope.alloc(box.size() * isz);
  root.pull(region, buf, ts);
  Shape bs = box.shape();
  Shape src_st = byte_strides(bs, isz);
  copy_strided(bs.size(), bs.data(), static_cast<const char*>(buf), src_st.data(), dst, st.data(), isz);
}

// Runs tasks [first, last) (each `per` consecutive chunks of `grid`): one task alone runs
// on the calling thread, free to fork inside a node; more go to the workers.
// `needed`, if given: the chunks to compute (the others are left as they are).
void run_tasks(const Node& root, const ChunkGrid& grid, int64_t per, int64_t first, int64_t last, const Target& target,
               bool block_major, EvalState& ev, const std::function<void(int64_t, int64_t)>& progress = {},
               const std::vector<bool>* needed = nullptr) {
  const int64_t nchunks = root.size() == 0 ? 0 : grid.nchunks();
  const int64_t lo = std::min(nchunks, first * per), hi = std::min(nchunks, last * per);
  const int64_t total = hi - lo;
  if (total <= 0) return;
  // The tasks' store reads fetched ahead of the workers (none unless a source opts in).
  PrefetchScope prefetch(ev, root, grid, per, first, last, needed);
  if (total == 1) {
    if (needed && !(*needed)[static_cast<size_t>(lo)]) return;
    ev.check_cancel();
    eval_chunk(root, grid, lo, target, block_major, ev.main());
    if (progress) progress(1, 1);
    return;
  }
  int64_t done = 0;
  std::mutex mu;
  ev.parallel_for(last - first, [&](int64_t task, int, ThreadState& ts) {
    const int64_t t = first + task;
    prefetch.started(t);
    for (int64_t id = t * per; id < std::min(nchunks, (t + 1) * per); ++id) {
      if (needed && !(*needed)[static_cast<size_t>(id)]) continue;
      ev.check_cancel();
      eval_chunk(root, grid, id, target, block_major, ts);
      if (!ev.carries.empty()) ev.chunk_done(id);
      if (progress) {  // counted under the lock, so the callback sees done rising
        std::lock_guard<std::mutex> g(mu);
        progress(++done, total);
      }
    }
  });
}

}  // namespace

std::string temp_b2nd_path(const std::string& what) {
  static std::atomic<int64_t> counter{0};
  return (std::filesystem::temp_directory_path() /
          (".b2lazy-" + what + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".b2nd"))
      .string();
}

std::unique_ptr<B2ndWriter> stage_writer(const PlanStage& s, const std::string& urlpath) {
  const NodePtr& sub = s.computed;
  Shape blocks = shrink_chunks(s.chunks, itemsize(sub->dtype()), s.node->kept_block_bytes());
  ComputeOptions o;
  o.cparams.codec = "lz4";
  o.urlpath = urlpath;
  return std::make_unique<B2ndWriter>(sub->shape(), sub->dtype(), s.chunks, blocks, o);
}

// Every chunk of the group, asked for or not (PlanStage::needed): the group is
// decompressed whole anyway.
void pull_group(const Node& root, const ChunkGroups& groups, int64_t k, const ChunkGrid& grid, ThreadState& ts,
                const std::function<void(int64_t id, const void* values)>& chunk) {
  const size_t isz = itemsize(root.dtype());
  const Box whole = groups.box(k);
  ScratchScope scope(ts.scratch);
  char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(whole.size()) * isz));
  root.pull(Region::from_box(whole), buf, ts);
  const Shape rs = byte_strides(whole.shape(), isz);
  for (int64_t id : groups.chunks(k)) {
    const Box box = grid.chunk_box(id);
    ScratchScope inner(ts.scratch);
    char* out = static_cast<char*>(inner.alloc(static_cast<size_t>(box.size()) * isz));
    const char* src = buf;
    for (size_t d = 0; d < rs.size(); ++d) src += (box.start[d] - whole.start[d]) * rs[d];
    const Shape bs = box.shape();
    const Shape cs = byte_strides(bs, isz);
    copy_strided(bs.size(), bs.data(), src, rs.data(), out, cs.data(), isz);
    chunk(id, out);
  }
}

namespace {

// Computes a stage (inputs' stages already computed) and keeps it where the plan says.
void run_stage(const PlanStage& s, EvalState& ev) {
  const NodePtr& sub = s.computed;
  const size_t isz = itemsize(sub->dtype());
  const ChunkGrid grid(sub->shape(), s.chunks);
  const int64_t per = chunks_per_task(*sub, grid, ev.workers());
  const int64_t ntasks = sub->size() == 0 ? 0 : ceil_div(grid.nchunks(), per);
  Materialized m;
  m.box = s.box;
  if (s.where == KeptIn::Dense) {
    const size_t bytes = static_cast<size_t>(sub->size()) * isz;
    auto buf = std::shared_ptr<unsigned char[]>(static_cast<unsigned char*>(alloc_big(bytes)), BigDeleter{});
    Target t;
    t.dense = buf.get();
    run_tasks(*sub, grid, per, 0, ntasks, t, false, ev, {}, s.needed.empty() ? nullptr : &s.needed);
    m.source = std::make_shared<BufferSource>(buf.get(), sub->dtype(), sub->shape(), Shape{},
                                              std::shared_ptr<const void>(buf, buf.get()), "cache");
  } else {
    const std::string path = s.where == KeptIn::Spilled ? temp_b2nd_path("spill") : std::string();
    std::unique_ptr<B2ndWriter> w = stage_writer(s, path);
    Target t;
    t.writer = w.get();
    if (!s.fill_group.empty() && sub->size()) {  // each task a group of chunks, pulled whole
      const ChunkGroups groups(grid, s.fill_group);
      ev.parallel_for(groups.count(), [&](int64_t k, int, ThreadState& ts) {
        ev.check_cancel();
        pull_group(*sub, groups, k, grid, ts, [&](int64_t id, const void* v) { t.writer->write_chunk(id, v, ts); });
      });
    } else {
      run_tasks(*sub, grid, per, 0, ntasks, t, false, ev, {}, s.needed.empty() ? nullptr : &s.needed);
    }
    m.source = w->finish_source("spill");
    if (!path.empty()) std::filesystem::remove(path);  // read through the open descriptor
  }
  if (s.source) ev.sources_kept++;
  else ev.cache_misses++;
  ev.materialized[s.node.get()] = std::move(m);
}

// The plan's stages into ev.materialized: read from the plan when an earlier execution
// kept them; computed and kept with the plan when `keep` (an execution of part of the
// tasks); otherwise computed for this execution only. An execution of every task (`all`)
// skips the stages its output chunks carry from one to the next (PlanStage::carried_by).
void run_stages(const Plan& plan, EvalState& ev, bool keep, bool all) {
  StageResults* kept = plan.stage_results.get();
  if (!kept || plan.stages.empty()) keep = false;
  std::unique_lock<std::mutex> lock;
  if (kept) {
    lock = std::unique_lock<std::mutex>(kept->mu);
    if (kept->ready) {
      ev.materialized = kept->results;
      ev.stages_reused = static_cast<int64_t>(plan.stages.size());
      return;
    }
    if (!keep) lock.unlock();
  }
  CarriedStages* carried = kept ? kept->carried.get() : nullptr;
  // Nodes an earlier plan of the same compute_all computed whole: read from there wherever
  // this plan pulls them (inside the box held), its own stages of them included.
  if (carried)
    for (const auto& [n, c] : *carried) ev.materialized[n] = c.m;
  for (const PlanStage& s : plan.stages) {
    ev.check_cancel();
    if (all && !keep && s.carried_by) {
      ev.carries[s.carried_by.get()] = std::make_unique<CarryBoard>(s.links);
      continue;
    }
    if (carried) {  // computed by an earlier plan of the same compute_all
      auto it = carried->find(s.node.get());
      if (it != carried->end() && it->second.holds(s.box)) {
        ev.stages_reused++;
        continue;
      }
    }
    run_stage(s, ev);
    ev.trim_scratch();
    if (carried && s.needed.empty())  // (a stage of only the chunks asked would lack others')
      (*carried)[s.node.get()] = CarriedStage{ev.materialized[s.node.get()], s.where == KeptIn::Spilled ? 0 : s.bytes};
  }
  if (keep) {
    kept->results = ev.materialized;
    kept->ready = true;
  }
}

}  // namespace

namespace {
Stats execute_plan_once(const Plan& plan, const Target& target, int64_t first_task, int64_t last_task, Context& ctx,
                        const EvalOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t ntasks = static_cast<int64_t>(plan.tasks.size());
  if (first_task < 0 || last_task > ntasks || first_task > last_task)
    throw IndexError("execute: tasks [" + std::to_string(first_task) + ", " + std::to_string(last_task) +
                     ") are not a range of the plan's " + std::to_string(ntasks) + " tasks");
  Stats stats;
  EvalState ev(ctx, plan.working_memory());
  ev.cancel = opts.cancel;
  // (a cache of no bytes still counts the stores' reads and serves reads in flight)
  ev.fetch_cache = std::make_unique<FetchCache>(plan.fetch_bytes);
  for (const PlanWindow& w : plan.windows)
    ev.windows[w.node.get()] =
        std::make_unique<BlockWindow>(w.blocks, static_cast<size_t>(w.node->window_block_bytes()));
  // Sibling reductions: the results folded ahead for members wait within an eighth of the budget.
  for (const PlanSiblings& g : plan.siblings) {
    std::vector<const Node*> members;
    for (const NodePtr& m : g.members) members.push_back(m.get());
    auto group = std::make_shared<SiblingGroup>(members, g.shared, plan.working_memory() / 8);
    for (const Node* m : members) ev.sibling_groups[m] = group;
  }
  const bool all = first_task == 0 && last_task == ntasks;
  if (first_task < last_task) {
    run_stages(plan, ev, !all, all);
    // What the stages' passes freed (codec buffers, compressed chunks in the workers'
    // malloc arenas, kept by glibc after its mmap threshold rose) goes back before the
    // tasks allocate theirs: else both count in the peak.
    if (!plan.stages.empty()) ::malloc_trim(0);
  }
  const bool bm = plan.block_major && target.writer && target.writer->block_major(plan.blocks);
  stats.block_major_path = bm;
  const ChunkGrid grid = plan.grid();
  int64_t chunks = 0;
  for (int64_t t = first_task; t < last_task; ++t) chunks += plan.tasks[t].last_chunk - plan.tasks[t].first_chunk;
  const int64_t per = ntasks ? plan.tasks[0].last_chunk - plan.tasks[0].first_chunk : 1;
  run_tasks(*plan.root, grid, per, first_task, last_task, target, bm, ev, opts.progress);
  stats.output_chunks = chunks;
  ev.collect(stats);
  stats.plan_visits = plan.plan_visits;
  if (target.writer) stats.bytes_written = target.writer->bytes_written();
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

// Gives back to the system what the evaluation freed (scratch arenas, kept stages, the
// codec's chunk buffers, in every thread's malloc arena). Else glibc keeps much of it for
// reuse (its mmap threshold rises after large frees), fragmented: three evaluations of
// `matmul(a, b)` in a row at 256 MiB grew RSS by 318 MiB where one grew it by 258 MiB.
struct TrimAfter {
  ~TrimAfter() { ::malloc_trim(0); }
};

// glibc's allocator, set once per process. By default it raises its mmap threshold (up to
// 32 MiB) after large frees, and its trim threshold with it: the codec's compressed chunks
// (0.5-4 MiB, malloc'd by C-Blosc2) then stayed in the workers' heaps beside the next
// pass's buffers (8192² products under 64 MiB grew 96-117 MiB, an earlier measurement).
// A 512 KiB threshold fixed that but mapped every chunk buffer afresh and, with the
// default 128 KiB trim threshold, gave each heap's top back after each free: every chunk
// read or written faulted its pages in again (qr of a 2 GiB tall matrix: 2.5 million page
// faults, 12-14 s of system time in 24 s). Fixed thresholds instead: buffers up to 32 MiB
// come from the heaps and are reused; free space is given back above 64 MiB, and wholly by
// the malloc_trim after each stage pass and evaluation. (That qr: 17 thousand faults, 20 s;
// 8192² products grew 61-249 MiB under 64 and 256 MiB budgets, within max_memory + 32.)
void fix_malloc_thresholds() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
    ::mallopt(M_TRIM_THRESHOLD, 64 << 20);
  });
}
}  // namespace

Stats execute_plan(const Plan& plan, const Target& target, int64_t first_task, int64_t last_task, Context& ctx,
                   const EvalOptions& opts) {
  NoEvaluation::check();  // (opening a python-blosc2 LazyExpr builds, never evaluates)
  fix_malloc_thresholds();
  TrimAfter trim;
  // Warm mappings are resident: under a small budget they would be a second peak.
  WarmLimit warm(plan.working_memory() / 8);
  return execute_plan_once(plan, target, first_task, last_task, ctx, opts);
}

}  // namespace b2lazy
