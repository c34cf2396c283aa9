#include "ops/scan/scan_node.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "b2lazy/checked.hpp"
#include "b2lazy/ops.hpp"
#include "core/chunk_shapes.hpp"
#include "core/dispatch.hpp"
#include "core/saturating.hpp"
#include "core/strided_copy.hpp"
#include "ops/reduce/accumulate.hpp"
#include "runtime/carry_board.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/graph_queries.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {

// Input pulled per step of a scan or a segment total: scans hold a few pieces, never a
// whole region of input (issue #12: a scan holds at most a few storage chunks per worker).
constexpr int64_t kPieceBytes = int64_t(1) << 20;
// Output chunks (and segments) a scan prefers at most: its storage chunks, cut down.
constexpr size_t kScanChunkBytes = size_t(1) << 20;

// The input's storage chunk length along `axis` when its pieces should be whole chunks
// deep: its storage cannot decompress part of a chunk (Zarr), so a thinner piece
// decompresses the whole chunk, and the next piece again. 0: pieces of any depth.
Shape whole_chunks(const NodePtr& input) {
  const Node* src = aligned_storage_source(input);
  if (!src || src->reads_ranges() || src->shape() != input->shape()) return {};
  return src->storage_grid()->chunks();
}
int64_t whole_chunk_depth(const NodePtr& input, int axis) {
  const Shape c = whole_chunks(input);
  return c.empty() ? 0 : c[static_cast<size_t>(axis)];
}
// ...and its storage chunk width along the last axis, when that is not `axis` (0: none).
int64_t whole_chunk_width(const NodePtr& input, int axis) {
  const Shape c = whole_chunks(input);
  return c.empty() || static_cast<size_t>(axis) + 1 == c.size() ? 0 : c.back();
}

// `rows` along the axis rounded to whole chunks of `depth` (0: as they are).
int64_t piece_depth(int64_t rows, int64_t depth) {
  return depth > rows ? depth : depth > 0 ? rows / depth * depth : rows;
}

// Axis `k` splits a dense buffer of shape `c` into outer x len x inner.
struct Split {
  int64_t outer = 1, len = 1, inner = 1;
};
Split split_at(const Shape& c, int k) {
  Split s;
  for (int d = 0; d < static_cast<int>(c.size()); ++d) {
    if (d < k) s.outer *= c[d];
    else if (d == k) s.len = c[d];
    else s.inner *= c[d];
  }
  return s;
}

template <class A> A apply(ScanOp op, A a, A b) {
  if (op == ScanOp::Push) {  // the last valid (non-NaN) value: associative, NaN its identity
    if constexpr (std::is_floating_point_v<A>) return b != b ? a : b;
    else return b;
  }
  return op == ScanOp::Sum ? accum::add(a, b) : accum::mul(a, b);  // (integers wrap, as NumPy's)
}

template <class A> A scan_identity(ScanOp op) {
  if (op == ScanOp::Push) {
    if constexpr (std::is_floating_point_v<A>) return std::numeric_limits<A>::quiet_NaN();
    else return A(0);
  }
  return op == ScanOp::Sum ? A(0) : A(1);
}

// Pull `r` of `n` and convert it to accumulator type A (scratch owned by `scope`).
template <class A> const A* pull_as(const Node& n, const Region& r, DType acc, ScratchScope& scope, ThreadState& ts) {
  const int64_t m = r.size();
  void* raw = scope.alloc(std::max<int64_t>(m, 1) * itemsize(n.dtype()));
  if (m) n.pull(r, raw, ts);
  if (n.dtype() == acc) return static_cast<const A*>(raw);
  void* conv = scope.alloc(std::max<int64_t>(m, 1) * sizeof(A));
  const void* src[1] = {raw};
  if (m) kernels::lookup_cast(n.dtype(), acc)(conv, src, m);
  return static_cast<const A*>(conv);
}

// carry[o, i] = op-fold over j of x[o, j, i]
template <class A> void fold_carry(ScanOp op, const A* x, const Split& s, A* carry) {
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t j = 0; j < s.len; ++j) {
      const A* __restrict row = x + (o * s.len + j) * s.inner;
      A* __restrict c = carry + o * s.inner;
      for (int64_t i = 0; i < s.inner; ++i) c[i] = apply(op, c[i], row[i]);
    }
}

