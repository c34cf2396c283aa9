// rechunk: Dask's chunk spec resolved against the array's shape and current chunks.
#include <algorithm>

#include "b2lazy/error.hpp"
#include "b2lazy/pad.hpp"
#include "ops/shape/rechunk_node.hpp"
#include "plan/chunking.hpp"

namespace b2lazy {

namespace {
constexpr size_t kAutoChunkBytes = size_t(8) << 20;  // 'auto' axes: chunks of about this size
}

ChunkSpec chunk_spec_of_blocks(const std::vector<int64_t>& blocks, int64_t axis_len, size_t axis) {
  const std::string where = "rechunk: block lengths for axis " + std::to_string(axis);
  int64_t total = 0;
  for (int64_t b : blocks) {
    if (b < 0 || (b == 0 && axis_len != 0)) throw ValueError(where + " must be positive");
    total = checked_add(total, b, "rechunk");
  }
  if (total != axis_len)
    throw ValueError(where + " add up to " + std::to_string(total) + ", the axis has length " +
                     std::to_string(axis_len));
  if (blocks.empty()) return ChunkSpec::of(1);
  for (size_t i = 0; i + 1 < blocks.size(); ++i)
    if (blocks[i] != blocks[0] || blocks.back() > blocks[0])
      throw ValueError(where +
                       " are irregular; b2lazy's chunks are one length per axis (all blocks equal but a "
                       "shorter last one)");
  return ChunkSpec::of(std::max<int64_t>(blocks[0], 1));
}

Shape rechunk_chunks(const Array& x, const std::vector<ChunkSpec>& spec_in) {
  const size_t nd = x.ndim();
  if (spec_in.size() != nd && spec_in.size() != 1)
    throw ValueError("rechunk: chunks name " + std::to_string(spec_in.size()) + " axes; the array has " +
                     std::to_string(nd) + " (shape " + shape_str(x.shape()) + ")");
  const Shape& shape = x.shape();
  const Shape current = preferred_chunks_of(x.node());
  Shape chunks(nd, 0);
  std::vector<size_t> autos;
  for (size_t d = 0; d < nd; ++d) {
    const ChunkSpec& s = spec_in.size() == 1 ? spec_in[0] : spec_in[d];
    const int64_t n = shape[d];
    switch (s.kind) {
      case ChunkSpec::Kind::Length:
        if (s.length == -1) {
          chunks[d] = n;
          break;
        }
        if (s.length <= 0)
          throw ValueError("rechunk: chunk length " + std::to_string(s.length) + " for axis " + std::to_string(d) +
                           " must be positive (or -1 for the whole axis)");
        chunks[d] = std::min(s.length, n);
        break;
      case ChunkSpec::Kind::Whole: chunks[d] = n; break;
      case ChunkSpec::Kind::Keep: chunks[d] = current.size() == nd ? std::min(current[d], n) : n; break;
      case ChunkSpec::Kind::Auto: chunks[d] = n, autos.push_back(d); break;
    }
    chunks[d] = std::max<int64_t>(chunks[d], 1);
  }
  // 'auto' axes halved, the longest first, until a chunk is about kAutoChunkBytes.
  const int64_t isz = static_cast<int64_t>(itemsize(x.dtype()));
  for (;;) {
    if (autos.empty() || static_cast<double>(prod(chunks)) * isz <= static_cast<double>(kAutoChunkBytes)) break;
    size_t best = autos[0];
    for (size_t d : autos)
      if (chunks[d] > chunks[best]) best = d;
    if (chunks[best] <= 1) break;
    chunks[best] = (chunks[best] + 1) / 2;
  }
  return chunks;
}

Array rechunk(const Array& x, const std::vector<ChunkSpec>& spec) {
  return Array(std::make_shared<RechunkNode>(x.node(), rechunk_chunks(x, spec)));
}

Array rechunk(const Array& x, const Shape& chunks) {
  std::vector<ChunkSpec> spec;
  for (int64_t c : chunks) spec.push_back(ChunkSpec::of(c));
  return rechunk(x, spec);
}

}  // namespace b2lazy
