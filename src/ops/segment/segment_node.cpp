#include "ops/segment/segment_node.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "b2lazy/error.hpp"
#include "b2lazy/ops.hpp"
#include "core/chunk_shapes.hpp"
#include "core/dispatch.hpp"
#include "core/saturating.hpp"
#include "core/strided_copy.hpp"
#include "ops/reduce/kernels/first_last.hpp"
#include "ops/reduce/kernels/kernel.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/graph_queries.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {
constexpr size_t kSlabBytes = size_t(4) << 20;
constexpr size_t kPieceBytes = size_t(1) << 20;  // converted values fed to a kernel at once
}  // namespace

SegmentCodes::SegmentCodes(std::vector<int64_t> codes, int64_t ngroups)
    : code(std::move(codes)), count(static_cast<size_t>(ngroups), 0), first(count.size(), -1), last(count.size(), -1) {
  for (size_t i = 0; i < code.size(); ++i) {
    const int64_t c = code[i];
    if (c < 0) continue;
    const size_t g = static_cast<size_t>(c);
    if (count[g]++ == 0) first[g] = static_cast<int64_t>(i);
    last[g] = static_cast<int64_t>(i);
  }
}

SegmentReduceNode::SegmentReduceNode(NodePtr input, size_t axis, std::shared_ptr<const SegmentCodes> codes,
                                     SegmentFold fold, Reduction r, DType out, DType acc, double correction,
                                     bool empty_nan, std::string name)
    : Node(out,
           [&] {
             Shape s = input->shape();
             s[axis] = codes->ngroups();
             return s;
           }(),
           {input}),
      axis_(axis),
      codes_(std::move(codes)),
      fold_(fold),
      r_(r),
      acc_(acc),
      correction_(correction),
      empty_nan_(empty_nan),
      name_(std::move(name)) {
  if (const Node* src = aligned_storage_source(input)) {
    in_chunks_ = src->storage_grid()->chunks();
    align_ = in_chunks_[axis];
    range_reads_ = src->reads_ranges();
  }
  sorted_ = true;
  int64_t prev = -1;
  for (int64_t c : codes_->code) {
    if (c < 0) continue;
    sorted_ = sorted_ && c >= prev;
    prev = c;
  }
}

Shape SegmentReduceNode::preferred_chunks() const {
  Shape c = shape();
  for (size_t d = 0; d < c.size(); ++d)
    if (d != axis_ && !in_chunks_.empty()) c[d] = std::max<int64_t>(1, std::min(in_chunks_[d], c[d]));
  const int64_t group_bytes =
      std::max<int64_t>(1, prod(c) / std::max<int64_t>(1, c[axis_]) * static_cast<int64_t>(itemsize(dtype())));
  // Split along sorted groups only where the input is stored in chunks along the axis: a
  // piece then reads its own chunks (a computed input or one whole along the axis would be
  // pulled whole by every piece).
  if (sorted_ && align_ > 0 && align_ < inputs()[0]->shape()[axis_])
    c[axis_] = std::clamp<int64_t>((int64_t(4) << 20) / group_bytes, 1, std::max<int64_t>(1, c[axis_]));
  return shrink_chunks(c, itemsize(dtype()), size_t(32) << 20);
}

Shape SegmentReduceNode::kept_chunks(const Shape& box, size_t, size_t most_bytes) const {
  Shape c = preferred_chunks();
  for (size_t d = 0; d < c.size() && d < box.size(); ++d) c[d] = std::max<int64_t>(1, std::min(c[d], box[d]));
  if (!sorted_) return c;  // (fills_whole_box: fewer groups per piece would read as much input each)
  return shrink_chunks(c, itemsize(dtype()), most_bytes);
}

std::string SegmentReduceNode::describe() const {
  return "segment_reduce(" + name_ + ", axis=" + std::to_string(axis_) +
         ", ngroups=" + std::to_string(codes_->ngroups()) + ") -> " + dtype_name(dtype()) + " " + shape_str(shape()) +
         "; pulls the rows of the region's groups, chunk by chunk, into per-group partials";
}