int64_t segment_length(const NodePtr& input, int axis, const Shape& pc) {
  int64_t n = input->shape()[static_cast<size_t>(axis)];
  if (!pc.empty()) return pc[static_cast<size_t>(axis)];
  // Otherwise about 64 segments: totals stay small and a region's prefix is cheap.
  return std::max<int64_t>(1, ceil_div(n, 64));
}

// The input's preferred chunks, leading axes halved to kScanChunkBytes (of the 8-byte
// accumulator): segments and output chunks of that size keep the pieces a worker holds
// small, and their pulls stay C-order ranges of the storage chunks.
// An input whose storage cannot decompress part of a chunk keeps its chunks' extent along
// the axis (segments whole chunks deep: each chunk decompressed once), the others halved.
Shape scan_chunks(const Shape& input_chunks, int axis, bool whole_along_axis) {
  if (input_chunks.empty()) return input_chunks;
  if (!whole_along_axis) return shrink_chunks(input_chunks, 8, kScanChunkBytes);
  const size_t k = static_cast<size_t>(axis);
  Shape c = input_chunks;
  c[k] = 1;
  c = shrink_chunks(c, 8,
                    std::max<size_t>(8, kScanChunkBytes / static_cast<size_t>(std::max<int64_t>(1, input_chunks[k]))));
  c[k] = input_chunks[k];
  return c;
}

// A flattened scan (a 1-d input: the reshape of a stored array read by C-order blocks)
// takes chunks of whole block rows of that array, up to this size: a chunk that ends
// inside a block row decompresses those blocks whole, and the next chunk again (8192²
// float64 in (1024, 1024) tiles of (32, 1024) blocks: 1 MiB chunks are 16 rows, half a
// block row, and the planner kept the whole input dense, 512 MiB, to avoid reading it twice).
constexpr int64_t kMaxBlockRowBytes = int64_t(4) << 20;

// Elements of one block row of the stored array a flattened scan's 1-d input is a
// reshape of (found along first inputs), when that array is read by C-order blocks and
// the row is at most kMaxBlockRowBytes; else 0.
int64_t block_row(const NodePtr& input) {
  if (input->ndim() != 1 || input->size() == 0) return 0;
  const Node* src = input.get();
  while (src && !src->storage_grid()) src = src->inputs().empty() ? nullptr : src->inputs()[0].get();
  if (!src || !src->reads_ranges() || src->ndim() < 2 || src->size() != input->size()) return 0;
  const Shape blocks = src->storage_blocks();
  const Shape& chunks = src->storage_grid()->chunks();
  if (blocks.size() != src->ndim() || blocks[0] <= 0 || chunks[0] % blocks[0] != 0) return 0;
  int64_t row = blocks[0];
  for (size_t d = 1; d < src->ndim(); ++d) row = sat_mul(row, src->shape()[d]);
  return row > 0 && sat_mul(row, 8) <= kMaxBlockRowBytes ? row : 0;
}

// The unit of a scan's pieces and chunks along its axis: whole storage chunks (Zarr),
// whole block rows (a flattened scan over C-order blocks), or 0 (any length).
int64_t piece_unit(const NodePtr& input, int axis) {
  const int64_t d = whole_chunk_depth(input, axis);
  return d > 0 ? d : block_row(input);
}

// A flattened scan's chunks: whole block rows.
Shape whole_block_rows(Shape c, const NodePtr& input) {
  const int64_t row = block_row(input);
  if (c.size() != 1 || row <= 0 || c[0] <= 0 || c[0] % row == 0) return c;
  c[0] = std::min(input->shape()[0], ceil_div(c[0], row) * row);
  return c;
}

Shape with_axis(Shape s, int axis, int64_t v) {
  s[static_cast<size_t>(axis)] = v;
  return s;
}

}  // namespace

// ---- SegmentTotals ---------------------------------------------------------------------

SegmentTotals::SegmentTotals(NodePtr input, int axis, int64_t seg, ScanOp op, DType acc)
    : Node(acc, with_axis(input->shape(), axis, ceil_div(input->shape()[static_cast<size_t>(axis)], seg)), {input}),
      axis_(axis),
      seg_(seg),
      op_(op),
      depth_(piece_unit(input, axis)),
      width_(whole_chunk_width(input, axis)) {}

