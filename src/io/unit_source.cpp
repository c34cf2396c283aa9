#include "io/unit_source.hpp"

#include <algorithm>
#include <cstring>

#include "core/saturating.hpp"
#include "core/strided_copy.hpp"
#include "exec/block_window.hpp"
#include "exec/eval_state.hpp"
#include "exec/scratch.hpp"
#include "exec/thread_state.hpp"

namespace b2lazy {

void UnitSource::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const size_t nd = ndim(), isz = itemsize(dtype());
  ScratchScope scope(ts.scratch);
  const Shape& ushape = read_grid_.chunks();
  // Through the plan's window of decoded units when it gave one (exec/block_window.hpp).
  BlockWindow* window = ts.eval && nd > 0 ? ts.eval->block_window(this) : nullptr;
  char* buf = window ? nullptr : static_cast<char*>(scope.alloc(static_cast<size_t>(prod(ushape)) * isz));
  if (nd == 0) {
    read_unit(0, buf, ts);
    std::memcpy(out, buf, isz);
    return;
  }
  const AxisSegments per_axis = split_region(region, ushape);
  const Shape out_strides = byte_strides(region.count, isz), ustrides = byte_strides(ushape, isz);
  std::vector<size_t> k(nd, 0);
  Shape coords(nd), count(nd), src_strides(nd);
  while (true) {
    for (size_t d = 0; d < nd; ++d) coords[d] = per_axis[d][k[d]].cell;
    const int64_t id = read_grid_.chunk_id(coords);
    const Box cbox = read_grid_.chunk_box(id);
    // A region that is exactly one whole stored chunk is decoded in place.
    if (!window && region.unit_steps() && region.bounds() == cbox && cbox.shape() == ushape) {
      read_unit(id, out, ts);
      return;
    }
    BlockWindow::Block kept;
    if (window) {
      kept = window->get(id, [&](void* dst) { read_unit(id, dst, ts); });
    } else {
      read_unit(id, buf, ts);
    }
    const char* src = kept ? kept.get() : buf;
    char* dst = static_cast<char*>(out);
    for (size_t d = 0; d < nd; ++d) {
      const AxisSegment& g = per_axis[d][k[d]];
      src += (region.start[d] + g.i_lo * region.step[d] - cbox.start[d]) * ustrides[d];
      dst += g.i_lo * out_strides[d];
      count[d] = g.i_hi - g.i_lo;
      src_strides[d] = ustrides[d] * region.step[d];
    }
    copy_strided(nd, count.data(), src, src_strides.data(), dst, out_strides.data(), isz);
    if (!next_segment(k, per_axis)) break;
  }
}

int64_t UnitSource::decompressed_bytes(const Region& region) const {
  if (region.size() == 0) return 0;
  const int64_t unit = sat_mul(prod(read_grid_.chunks()), static_cast<int64_t>(itemsize(dtype())));
  int64_t touched = 1;
  for (size_t d = 0; d < ndim(); ++d) {
    const int64_t lo = std::min(region.start[d], region.last(d)), hi = std::max(region.start[d], region.last(d));
    const int64_t c = read_grid_.chunks()[d];
    touched = sat_mul(touched, std::min(hi / c - lo / c + 1, region.count[d]));
  }
  return sat_mul(touched, unit);
}

int64_t UnitSource::window_block_bytes() const {
  return ndim() == 0 || size() == 0 ? 0 : sat_mul(prod(read_grid_.chunks()), static_cast<int64_t>(itemsize(dtype())));
}

void UnitSource::blocks_touched(const Region& region, std::vector<int64_t>& ids) const {
  if (region.size() == 0 || window_block_bytes() == 0) return;
  const size_t nd = ndim();
  const AxisSegments per_axis = split_region(region, read_grid_.chunks());
  std::vector<size_t> k(nd, 0);
  Shape coords(nd);
  while (true) {
    for (size_t d = 0; d < nd; ++d) coords[d] = per_axis[d][k[d]].cell;
    ids.push_back(read_grid_.chunk_id(coords));
    if (!next_segment(k, per_axis)) return;
  }
}

}  // namespace b2lazy
