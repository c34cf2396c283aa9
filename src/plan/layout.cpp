#include "plan/layout.hpp"

#include "b2lazy/checked.hpp"
#include "b2lazy/driver.hpp"
#include "b2lazy/error.hpp"
#include "plan/chunking.hpp"
#include "plan/follow_layout.hpp"
#include "plan/memory.hpp"

namespace b2lazy {

Shape checked_chunks(const Shape& shape, const Shape& chunks, const char* what, const char* noun) {
  if (chunks.empty()) return {};
  const std::string named = std::string(what) + ": " + noun;
  if (chunks.size() != shape.size())
    throw ValueError(named + " " + shape_str(chunks) + " do not match shape " + shape_str(shape));
  for (auto c : chunks)
    if (c <= 0) throw ValueError(named + " " + shape_str(chunks) + " must be positive");
  checked_prod(chunks, named);
  return chunks;
}

namespace {
// Does compute() write `urlpath` (empty: in memory) through the b2nd driver? (An
// unresolvable URL is reported by the sink, later.)
bool writes_b2nd(const std::string& urlpath) {
  if (urlpath.empty()) return true;
  try {
    return resolve_url(urlpath, true).driver->name == "b2nd";
  } catch (const Error&) {
    return false;
  }
}
}  // namespace

std::pair<Shape, Shape> output_layout(const NodePtr& node, const ComputeOptions& opts, PlanTarget target,
                                      int nthreads) {
  const Shape& shape = node->shape();
  const DType dt = node->dtype();
  if (target == PlanTarget::Dense) {
    Shape chunks = preferred_chunks_of(node);
    if (chunks.empty())
      chunks = balanced_ranges(
          node, contiguous_chunks(shape, itemsize(dt), chunk_target_bytes(*node, opts.max_memory, nthreads)), nthreads);
    for (auto& c : chunks) c = std::max<int64_t>(c, 1);
    return {chunks, {}};
  }
  // A sharded Zarr output is written a shard at a time: the shards are the output chunks.
  Shape chunks = opts.shards.empty() ? checked_chunks(shape, opts.chunks, "compute")
                                     : checked_chunks(shape, opts.shards, "compute", "shards");
  Shape blocks = opts.blocks;
  if (chunks.empty()) {
    const Node* src = aligned_storage_source(node);
    // A product's own tiles, not a stored operand's chunks: column strips (n, 64) of `b`
    // in `matmul(a, b) + b` made each 2 MiB strip read all of `a` again (0.09x NumPy at a
    // 256 MiB budget, 71 GiB decompressed from its kept copy), row strips re-read `b`.
    // Over the budget, the plan halves them (build_plan).
    const Shape tiles = product_chunks_of(node);
    if (!tiles.empty()) {
      chunks = tiles;
    } else if (src && !src->storage_blocks().empty()) {  // a stored operand: its chunks and blocks
      chunks = src->storage_grid()->chunks();
      if (blocks.empty()) blocks = src->storage_blocks();
      // Capped: a stored operand's chunks can be large (python-blosc2 stores 4096 x 4096
      // float64 in 64 MiB chunks), and each worker holds several output-chunk-sized
      // buffers (operands, result, the writer's). 8 MiB keeps the per-chunk overhead small;
      // row-sharing nodes (products) add panels and bands per worker: 4 MiB. Halving
      // leading axes keeps a chunk's reads one C-order range of the operand's chunk.
      const size_t cap = has_row_sharing(*node) ? size_t(4) << 20 : size_t(8) << 20;
      Shape small = shrink_chunks(chunks, itemsize(dt), cap);
      if (small != chunks) {
        bool fits = true;
        for (size_t d = 0; d < small.size(); ++d) fits = fits && blocks[d] <= small[d];
        if (!fits && opts.blocks.empty()) blocks.clear();  // the user's blocks are kept (and checked)
        chunks = small;
      }
    } else if (Shape pc = preferred_chunks_of(node); !pc.empty()) {
      chunks = pc;
    } else {
      chunks = balanced_chunks(shape, itemsize(dt), chunk_target_bytes(*node, opts.max_memory, nthreads));
    }
  }
  // An operand stored by python-blosc2 with an axis of length 0 has chunk and block
  // extent 0 there; b2lazy writes such axes with extent 1 (still no chunks).
  for (auto& c : chunks) c = std::max<int64_t>(c, 1);
  for (auto& b : blocks) b = std::max<int64_t>(b, 1);
  // Blocks of whole trailing axes, as python-blosc2 picks them: a chunk is then compressed
  // in its own C order, without a block-major copy of it beside it (a 16 MiB product
  // band held 16 MiB more per worker).
  if (blocks.empty()) blocks = fitted_blocks(chunks, itemsize(dt));
  blocks = checked_chunks(shape, blocks, "compute", "blocks");
  // A b2nd output's chunk limit, checked before the budget check (the b2nd writer checks
  // it too): a chunk this large is no memory question.
  if (prod(chunks) > ((int64_t(1) << 31) - 64) / static_cast<int64_t>(itemsize(dt)) &&  // (no product to overflow)
      writes_b2nd(opts.urlpath))
    throw ValueError("compute: chunks " + shape_str(chunks) + " exceed Blosc2's 2 GiB chunk limit");
  return {chunks, blocks};
}

}  // namespace b2lazy
