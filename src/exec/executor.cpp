#include "exec/executor.hpp"

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>

#include "b2lazy/checked.hpp"
#include "b2lazy/error.hpp"
#include "core/strided_copy.hpp"
#include "exec/eval_state.hpp"
#include "exec/thread_pool.hpp"
#include "exec/thread_state.hpp"
#include "ops/elementwise/elementwise_node.hpp"
#include "ops/elementwise/program.hpp"
#include "ops/shape/slice_node.hpp"
#include "plan/chunking.hpp"
#include "plan/reuse.hpp"
#include "storage/b2nd_source.hpp"
#include "storage/b2nd_writer.hpp"
#include "storage/buffer_source.hpp"

namespace b2lazy {

namespace {

// Elementwise over b2nd sources stored exactly like the output (same shape, chunks and
// blocks): work on the decompressed block-major chunks as they are and compress the
// result as it is — no reordering, as elementwise work does not care about order.
const Program* block_major_program(const NodePtr& root, const B2ndWriter* w) {
  auto* e = dynamic_cast<const ElementwiseNode*>(root.get());
  if (!e || !w) return nullptr;
  const Program& p = e->program();
  if (p.leaves.empty()) return nullptr;
  for (auto& leaf : p.leaves) {
    auto* s = dynamic_cast<const B2ndSource*>(leaf.get());
    if (!s || s->shape() != root->shape() || s->storage_grid()->chunks() != w->grid().chunks() ||
        s->blocks() != w->blocks() || s->extchunk() != w->extchunk())
      return nullptr;
  }
  return &p;
}

void eval_chunk(const NodePtr& root, const ChunkGrid& grid, int64_t id, const Target& target,
                const Program* bm, ThreadState& ts) {
  Box box = grid.chunk_box(id);
  Region region = Region::from_box(box);
  const size_t isz = itemsize(root->dtype());
  if (bm) {
    ScratchScope scope(ts.scratch);
    int64_t n = prod(target.writer->extchunk());
    std::vector<const void*> data(bm->leaves.size());
    for (size_t i = 0; i < bm->leaves.size(); ++i) {
      auto* s = static_cast<const B2ndSource*>(bm->leaves[i].get());
      void* buf = scope.alloc(n * itemsize(s->dtype()));
      s->read_chunk(id, buf, ts);
      data[i] = buf;
    }
    void* out = scope.alloc(n * isz);
    bm->run(data.data(), out, n, scope);
    target.writer->write_blockmajor(id, out, ts);
    return;
  }
  if (target.writer) {
    ScratchScope scope(ts.scratch);
    void* buf = scope.alloc(box.size() * isz);
    root->pull(region, buf, ts);
    target.writer->write_cbuffer(id, buf, ts);
    return;
  }
  const Shape& shape = root->shape();
  Shape st = byte_strides(shape, isz);
  char* dst = static_cast<char*>(target.dense);
  for (size_t d = 0; d < shape.size(); ++d) dst += box.start[d] * st[d];
  if (is_contiguous_range(box, shape)) {
    root->pull(region, dst, ts);
    return;
  }
  ScratchScope scope(ts.scratch);
  void* buf = scope.alloc(box.size() * isz);
  root->pull(region, buf, ts);
  Shape bs = box.shape();
  Shape src_st = byte_strides(bs, isz);
  copy_strided(bs.size(), bs.data(), static_cast<const char*>(buf), src_st.data(), dst, st.data(), isz);
}

void materialize_reused(const NodePtr& root, const ChunkGrid& grid, EvalState& ev);

// Compute a reused node once (the part of it the output needs) and keep it: dense when
// it fits a quarter of the budget, else compressed in memory. Its own subgraph is
// planned again on its grid only when something there is still to find.
void materialize(const ReusedNode& r, EvalState& ev) {
  NodePtr sub = r.node;
  if (r.box != Box::whole(r.node->shape())) {
    std::vector<SliceNode::Axis> axes;
    std::vector<int> out_to_in;
    for (size_t d = 0; d < r.box.ndim(); ++d) {
      axes.push_back({false, r.box.start[d], 1, r.box.stop[d] - r.box.start[d]});
      out_to_in.push_back(static_cast<int>(d));
    }
    sub = std::make_shared<SliceNode>(r.node, axes, out_to_in, r.box.shape());
  }
  bool plan_inside = false;
  for (auto& in : r.node->inputs()) plan_inside = plan_inside || needs_planning(*in, ev);
  const size_t isz = itemsize(sub->dtype());
  const size_t bytes = static_cast<size_t>(sub->size()) * isz;
  size_t target_bytes = chunk_target_bytes(*sub, ev.max_memory, ev.ctx.nthreads());
  Materialized m;
  m.box = r.box;
  if (bytes <= ev.max_memory / 4) {
    auto buf = std::shared_ptr<unsigned char[]>(new unsigned char[std::max<size_t>(bytes, 1)]);
    ChunkGrid g(sub->shape(), contiguous_chunks(sub->shape(), isz, target_bytes));
    if (plan_inside) materialize_reused(sub, g, ev);
    Target t;
    t.dense = buf.get();
    run_pass(sub, g, t, ev);
    m.source = std::make_shared<BufferSource>(buf.get(), sub->dtype(), sub->shape(), Shape{},
                                              std::shared_ptr<const void>(buf, buf.get()), "cache");
  } else {  // spill: a compressed temporary in memory
    Shape chunks = balanced_chunks(sub->shape(), isz, target_bytes);
    Shape blocks = balanced_chunks(chunks, isz, size_t(256) << 10);
    ComputeOptions o;
    o.cparams.codec = "lz4";
    B2ndWriter w(sub->shape(), sub->dtype(), chunks, blocks, o);
    if (plan_inside) materialize_reused(sub, w.grid(), ev);
    Target t;
    t.writer = &w;
    run_pass(sub, w.grid(), t, ev);
    m.source = w.finish("spill");
  }
  ev.cache_misses++;
  ev.materialized[r.node.get()] = std::move(m);
}

// The planner lists reused nodes consumers first; computing them inputs first lets each
// one read the nodes below it from the cache, so none is computed twice.
void materialize_reused(const NodePtr& root, const ChunkGrid& grid, EvalState& ev) {
  const std::vector<ReusedNode> reused = find_reused(root, grid, ev);
  for (auto it = reused.rbegin(); it != reused.rend(); ++it)
    if (!ev.materialized.count(it->node.get())) materialize(*it, ev);
}

}  // namespace

void run_pass(const NodePtr& root, const ChunkGrid& grid, const Target& target, EvalState& ev,
              const std::function<void(int64_t, int64_t)>& progress) {
  const int64_t nchunks = root->size() == 0 ? 0 : grid.nchunks();
  const Program* bm = block_major_program(root, target.writer);
  if (nchunks <= 1) {  // on this thread, free to fork inside a node
    for (int64_t id = 0; id < nchunks; ++id) {
      ev.check_cancel();
      eval_chunk(root, grid, id, target, bm, ev.main());
      if (progress) progress(id + 1, nchunks);
    }
    return;
  }
  // With a contraction, one task is a row of chunks (all but the last grid axis fixed):
  // its tiles share the contraction's kept band of an expensive operand.
  int64_t per_task = 1;
  if (!grid.grid().empty() && has_contraction(*root)) {
    const int64_t row = grid.grid().back();
    if (row > 1 && nchunks / row >= ev.nworkers()) per_task = row;
  }
  int64_t done = 0;
  std::mutex mu;
  ev.parallel_for(ceil_div(nchunks, per_task), [&](int64_t task, int, ThreadState& ts) {
    for (int64_t id = task * per_task; id < std::min(nchunks, (task + 1) * per_task); ++id) {
      ev.check_cancel();
      eval_chunk(root, grid, id, target, bm, ts);
      if (progress) {  // counted under the lock, so the callback sees done rising
        std::lock_guard<std::mutex> g(mu);
        progress(++done, nchunks);
      }
    }
  });
}

Stats execute(const NodePtr& root, const ChunkGrid& grid, const Target& target, Context& ctx,
              const EvalOptions& opts) {
  auto t0 = std::chrono::steady_clock::now();
  Stats stats;
  EvalState ev(ctx, opts.max_memory);
  ev.cancel = opts.cancel;
  materialize_reused(root, grid, ev);
  stats.block_major_path = block_major_program(root, target.writer) != nullptr;
  run_pass(root, grid, target, ev, opts.progress);
  stats.output_chunks = root->size() == 0 ? 0 : grid.nchunks();
  ev.collect(stats);
  if (target.writer) stats.bytes_written = target.writer->bytes_written();
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

}  // namespace b2lazy