std::string SegmentTotals::describe() const {
  return "segment totals along axis " + std::to_string(axis_) + " every " + std::to_string(seg_) + " -> " +
         shape_str(shape());
}

Region SegmentTotals::input_region(const Region& r) const {
  Region in = r;
  const size_t k = static_cast<size_t>(axis_);
  Box b = r.bounds();
  in.start[k] = b.start[k] * seg_;
  in.step[k] = 1;
  in.count[k] = std::min(inputs()[0]->shape()[k], b.stop[k] * seg_) - in.start[k];
  return in;
}

std::vector<Region> SegmentTotals::input_regions(const Region& r) const { return {input_region(r)}; }

int64_t SegmentTotals::fill_bytes(const Region& r, const MemoryModel& m) const {
  if (r.size() == 0) return 0;
  const size_t k = static_cast<size_t>(axis_);
  // One piece of one segment, as fill() folds them (converted unless of the result's type),
  // of one strip when fill() cuts the region in strips (then held with the strip's output).
  Region piece = input_region(r);
  const size_t l = r.ndim() - 1;
  int64_t strip = 0;
  if (cuts_strips(r)) {
    piece.count[l] = width_;
    strip = sat_mul(r.size() / r.count[l] * width_, static_cast<int64_t>(itemsize(dtype())));
  }
  const int64_t cross = piece.size() / std::max<int64_t>(1, piece.count[k]);
  piece.count[k] =
      std::min({piece.count[k], seg_,
                piece_depth(std::max<int64_t>(1, kPieceBytes / std::max<int64_t>(1, sat_mul(cross, 8))), depth_)});
  const DType in = inputs()[0]->dtype();
  const int64_t held =
      sat_mul(piece.size(), static_cast<int64_t>(itemsize(in) + (in == dtype() ? 0 : itemsize(dtype()))));
  return sat_add(sat_add(sat_add(held, m.pull_bytes(*inputs()[0], piece)), sat_mul(cross, 8)), strip);
}

// Strips of the last axis, one storage chunk wide, when pieces are whole chunks deep and
// a piece of the region's whole cross-section would be far over kPieceBytes.
bool SegmentTotals::cuts_strips(const Region& r) const {
  const size_t l = r.ndim() - 1, k = static_cast<size_t>(axis_);
  if (width_ <= 0 || r.step[l] != 1 || r.count[l] <= width_) return false;
  const int64_t cross = r.size() / std::max<int64_t>(1, r.count[k]);
  return sat_mul(sat_mul(cross, std::max(depth_, seg_)), 8) > 4 * kPieceBytes;
}

bool SegmentTotals::fill_strips(const Region& r, void* out, ThreadState& ts) const {
  if (!cuts_strips(r)) return false;
  const size_t l = r.ndim() - 1;
  const size_t osz = itemsize(dtype());
  const Shape strides = byte_strides(r.count, osz);
  for (int64_t c0 = 0; c0 < r.count[l];) {
    Region part = r;
    part.start[l] = r.start[l] + c0;
    int64_t end = (part.start[l] / width_ + 1) * width_;  // ends on the storage chunks
    part.count[l] = std::min(r.count[l] - c0, end - part.start[l]);
    ScratchScope scope(ts.scratch);
    char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(part.size()) * osz));
    fill(part, buf, ts);
    const Shape bs = byte_strides(part.count, osz);
    copy_strided(part.ndim(), part.count.data(), buf, bs.data(), static_cast<char*>(out) + c0 * strides[l],
                 strides.data(), osz);
    c0 += part.count[l];
  }
  return true;
}

