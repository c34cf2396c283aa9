#include "exec/executor.hpp"

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>

#include "b2lazy/error.hpp"
#include "core/strided_copy.hpp"
#include "exec/thread_pool.hpp"
#include "exec/thread_state.hpp"
#include "ops/elementwise/elementwise_node.hpp"
#include "ops/elementwise/program.hpp"
#include "storage/b2nd_source.hpp"
#include "storage/b2nd_writer.hpp"

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

// Is `box` one contiguous range of a C-order array of `shape`?
bool contiguous_in(const Box& box, const Shape& shape) {
  size_t d = 0;
  Shape s = box.shape();
  while (d < shape.size() && s[d] == 1) ++d;
  for (size_t e = d + 1; e < shape.size(); ++e)
    if (s[e] != shape[e]) return false;
  return true;
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
    root->fill(region, buf, ts);
    target.writer->write_cbuffer(id, buf, ts);
    return;
  }
  const Shape& shape = root->shape();
  Shape st = byte_strides(shape, isz);
  char* dst = static_cast<char*>(target.dense);
  for (size_t d = 0; d < shape.size(); ++d) dst += box.start[d] * st[d];
  if (contiguous_in(box, shape)) {
    root->fill(region, dst, ts);
    return;
  }
  ScratchScope scope(ts.scratch);
  void* buf = scope.alloc(box.size() * isz);
  root->fill(region, buf, ts);
  Shape bs = box.shape();
  Shape src_st = byte_strides(bs, isz);
  copy_strided(bs.size(), bs.data(), static_cast<const char*>(buf), src_st.data(), dst, st.data(), isz);
}

}  // namespace

Stats execute(const NodePtr& root, const ChunkGrid& grid, const Target& target, Context& ctx,
              const std::function<void(int64_t, int64_t)>& progress) {
  auto t0 = std::chrono::steady_clock::now();
  Stats stats;
  const int64_t nchunks = root->size() == 0 ? 0 : grid.nchunks();
  const Program* bm = block_major_program(root, target.writer);
  stats.block_major_path = bm != nullptr;

  const int nworkers = static_cast<int>(std::min<int64_t>(ctx.nthreads(), std::max<int64_t>(1, nchunks)));
  std::vector<std::unique_ptr<ThreadState>> states(nworkers);
  std::atomic<int64_t> next{0}, done{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mu;
  std::function<void(int)> work = [&](int w) {
    try {
      states[w] = std::make_unique<ThreadState>();
      states[w]->cancel = &failed;
      while (!failed.load(std::memory_order_relaxed)) {
        int64_t id = next.fetch_add(1);
        if (id >= nchunks) break;
        eval_chunk(root, grid, id, target, bm, *states[w]);
        int64_t d = done.fetch_add(1) + 1;
        if (progress) {
          std::lock_guard<std::mutex> g(mu);
          progress(d, nchunks);
        }
      }
    } catch (...) {
      std::lock_guard<std::mutex> g(mu);
      if (!error) error = std::current_exception();
      failed = true;
    }
  };
  ctx.pool().run(work, nworkers);
  if (error) std::rethrow_exception(error);

  stats.output_chunks = nchunks;
  for (auto& s : states) {
    if (!s) continue;
    stats.peak_scratch_bytes += static_cast<int64_t>(s->scratch.capacity());
    for (auto& [node, n] : s->decompressed) {
      stats.chunks_decompressed[node->source_name()] += n;
      stats.chunks_decompressed_total += n;
    }
  }
  if (target.writer) stats.bytes_written = target.writer->bytes_written();
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

}  // namespace b2lazy