int64_t SegmentReduceNode::local_group(const Region& region, int64_t c) const {
  const int64_t d = c - region.start[axis_];
  if (c < 0 || d < 0 || d % region.step[axis_] != 0) return -1;
  const int64_t j = d / region.step[axis_];
  return j < region.count[axis_] ? j : -1;
}

Region SegmentReduceNode::slab_region(const Region& region, const Slab& s) const {
  Region in = region;
  in.start[axis_] = s.lo;
  in.step[axis_] = 1;
  in.count[axis_] = s.hi - s.lo;
  return in;
}

std::vector<Region> SegmentReduceNode::input_regions(const Region& region) const {
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = -1;
  for (int64_t j = 0; j < region.count[axis_]; ++j) {
    const size_t g = static_cast<size_t>(region.start[axis_] + j * region.step[axis_]);
    if (codes_->count[g] == 0) continue;
    lo = std::min(lo, codes_->first[g]);
    hi = std::max(hi, codes_->last[g]);
  }
  if (hi < 0) lo = 0, hi = -1;  // no rows: an empty region
  return {slab_region(region, {lo, hi + 1})};
}

size_t SegmentReduceNode::slab_bytes(size_t max_memory, int nworkers) const {
  return std::min(kSlabBytes,
                  std::max<size_t>(size_t(256) << 10, max_memory / 16 / static_cast<size_t>(std::max(1, nworkers))));
}

// Slabs never cross a multiple of `unit` rows: whole storage chunks (as many as fit the
// budget, at least one: a chunk cut in two is decompressed twice), or single chunks cut to
// the budget when the source reads row ranges alone; a gap of unneeded rows into another
// chunk starts a new slab (the chunks between are not read). A computed input (no
// storage) is pulled in runs of needed rows only, nothing computed for rows not needed.
std::vector<SegmentReduceNode::Slab> SegmentReduceNode::slabs(const Region& region, size_t slab_bytes) const {
  const int64_t row_bytes = std::max<int64_t>(1, region.size() / std::max<int64_t>(1, region.count[axis_]) *
                                                     static_cast<int64_t>(itemsize(inputs()[0]->dtype())));
  const int64_t room = std::max<int64_t>(1, static_cast<int64_t>(slab_bytes) / row_bytes);
  int64_t unit = 0, most = room;  // unit 0: no boundaries; most: rows per slab at most
  bool gaps_split = false;
  if (align_ > 0 && !(range_reads_ && align_ > room)) {
    unit = std::max(align_, room / align_ * align_);
    most = unit;
  } else if (align_ > 0) {
    unit = align_;
  } else {
    gaps_split = true;
  }
  std::vector<Slab> out;
  const std::vector<int64_t>& code = codes_->code;
  for (int64_t i = 0; i < static_cast<int64_t>(code.size()); ++i) {
    if (local_group(region, code[static_cast<size_t>(i)]) < 0) continue;
    if (!out.empty()) {
      Slab& s = out.back();
      const bool same_unit = unit == 0 || i / unit == s.lo / unit;
      // a gap into another chunk: those between are not read (nor the rows, when computed)
      const bool gap = i != s.hi && (gaps_split || i / align_ != (s.hi - 1) / align_);
      if (same_unit && i - s.lo < most && !gap) {
        s.hi = i + 1;
        continue;
      }
    }
    out.push_back({i, i + 1});
  }
  return out;
}

std::vector<Region> SegmentReduceNode::pull_pieces(const Region& region, size_t, size_t worker_bytes) const {
  std::vector<Region> out;
  for (const Slab& s : slabs(region, slab_bytes(worker_bytes * 16, 1))) out.push_back(slab_region(region, s));
  return out;
}