void SegmentTotals::fill(const Region& r, void* out, ThreadState& ts) const {
  if (r.size() == 0) return;
  if (fill_strips(r, out, ts)) return;
  const Node& in = *inputs()[0];
  const size_t k = static_cast<size_t>(axis_);
  dispatch_computing(dtype(), [&]<class A>(A*) {
    Split so = split_at(r.count, axis_);
    A* o = static_cast<A*>(out);
    std::vector<A> carry(static_cast<size_t>(so.outer * so.inner));
    // One segment at a time: bounded memory, and each input chunk read once.
    for (int64_t j = 0; j < r.count[k]; ++j) {
      int64_t s = r.start[k] + j * r.step[k];
      Region ir = r;
      ir.start[k] = s * seg_;
      ir.step[k] = 1;
      ir.count[k] = std::min(in.shape()[k], (s + 1) * seg_) - ir.start[k];
      std::fill(carry.begin(), carry.end(), scan_identity<A>(op_));
      // In pieces of about kPieceBytes along the axis: a segment may be large.
      const int64_t rows = piece_depth(
          std::max<int64_t>(1, kPieceBytes / std::max<int64_t>(1, ir.size() / std::max<int64_t>(1, ir.count[k]) * 8)),
          depth_);
      const int64_t s0 = ir.start[k], s1 = ir.start[k] + ir.count[k];
      for (int64_t i = s0; i < s1; i += rows) {
        Region piece = ir;
        piece.start[k] = i;
        piece.count[k] = std::min(rows, s1 - i);
        ScratchScope scope(ts.scratch);
        const A* x = pull_as<A>(in, piece, dtype(), scope, ts);
        fold_carry(op_, x, split_at(piece.count, axis_), carry.data());
      }
      for (int64_t a = 0; a < so.outer; ++a)
        std::memcpy(o + (a * so.len + j) * so.inner, carry.data() + a * so.inner, so.inner * sizeof(A));
    }
  });
}

// ---- ScanNode ------------------------------------------------------------------------

namespace {
DType scan_accumulator(DType out) {
  if (is_complex(out)) return DType::C128;
  return is_float(out) ? DType::F64 : kind(out) == DKind::Unsigned ? DType::U64 : DType::I64;
}
}  // namespace

ScanNode::ScanNode(NodePtr input, int axis, ScanOp op, DType out, bool include_initial)
    : ScanNode(
          input, axis, op, out, include_initial,
          whole_block_rows(scan_chunks(preferred_chunks_of(input), axis, whole_chunk_depth(input, axis) > 0), input)) {}

ScanNode::ScanNode(NodePtr input, int axis, ScanOp op, DType out, bool include_initial, Shape input_chunks)
    : Node(out, with_axis(input->shape(), axis, input->shape()[static_cast<size_t>(axis)] + (include_initial ? 1 : 0)),
           {input, std::make_shared<SegmentTotals>(input, axis, segment_length(input, axis, input_chunks), op,
                                                   scan_accumulator(out))}),
      axis_(axis),
      op_(op),
      acc_(scan_accumulator(out)),
      include_initial_(include_initial),
      seg_(segment_length(input, axis, input_chunks)),
      preferred_(std::move(input_chunks)),
      depth_(piece_unit(input, axis)) {
  if (!preferred_.empty()) preferred_[static_cast<size_t>(axis_)] = seg_;
}

std::string ScanNode::describe() const {
  return std::string(kind()) + "(axis=" + std::to_string(axis_) + (include_initial_ ? ", include_initial" : "") +
         ") -> " + dtype_name(dtype()) + " " + shape_str(shape()) + "; carry from cached segment totals";
}

ScanNode::Plan ScanNode::plan(int64_t lo, int64_t hi) const {
  // Output i folds input [0, i + shift): the carry covers [0, lo); outputs lo.. add input
  // lo.. one each, except with include_initial, where output lo is the carry itself.
  const int64_t shift = include_initial_ ? 0 : 1;
  Plan p;
  p.e0 = lo;
  p.e1 = std::max(p.e0, hi + shift - 1);
  p.s = p.e0 / seg_;
  return p;
}

std::vector<Region> ScanNode::input_regions(const Region& r) const {
  if (r.size() == 0) return {};
  const size_t k = static_cast<size_t>(axis_);
  Box b = r.bounds();
  Plan p = plan(b.start[k], b.stop[k]);
  Region in = r, tot = r;
  for (size_t d = 0; d < r.ndim(); ++d)
    if (d != k && r.step[d] != 1) {  // planning only needs bounds
      Box bb = r.bounds();
      in.start[d] = tot.start[d] = bb.start[d];
      in.step[d] = tot.step[d] = 1;
      in.count[d] = tot.count[d] = bb.stop[d] - bb.start[d];
    }
  in.start[k] = p.s * seg_;
  in.step[k] = 1;
  in.count[k] = p.e1 - p.s * seg_;
  tot.start[k] = 0;
  tot.step[k] = 1;
  tot.count[k] = p.s;
  return {in, tot};
}

