#include "io/unit_source.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/saturating.hpp"
#include "core/strided_copy.hpp"
#include "runtime/block_window.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

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

// The most runs a segment is read in (segment_runs) before the unit is read whole.
constexpr size_t kMostRuns = 16;

// A segment that is not one run but a few: one run per index of its leading axes (rows
// ::97 of a chunk of 128 rows touch it twice, 100 items each). Returns the first axis of
// the runs, d >= 1, with each run's first item (C order of the unit) in `firsts`, its
// leading indices in C order of count[0, d); or 0 when the unit is better read whole (more
// than kMostRuns runs, or half its items or more, or steps within the runs).
size_t segment_runs(const Region& region, const AxisSegments& per_axis, const std::vector<size_t>& k,
                    const Shape& ushape, Shape& count, std::vector<int64_t>& firsts) {
  const size_t nd = ushape.size();
  Shape lo(nd), step(nd);
  for (size_t a = 0; a < nd; ++a) {
    const AxisSegment& g = per_axis[a][k[a]];
    lo[a] = region.start[a] + g.i_lo * region.step[a] - g.cell * ushape[a];
    count[a] = g.i_hi - g.i_lo;
    step[a] = count[a] == 1 ? 1 : region.step[a];
  }
  // The runs: axes [d, nd) — whole after the first of them that is more than one item.
  size_t d = nd;
  bool whole_after = true;  // axes [d, nd) whole
  while (d > 0) {
    const size_t a = d - 1;
    if (step[a] != 1 || (count[a] != 1 && !whole_after)) break;
    whole_after = whole_after && count[a] == ushape[a];
    d = a;
  }
  if (d == 0 || d == nd) return 0;  // one run (segment_run's), or steps in the last axis
  int64_t nruns = 1;
  for (size_t a = 0; a < d; ++a) nruns *= count[a];
  int64_t per_run = 1;
  for (size_t a = d; a < nd; ++a) per_run *= count[a];
  if (nruns > static_cast<int64_t>(kMostRuns) || 2 * nruns * per_run >= prod(ushape)) return 0;
  firsts.clear();
  Shape j(d, 0);
  for (int64_t r = 0; r < nruns; ++r) {
    int64_t first = 0;
    for (size_t a = 0; a < nd; ++a) first = first * ushape[a] + lo[a] + (a < d ? j[a] * step[a] : 0);
    firsts.push_back(first);
    for (size_t a = d; a-- > 0;) {  // the next leading index, C order
      if (++j[a] < count[a]) break;
      j[a] = 0;
    }
  }
  return d;
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
  // Through the plan's window of decoded units when it gave one (runtime/block_window.hpp).
  BlockWindow* window = ts.eval && nd > 0 ? ts.eval->window(this) : nullptr;
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
      // A few runs (a stepped axis before them): each decoded alone, copied to its place.
      std::vector<int64_t> firsts;
      if (const size_t d = segment_runs(region, per_axis, k, ushape, count, firsts)) {
        int64_t n = 1;
        for (size_t a = d; a < nd; ++a) n *= count[a];
        ScratchScope piece(ts.scratch);
        char* run = static_cast<char*>(piece.alloc(static_cast<size_t>(n) * isz));
        char* base = static_cast<char*>(out);
        for (size_t a = 0; a < nd; ++a) base += per_axis[a][k[a]].i_lo * out_strides[a];
        Shape j(d, 0);
        // (the runs are one read of the unit: counted once)
        const auto times_read = [&]() -> int64_t {
          const auto it = ts.decompressed.find(this);
          if (it == ts.decompressed.end()) return 0;
          const auto c = it->second.find(id);
          return c == it->second.end() ? 0 : c->second;
        };
        const int64_t counted = times_read();
        for (const int64_t first : firsts) {
          read_unit_range(id, first, n, run, ts);
          if (times_read() > counted + 1) ts.decompressed[this][id] = counted + 1;
          char* dst = base;
          for (size_t a = 0; a < d; ++a) dst += j[a] * out_strides[a];
          copy_strided(nd - d, count.data() + d, run, ustrides.data() + d, dst, out_strides.data() + d, isz);
          for (size_t a = d; a-- > 0;) {
            if (++j[a] < count[a]) break;
            j[a] = 0;
          }
        }
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
  planned_reads(region, ts.eval ? ts.eval->window(this) : nullptr, out);
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
      std::vector<int64_t> firsts;
      if (first >= 0) {
        out.push_back({id, first, prod(count)});
      } else if (const size_t d = unit_ranges() ? segment_runs(region, per_axis, k, ushape, count, firsts) : 0) {
        int64_t n = 1;
        for (size_t a = d; a < nd; ++a) n *= count[a];
        for (const int64_t f : firsts) out.push_back({id, f, n});
      } else {
        out.push_back({id});
      }
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