reduction::KernelArgs SegmentReduceNode::kernel_args(int64_t nout, int64_t group) const {
  return {r_, acc_, nout, codes_->count[static_cast<size_t>(group)], Shape{}, correction_};
}

template <class A> std::unique_ptr<reduction::Kernel<A>> SegmentReduceNode::make(int64_t nout, int64_t group) const {
  const reduction::KernelArgs args = kernel_args(nout, group);
  if constexpr (!is_complex_v<A>) {
    switch (fold_) {
      case SegmentFold::Kernel: break;
      case SegmentFold::First: return std::make_unique<reduction::FirstLastKernel<A, false, false>>(args);
      case SegmentFold::Last: return std::make_unique<reduction::FirstLastKernel<A, true, false>>(args);
      case SegmentFold::NanFirst: return std::make_unique<reduction::FirstLastKernel<A, false, true>>(args);
      case SegmentFold::NanLast: return std::make_unique<reduction::FirstLastKernel<A, true, true>>(args);
    }
  }
  return reduction::make_kernel<A>(args);
}

void SegmentReduceNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const Node& input = *inputs()[0];
  const size_t a = axis_, nd = region.ndim(), osz = itemsize(dtype()), isz = itemsize(input.dtype());
  const int64_t ngr = region.count[a];
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < nd; ++d) {
    if (d < a) outer *= region.count[d];
    if (d > a) inner *= region.count[d];
  }
  const int64_t per_group = outer * inner;  // outputs of each group
  const size_t sb = ts.eval ? slab_bytes(ts.eval->max_memory(), ts.eval->workers()) : kSlabBytes;
  const std::vector<Slab> parts = slabs(region, sb);
  std::vector<bool> red(nd, false);
  red[a] = true;
  const std::vector<int64_t>& code = codes_->code;
  auto group_of = [&](int64_t j) { return region.start[a] + j * region.step[a]; };

  dispatch_computing(acc_, [&]<class A>(A*) {
    using Kernel = reduction::Kernel<A>;
    using Set = std::vector<std::unique_ptr<Kernel>>;  // per local group, made when first fed
    // Runs of equal codes are fed to their group's kernel in pieces of at most
    // kPieceBytes of accumulator values, converted (and made contiguous when axes before
    // the grouped one are longer than 1) piece by piece: a slab is never held converted.
    const int64_t piece_rows =
        std::max<int64_t>(1, static_cast<int64_t>(kPieceBytes / sizeof(A)) / std::max<int64_t>(1, per_group));
    const bool convert = input.dtype() != acc_;
    auto consume = [&](Set& set, const Slab& s, ThreadState& t) {
      ScratchScope scope(t.scratch);
      const Region in = slab_region(region, s);
      const void* raw = input.pull_view(in, t);
      if (!raw) {
        void* buf = scope.alloc(static_cast<size_t>(in.size()) * isz);
        input.pull(in, buf, t);
        raw = buf;
      }
      const size_t piece_n = static_cast<size_t>(std::min(piece_rows, s.hi - s.lo) * per_group);
      A* conv = convert ? scope.alloc_n<A>(piece_n) : nullptr;
      char* gathered = outer > 1 ? static_cast<char*>(scope.alloc(piece_n * isz)) : nullptr;
      const Shape in_strides = byte_strides(in.count, isz);
      for (int64_t i = s.lo; i < s.hi;) {
        const int64_t c = code[static_cast<size_t>(i)];
        int64_t e = i + 1;
        while (e < s.hi && code[static_cast<size_t>(e)] == c) ++e;
        const int64_t j = local_group(region, c);
        for (int64_t p = i; j >= 0 && p < e; p += piece_rows) {
          Region sub = in;
          sub.start[a] = p;
          sub.count[a] = std::min(piece_rows, e - p);
          const int64_t m = sub.size();
          const char* px = static_cast<const char*>(raw) + (p - s.lo) * inner * static_cast<int64_t>(isz);
          if (gathered) {
            const Shape dst = byte_strides(sub.count, isz);
            copy_strided(nd, sub.count.data(), px, in_strides.data(), gathered, dst.data(), isz);
            px = gathered;
          }
          const A* x = reinterpret_cast<const A*>(px);
          if (convert) {
            const void* src[1] = {px};
            kernels::lookup_cast(input.dtype(), acc_)(conv, src, m);
            x = conv;
          }
          auto& k = set[static_cast<size_t>(j)];
          if (!k) k = make<A>(per_group, group_of(j));
          k->consume(x, sub, red);
        }
        i = e;
      }
    };
    Set main(static_cast<size_t>(ngr));
    const int64_t nparts = static_cast<int64_t>(parts.size());
    if (!(ts.can_fork && ts.eval && nparts > 1 && ts.eval->workers() > 1)) {
      for (const Slab& s : parts) consume(main, s, ts);
    } else {  // the slabs spread over the workers, each with partials of its own, merged
      Evaluation& ev = *ts.eval;
      std::vector<Set> partial(static_cast<size_t>(std::min<int64_t>(nparts, ev.workers())));
      for (Set& p : partial) p.resize(static_cast<size_t>(ngr));
      ev.parallel_for(nparts, [&](int64_t i, int w, ThreadState& wts) {
        consume(partial[static_cast<size_t>(w)], parts[static_cast<size_t>(i)], wts);
      });
      for (Set& p : partial)
        for (size_t j = 0; j < p.size(); ++j) {
          if (!p[j]) continue;
          if (!main[j]) main[j] = std::move(p[j]);
          else main[j]->merge(*p[j]);
        }
    }
    ScratchScope scope(ts.scratch);
    char* dst = static_cast<char*>(out);
    char* buf = outer > 1 ? static_cast<char*>(scope.alloc(static_cast<size_t>(per_group) * osz)) : nullptr;
    std::vector<double> nan;
    for (int64_t j = 0; j < ngr; ++j) {
      const int64_t g = group_of(j);
      char* into = buf ? buf : dst + j * inner * static_cast<int64_t>(osz);
      if (empty_nan_ && codes_->count[static_cast<size_t>(g)] == 0) {
        nan.assign(static_cast<size_t>(per_group), std::numeric_limits<double>::quiet_NaN());
        reduction::cast_out(DType::F64, nan.data(), dtype(), into, per_group);
      } else {
        auto& k = main[static_cast<size_t>(j)];
        if (!k) k = make<A>(per_group, g);  // an empty group: the reduction's empty value
        k->finalize(into, dtype());
      }
      if (buf) {
        const size_t row = static_cast<size_t>(inner) * osz;
        for (int64_t o = 0; o < outer; ++o)
          std::memcpy(dst + (o * ngr + j) * static_cast<int64_t>(row), buf + o * static_cast<int64_t>(row), row);
      }
    }
  });
}

int64_t SegmentReduceNode::fill_bytes(const Region& region, const MemoryModel& m) const {
  if (region.size() == 0) return 0;
  const Node& input = *inputs()[0];
  const std::vector<Slab> parts = slabs(region, slab_bytes(m.max_memory(), m.nworkers()));
  int64_t acc = sat_mul(region.size(), 24);  // the partials (moments: three per output)
  if (parts.empty()) return acc;
  int64_t one = 0;
  for (const Slab& s : parts) {  // the largest slab, and its pieces converted / gathered
    const Region in = slab_region(region, s);
    int64_t b = m.in_place(input, in) ? 0 : MemoryModel::region_bytes(input, in);
    b = sat_add(b, 2 * static_cast<int64_t>(kPieceBytes));
    one = std::max(one, sat_add(b, m.pull_bytes(input, in)));
  }
  one = sat_add(one, acc);
  return parts.size() > 1 ? m.spread(one) : one;
}

}  // namespace b2lazy