void ScanNode::fill_carried(const Region& r, void* out, ThreadState& ts, CarryBoard& board) const {
  const size_t k = static_cast<size_t>(axis_);
  const size_t isz = itemsize(dtype());
  const Node& in = *inputs()[0];
  const Region u = unit_along(r, axis_);
  const int64_t lo = u.start[k], hi = lo + u.count[k];
  ScratchScope scope(ts.scratch);
  const bool strided = r.step[k] != 1;
  void* dense = strided ? scope.alloc(u.size() * isz) : out;
  dispatch_computing(acc_, [&]<class A>(A*) {
    const Split su = split_at(u.count, axis_);
    const int64_t cross = su.outer * su.inner;
    const A id = scan_identity<A>(op_);
    // The region scanned from zero, in the accumulator's type (in place when that is the
    // result's), a piece of input at a time.
    A* loc = dtype() == acc_ ? static_cast<A*>(dense) : scope.alloc_n<A>(static_cast<size_t>(u.size()));
    const int64_t rows = piece_depth(std::max<int64_t>(1, kPieceBytes / (cross * 8)), depth_);
    std::vector<A> run(static_cast<size_t>(cross), id);
    for (int64_t j0 = 0; j0 < su.len; j0 += rows) {
      ScratchScope piece_scope(ts.scratch);
      Region piece = u;
      piece.start[k] = lo + j0;
      piece.count[k] = std::min(rows, su.len - j0);
      const A* x = pull_as<A>(in, piece, acc_, piece_scope, ts);
      for (int64_t o = 0; o < su.outer; ++o) {
        A* __restrict c = run.data() + o * su.inner;
        if (su.inner == 1) {  // along the last axis (a flattened scan): the running value in a register
          A v = *c;
          const A* __restrict xs = x + o * piece.count[k];
          A* __restrict dst = loc + o * su.len + j0;
          for (int64_t j = 0; j < piece.count[k]; ++j) dst[j] = v = apply(op_, v, xs[j]);
          *c = v;
          continue;
        }
        for (int64_t j = 0; j < piece.count[k]; ++j) {
          const A* __restrict row = x + (o * piece.count[k] + j) * su.inner;
          A* __restrict dst = loc + (o * su.len + j0 + j) * su.inner;
          for (int64_t i = 0; i < su.inner; ++i) dst[i] = c[i] = apply(op_, c[i], row[i]);
        }
      }
    }
    // The carry before the region: from the chunk that ends there, or (that chunk gave
    // none) the totals before it and the part of a segment before the region.
    std::vector<A> carry;
    if (lo > 0) {
      if (auto taken = board.take(CarryLinks::key(r, axis_, lo), *ts.eval)) {
        carry.resize(static_cast<size_t>(cross));
        std::memcpy(carry.data(), taken->data(), carry.size() * sizeof(A));
      } else {
        carry.assign(static_cast<size_t>(cross), id);
        const Plan p = plan(lo, hi);
        const Node& totals = *inputs()[1];
        auto fold_range = [&](const Node& n, int64_t a, int64_t e) {
          for (int64_t j = a; j < e; j += rows) {
            ScratchScope piece_scope(ts.scratch);
            Region piece = u;
            piece.start[k] = j;
            piece.count[k] = std::min(rows, e - j);
            fold_carry(op_, pull_as<A>(n, piece, acc_, piece_scope, ts), split_at(piece.count, axis_), carry.data());
          }
        };
        if (p.s > 0) fold_range(totals, 0, p.s);
        if (lo > p.s * seg_) fold_range(in, p.s * seg_, lo);
      }
    }
    // Hand on the carry at the region's end before adding this one to every row.
    std::vector<uint8_t> next(static_cast<size_t>(cross) * sizeof(A));
    A* nx = reinterpret_cast<A*>(next.data());
    for (int64_t o = 0; o < su.outer; ++o)
      for (int64_t i = 0; i < su.inner; ++i) {
        const A last = loc[(o * su.len + su.len - 1) * su.inner + i];
        nx[o * su.inner + i] = carry.empty() ? last : apply(op_, carry[static_cast<size_t>(o * su.inner + i)], last);
      }
    board.put(CarryLinks::key(r, axis_, hi), std::move(next));
    if (!carry.empty())
      for (int64_t o = 0; o < su.outer; ++o) {
        const A* __restrict c = carry.data() + o * su.inner;
        if (su.inner == 1) {  // one carry for the whole run: vectorised over it
          const A cv = *c;
          A* __restrict row = loc + o * su.len;
          for (int64_t j = 0; j < su.len; ++j) row[j] = apply(op_, cv, row[j]);
          continue;
        }
        for (int64_t j = 0; j < su.len; ++j) {
          A* __restrict row = loc + (o * su.len + j) * su.inner;
          for (int64_t i = 0; i < su.inner; ++i) row[i] = apply(op_, c[i], row[i]);
        }
      }
    if (dtype() != acc_) {
      const void* src[1] = {loc};
      kernels::lookup_cast(acc_, dtype())(dense, src, u.size());
    }
  });
  if (strided) pick_along(r, u, axis_, dense, out, isz);
}

