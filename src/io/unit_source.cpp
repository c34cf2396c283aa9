#include "io/unit_source.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/saturating.hpp"
#include "core/strided_copy.hpp"
#include "exec/block_window.hpp"
#include "exec/eval_state.hpp"
#include "exec/scratch.hpp"
#include "exec/thread_state.hpp"

namespace b2lazy {

namespace {

// The piece of a unit at `lo` of `count` items per axis, as a run of the unit's C order
// (`ushape`): its first item and length; -1 when it is not one run.
int64_t c_order_run(const Shape& lo, const Shape& count, const Shape& ushape) {
  const size_t nd = ushape.size();
  size_t d = 0;
  while (d < nd && count[d] == 1) ++d;  // leading axes of one item
  for (size_t e = d + 1; e < nd; ++e)
    if (count[e] != ushape[e]) return -1;  // after the first wider axis, whole axes only
  int64_t first = 0;
  for (size_t e = 0; e < nd; ++e) first = first * ushape[e] + lo[e];
  return first;
}

// Segment `k` of `region` cut by units of `ushape` (split_region) as a run of its unit's
// C order: the run's first item, -1 when it is not one run (or steps over items); its
// extent per axis into `count`.
int64_t segment_run(const Region& region, const AxisSegments& per_axis, const std::vector<size_t>& k,
                    const Shape& ushape, Shape& count) {
  const size_t nd = ushape.size();
  Shape lo(nd);
  bool unit_step = true;
  for (size_t d = 0; d < nd; ++d) {
    const AxisSegment& g = per_axis[d][k[d]];
    lo[d] = region.start[d] + g.i_lo * region.step[d] - g.cell * ushape[d];
    count[d] = g.i_hi - g.i_lo;
    unit_step = unit_step && (region.step[d] == 1 || count[d] == 1);
  }
  return unit_step ? c_order_run(lo, count, ushape) : -1;
}

}  // namespace

void UnitSource::read_unit_range(int64_t, int64_t, int64_t, void*, ThreadState&) const {
  throw std::logic_error("read_unit_range of a source without ranges");
}

void UnitSource::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const size_t nd = ndim(), isz = itemsize(dtype());
  ScratchScope scope(ts.scratch);
  const Shape& ushape = read_grid_.chunks();
  // Through the plan's window of decoded units when it gave one (exec/block_window.hpp).
  BlockWindow* window = ts.eval && nd > 0 ? ts.eval->block_window(this) : nullptr;
  char* buf = nullptr;  // one unit decoded whole, allocated when first needed
  auto unit_buffer = [&] {
    if (!buf) buf = static_cast<char*>(scope.alloc(static_cast<size_t>(prod(ushape)) * isz));
    return buf;
  };
  if (nd == 0) {
    read_unit(0, unit_buffer(), ts);
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
    // A run of the unit's C order, decoded alone when the format can (only the blocks it
    // touches), straight into `out` when it is all of the region.
    if (!window && unit_ranges()) {
      const int64_t first = segment_run(region, per_axis, k, ushape, count);
      if (first >= 0) {
        const int64_t n = prod(count);
        if (count == region.count) {  // the whole region: one run, C order as `out`
          read_unit_range(id, first, n, out, ts);
          return;
        }
        ScratchScope piece(ts.scratch);
        char* run = static_cast<char*>(piece.alloc(static_cast<size_t>(n) * isz));
        read_unit_range(id, first, n, run, ts);
        char* dst = static_cast<char*>(out);
        for (size_t d = 0; d < nd; ++d) dst += per_axis[d][k[d]].i_lo * out_strides[d];
        // (the run read with the unit's strides: it is that part of the unit, contiguous)
        copy_strided(nd, count.data(), run, ustrides.data(), dst, out_strides.data(), isz);
        if (!next_segment(k, per_axis)) break;
        continue;
      }
    }
    BlockWindow::Block kept;
    if (window) {
      kept = window->get(id, [&](void* dst) { read_unit(id, dst, ts); });
    } else {
      read_unit(id, unit_buffer(), ts);
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

void UnitSource::planned_reads(const Region& region, ThreadState& ts, std::vector<UnitRead>& out) const {
  planned_reads(region, ts.eval ? ts.eval->block_window(this) : nullptr, out);
}

void UnitSource::planned_reads(const Region& region, BlockWindow* window, std::vector<UnitRead>& out) const {
  // (fill()'s choices, in its order; a change there is a change here)
  if (region.size() == 0) return;
  const size_t nd = ndim();
  if (nd == 0) {
    out.push_back({0});
    return;
  }
  const Shape& ushape = read_grid_.chunks();
  const AxisSegments per_axis = split_region(region, ushape);
  std::vector<size_t> k(nd, 0);
  Shape coords(nd), count(nd);
  while (true) {
    for (size_t d = 0; d < nd; ++d) coords[d] = per_axis[d][k[d]].cell;
    const int64_t id = read_grid_.chunk_id(coords);
    if (window) {
      if (!window->contains(id)) out.push_back({id});
    } else {
      const Box cbox = read_grid_.chunk_box(id);
      if (region.unit_steps() && region.bounds() == cbox && cbox.shape() == ushape) {
        out.push_back({id});
        return;
      }
      const int64_t first = unit_ranges() ? segment_run(region, per_axis, k, ushape, count) : -1;
      if (first >= 0) out.push_back({id, first, prod(count)});
      else out.push_back({id});
    }
    if (!next_segment(k, per_axis)) return;
  }
}

int64_t UnitSource::decompressed_bytes(const Region& region) const {
  if (region.size() == 0) return 0;
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  const int64_t unit = sat_mul(prod(read_grid_.chunks()), isz);
  if (!unit_ranges() || ndim() == 0) {
    int64_t touched = 1;
    for (size_t d = 0; d < ndim(); ++d) {
      const int64_t lo = std::min(region.start[d], region.last(d)), hi = std::max(region.start[d], region.last(d));
      const int64_t c = read_grid_.chunks()[d];
      touched = sat_mul(touched, std::min(hi / c - lo / c + 1, region.count[d]));
    }
    return sat_mul(touched, unit);
  }
  // Runs of a unit's C order cost their own bytes (plus parts of two blocks), the others
  // the whole unit, as fill() reads them.
  const size_t nd = ndim();
  const Shape& ushape = read_grid_.chunks();
  const AxisSegments per_axis = split_region(region, ushape);
  std::vector<size_t> k(nd, 0);
  Shape count(nd);
  int64_t total = 0;
  while (true) {
    total = sat_add(total, segment_run(region, per_axis, k, ushape, count) >= 0 ? sat_mul(prod(count), isz) : unit);
    if (!next_segment(k, per_axis)) return total;
  }
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