void ScanNode::fill(const Region& r, void* out, ThreadState& ts) const {
  if (r.size() == 0) return;
  if (CarryBoard* board = ts.eval ? ts.eval->carry(this) : nullptr) return fill_carried(r, out, ts, *board);
  const size_t k = static_cast<size_t>(axis_);
  const size_t isz = itemsize(dtype());
  // Rows before the scanned axis share no carry: a region larger than a piece is scanned
  // in pieces along its first axis with more than one index, so every pull is a C-order
  // range of about kPieceBytes.
  size_t d0 = 0;
  while (d0 < r.ndim() && r.count[d0] == 1) ++d0;
  if (d0 < k && r.size() * 8 > kPieceBytes) {
    const int64_t rows = std::max<int64_t>(1, kPieceBytes / (r.size() / r.count[d0] * 8));
    char* dst = static_cast<char*>(out);
    for (int64_t i = 0; i < r.count[d0]; i += rows) {
      Region sub = r;
      sub.start[d0] = r.start[d0] + i * r.step[d0];
      sub.count[d0] = std::min(rows, r.count[d0] - i);
      fill(sub, dst, ts);
      dst += sub.size() * static_cast<int64_t>(isz);
    }
    return;
  }
  const Node& in = *inputs()[0];
  const Node& totals = *inputs()[1];
  const Region u = unit_along(r, axis_);
  const int64_t lo = u.start[k], hi = lo + u.count[k];
  Plan p = plan(lo, hi);
  ScratchScope scope(ts.scratch);
  const bool strided = r.step[k] != 1;
  void* dense = strided ? scope.alloc(u.size() * isz) : out;
  dispatch_computing(acc_, [&]<class A>(A*) {
    Split su = split_at(u.count, axis_);
    const int64_t rows =
        piece_depth(std::max<int64_t>(1, kPieceBytes / (su.outer * su.inner * 8)), depth_);  // along the axis
    std::vector<A> carry(static_cast<size_t>(su.outer * su.inner), scan_identity<A>(op_));
    auto fold_range = [&](const Node& n, int64_t a, int64_t e) {  // [a, e) of n along the axis, in pieces
      for (int64_t j = a; j < e; j += rows) {
        ScratchScope piece_scope(ts.scratch);
        Region piece = u;
        piece.start[k] = j;
        piece.count[k] = std::min(rows, e - j);
        const A* x = pull_as<A>(n, piece, acc_, piece_scope, ts);
        fold_carry(op_, x, split_at(piece.count, axis_), carry.data());
      }
    };
    if (p.s > 0) fold_range(totals, 0, p.s);                  // whole segments before: their totals
    if (p.e0 > p.s * seg_) fold_range(in, p.s * seg_, p.e0);  // the part of a segment before the region
    // Output rows [j0, j1) add input rows e0 + j - skip (with include_initial the first
    // output is the carry itself), a piece at a time, written (cast) into `dense`.
    const int64_t skip = include_initial_ ? 1 : 0;
    const size_t osz = itemsize(dtype());
    for (int64_t j0 = 0; j0 < su.len; j0 += rows) {
      ScratchScope piece_scope(ts.scratch);
      const int64_t j1 = std::min(su.len, j0 + rows), plen = j1 - j0;
      const int64_t x0 = std::max(j0, skip) - skip, x1 = j1 - skip;
      const A* x = nullptr;
      if (x1 > x0) {
        Region piece = u;
        piece.start[k] = p.e0 + x0;
        piece.count[k] = x1 - x0;
        x = pull_as<A>(in, piece, acc_, piece_scope, ts);
      }
      A* res = dtype() == acc_ ? nullptr : piece_scope.alloc_n<A>(static_cast<size_t>(su.outer * plen * su.inner));
      for (int64_t o = 0; o < su.outer; ++o) {
        A* __restrict c = carry.data() + o * su.inner;
        if (su.inner == 1) {  // along the last axis (a flattened scan): the running value in a register
          A v = *c;
          A* __restrict dst = res ? res + o * plen : static_cast<A*>(dense) + o * su.len + j0;
          const A* __restrict xo = x ? x + o * (x1 - x0) : nullptr;
          for (int64_t j = j0; j < j1; ++j) {
            if (j >= skip) v = apply(op_, v, xo[j - skip - x0]);
            dst[j - j0] = v;
          }
          *c = v;
        } else {
          for (int64_t j = j0; j < j1; ++j) {
            if (j >= skip) {
              const A* __restrict row = x + (o * (x1 - x0) + (j - skip - x0)) * su.inner;
              for (int64_t i = 0; i < su.inner; ++i) c[i] = apply(op_, c[i], row[i]);
            }
            A* dst =
                res ? res + (o * plen + (j - j0)) * su.inner : static_cast<A*>(dense) + (o * su.len + j) * su.inner;
            std::memcpy(dst, c, su.inner * sizeof(A));
          }
        }
        if (res) {  // cast this piece's rows into place
          const void* src[1] = {res + o * plen * su.inner};
          kernels::lookup_cast(acc_, dtype())(static_cast<char*>(dense) + (o * su.len + j0) * su.inner * osz, src,
                                              plen * su.inner);
        }
      }
    }
  });
  if (strided) pick_along(r, u, axis_, dense, out, isz);
}

int64_t ScanNode::fill_bytes(const Region& r, const MemoryModel& m) const {
  if (r.size() == 0) return 0;
  const size_t k = static_cast<size_t>(axis_);
  size_t d0 = 0;
  while (d0 < r.ndim() && r.count[d0] == 1) ++d0;
  Region u = r;  // one piece, as fill() cuts them
  if (d0 < k && sat_mul(r.size(), 8) > kPieceBytes)
    u.count[d0] = std::min(r.count[d0], std::max<int64_t>(1, kPieceBytes / sat_mul(r.size() / r.count[d0], 8)));
  // A strided region is scanned densely; a region whose carry comes from the chunk
  // before (fill_carried) is held whole in the accumulator's type unless that is the result's.
  const int64_t dense = sat_add(r.step[k] != 1 ? MemoryModel::region_bytes(*this, r) : 0,
                                dtype() != acc_ ? sat_mul(r.bounds().size(), 8) : 0);
  const int64_t cross = u.size() / std::max<int64_t>(1, u.count[k]);
  const int64_t rows = piece_depth(std::max<int64_t>(1, kPieceBytes / std::max<int64_t>(1, sat_mul(cross, 8))), depth_);
  const Box b = u.bounds();
  const Plan p = plan(b.start[k], b.stop[k]);
  Region piece = u;
  piece.start[k] = p.e0;
  piece.step[k] = 1;
  piece.count[k] = std::min(rows, std::max<int64_t>(1, p.e1 - p.e0));
  const Node& in = *inputs()[0];
  // The piece of input, its conversion to the accumulator and the result rows (cast).
  const int64_t held = sat_mul(piece.size(), static_cast<int64_t>(itemsize(in.dtype()) + (in.dtype() != acc_ ? 8 : 0) +
                                                                  (dtype() != acc_ ? 8 : 0)));
  int64_t deepest = m.pull_bytes(in, piece);
  if (p.s > 0) {
    Region t = piece;
    t.start[k] = 0;
    t.count[k] = std::min(rows, p.s);
    deepest = std::max(deepest, m.pull_bytes(*inputs()[1], t));
  }
  return sat_add(sat_add(dense, held), sat_add(deepest, sat_mul(cross, 8)));
}

}  // namespace b2lazy
