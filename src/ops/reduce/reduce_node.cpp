#include "ops/reduce/reduce_node.hpp"

#include <atomic>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>

#include "b2lazy/checked.hpp"
#include "b2lazy/error.hpp"
#include "b2lazy/ops.hpp"
#include "core/dispatch.hpp"
#include "core/saturating.hpp"
#include "core/strided_copy.hpp"
#include "ops/reduce/kernels/kernel.hpp"
#include "runtime/alignment.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/graph_queries.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/scratch.hpp"
#include "runtime/sibling_group.hpp"
#include "runtime/thread_pool.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {

constexpr size_t kSlabBytes = size_t(4) << 20;

// max_memory per worker of the evaluation (no evaluation: no limit).
size_t worker_budget(const ThreadState& ts) {
  return ts.eval ? ts.eval->max_memory() / static_cast<size_t>(std::max(1, ts.eval->workers()))
                 : std::numeric_limits<size_t>::max();
}

// The widest item a slab of `input` holds on its way in: the input's, or that of any
// operand of the same shape under its elementwise nodes (a bool mask of float32 data pulls
// float32 slabs four times its own size).
size_t widest_item(const NodePtr& input) {
  size_t widest = itemsize(input->dtype());
  std::vector<const Node*> todo{input.get()};
  for (int seen = 0; !todo.empty() && seen < 64; ++seen) {
    const Node& n = *todo.back();
    todo.pop_back();
    widest = std::max(widest, itemsize(n.dtype()));
    if (!n.is_elementwise()) continue;
    for (const NodePtr& in : n.inputs())
      if (in->shape() == input->shape()) todo.push_back(in.get());
  }
  return widest;
}

}  // namespace

ReduceNode::ReduceNode(NodePtr input, Reduction r, std::vector<bool> reduced, bool keepdims, DType out, DType acc,
                       double correction)
    : Node(out, ReducedAxes(input->shape(), reduced, keepdims).out_shape(), {input}),
      r_(r),
      ax_(input->shape(), std::move(reduced), keepdims),
      acc_(acc),
      correction_(correction) {
  align_.assign(input->ndim(), 0);
  if (const Node* src = aligned_storage_source(input)) {
    align_ = src->storage_grid()->chunks();
    range_reads_ = src->reads_ranges();
    blocks_ = src->storage_blocks();
  } else if (SourceAlignment a = source_alignment(input); a.source) {
    align_ = std::move(a.align);  // through a reshape (coarsen) or a slice: whole chunks, read once
    reshaped_ = true;
    const Shape& c = a.source->storage_grid()->chunks();
    int64_t items = 1;
    for (size_t d = 0; d < c.size(); ++d) items = sat_mul(items, std::min(c[d], a.source->shape()[d]));
    chunk_bytes_ = sat_mul(items, static_cast<int64_t>(itemsize(a.source->dtype())));
  }
  unaligned_.assign(input->ndim(), 0);
  slab_item_ = widest_item(input);
}

// A slab one chunk deep seen through a reshape holds about twice a chunk on its worker
// (the slab and the chunk decompressed): under three chunks a worker, the planner's
// window of decompressed blocks keeps memory bounded instead.
const Shape& ReduceNode::aligned(size_t worker_bytes) const {
  if (!reshaped_ || sat_mul(chunk_bytes_, 3) <=
                        static_cast<int64_t>(std::min<size_t>(worker_bytes, std::numeric_limits<int64_t>::max())))
    return align_;
  return unaligned_;
}

std::string ReduceNode::kind() const { return reduction_name(r_); }

std::string ReduceNode::describe() const {
  return std::string(reduction_name(r_)) + "(axis=" + ax_.axes() + (ax_.keepdims ? ", keepdims" : "") + ") -> " +
         dtype_name(dtype()) + " " + shape_str(shape()) + "; pulls the input widened to the reduced axes, in slabs";
}

std::vector<Region> ReduceNode::input_regions(const Region& r) const { return {widen(r)}; }

// A slab of `in` cut along reduced axis `d` is one C-order range of each storage chunk it
// touches when `in` has extent 1 along the axes before `d` and is whole along the axes
// after it; a source that reads ranges then decompresses just that range, so slabs
// thinner than a chunk cost no extra decompression.
bool ReduceNode::thin_reads(const Region& in, size_t d) const {
  if (!range_reads_ || d >= in.ndim() || !ax_.reduced[d]) return false;
  const Shape& full = inputs()[0]->shape();
  for (size_t e = 0; e < in.ndim(); ++e) {
    if (e < d && in.count[e] != 1) return false;
    if (e > d && !(in.start[e] == 0 && in.count[e] == full[e] && in.step[e] == 1)) return false;
  }
  return true;
}

// Split the widened region along reduced axes into slabs of about `slab_bytes`,
// innermost reduced axes whole first, cut at storage-chunk boundaries when known.
ReduceNode::Slabs ReduceNode::slabs(const Region& in, size_t slab_bytes, size_t worker_bytes) const {
  const Shape& align = aligned(worker_bytes);
  const size_t n = in.ndim();
  const int64_t isz = static_cast<int64_t>(slab_item_);
  int64_t kept = 1;
  for (size_t d = 0; d < n; ++d)
    if (!ax_.reduced[d]) kept *= in.count[d];
  int64_t room = std::max<int64_t>(1, static_cast<int64_t>(slab_bytes) / isz / std::max<int64_t>(kept, 1));
  Shape piece(n);
  for (size_t d = 0; d < n; ++d) piece[d] = in.count[d];
  int64_t acc = 1;
  bool cut = false;
  for (size_t d = n; d-- > 0;) {
    if (!ax_.reduced[d]) continue;
    if (cut) {
      piece[d] = 1;
      continue;
    }
    if (acc * in.count[d] <= room) {
      acc *= in.count[d];
      continue;
    }
    int64_t p = std::max<int64_t>(1, room / acc);
    // Slabs end on storage chunks (a cut chunk is decompressed twice), unless a thinner
    // slab is read alone: then a chunk-deep slab over budget is not worth its memory.
    if (align[d] > 0 && !(align[d] > p && thin_reads(in, d))) p = std::max<int64_t>(align[d], p / align[d] * align[d]);
    else if (const int64_t bd = block_extent(d); bd > 1)  // thin slabs: whole blocks deep
      p = std::max<int64_t>(bd, p / bd * bd);
    piece[d] = std::min(p, in.count[d]);
    cut = true;
  }
  return Slabs(in, std::move(piece), ax_.reduced);
}

ReduceNode::Slabs::Slabs(Region in, Shape piece, const std::vector<bool>& reduced)
    : in_(std::move(in)), piece_(std::move(piece)), npieces_(in_.ndim(), 1) {
  for (size_t d = 0; d < in_.ndim(); ++d)
    if (reduced[d] && in_.count[d] > 0) npieces_[d] = ceil_div(in_.count[d], piece_[d]);
  count_ = prod(npieces_);
}

// Slab i in C order over the pieces of the reduced axes (the order they are folded in).
Region ReduceNode::Slabs::at(int64_t i) const {
  Region s = in_;
  for (size_t d = in_.ndim(); d-- > 0;) {
    if (npieces_[d] == 1 && piece_[d] == in_.count[d]) continue;  // whole axis (kept ones too)
    const int64_t k = i % npieces_[d];
    i /= npieces_[d];
    s.start[d] = in_.start[d] + k * piece_[d];  // (reduced axes: step 1; a part of them starts inside)
    s.count[d] = std::min(piece_[d], in_.count[d] - k * piece_[d]);
  }
  return s;
}

std::vector<Region> ReduceNode::Slabs::grouped(int64_t most) const {
  std::vector<Region> out;
  if (count_ <= most) {
    for (int64_t i = 0; i < count_; ++i) out.push_back(at(i));
    return out;
  }
  size_t d = in_.ndim();  // the cut axis: the innermost one in pieces (at() varies it fastest)
  for (size_t e = in_.ndim(); e-- > 0 && d == in_.ndim();)
    if (npieces_[e] > 1) d = e;
  const int64_t along = npieces_[d], outer = count_ / along;
  if (outer >= most) return out;
  const int64_t per = ceil_div(along, std::max<int64_t>(1, most / outer));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < along; k += per) {
      Region r = at(o * along + k);
      const Region last = at(o * along + std::min(along, k + per) - 1);
      r.count[d] = last.start[d] + last.count[d] - r.start[d];
      out.push_back(std::move(r));
    }
  return out;
}

namespace {
// A slab is converted to the accumulator's type in pieces of about this many bytes.
constexpr int64_t kConvertBytes = int64_t(1) << 20;
}  // namespace

// Along which axis, and how many of its rows at a time, a slab is converted and folded:
// its first axis longer than 1, when reduced (then a run of its rows is contiguous in the
// slab and a slab of its own); rows 0: the slab whole. Moments fold a piece in two passes
// and merge it into every output (an O(outputs) step): in pieces of 8 MiB, as 1 MiB pieces
// of a (24, 181, 360) slab, two rows, would pay that step for two values per output.
std::pair<size_t, int64_t> ReduceNode::convert_rows(const Region& slab) const {
  const bool moments = reduction_info(r_).takes_correction;  // var, std and their nan* forms
  const int64_t piece = moments ? 8 * kConvertBytes : kConvertBytes;
  size_t d = 0;
  while (d < slab.ndim() && slab.count[d] == 1) ++d;
  if (d == slab.ndim() || !ax_.reduced[d] || slab.size() == 0) return {d, 0};
  const int64_t row = (slab.size() / slab.count[d]) * static_cast<int64_t>(itemsize(acc_));
  const int64_t rows = std::max<int64_t>(1, piece / std::max<int64_t>(1, row));
  return {d, rows >= slab.count[d] ? 0 : rows};
}

// What a read thinner than this along input axis d decompresses anyway (a block).
int64_t ReduceNode::block_extent(size_t d) const {
  return range_reads_ && d < blocks_.size() ? std::max<int64_t>(1, blocks_[d]) : 1;
}

// When even the thinnest slab of `region` (one storage chunk deep along the reduced
// axes) is over budget, reduce the region in pieces along its leading output axis,
// which keeps each piece's output contiguous. Pieces follow the input's chunks, or its
// blocks when it reads ranges: a piece thinner than a block decompresses the whole block,
// and so does the next one (sum(a3, axis=1) over (n, 4, 16) column strips read each
// block 8 times in 64-row pieces). A piece of whole blocks still over budget is cut
// along the last output axis too, at the input's block (or chunk) boundaries there.
ReduceNode::Pieces ReduceNode::split_pieces(const Region& region, size_t slab_bytes, size_t worker_bytes) const {
  Pieces p;
  const Shape& align = aligned(worker_bytes);
  const Node& input = *inputs()[0];
  const size_t isz = slab_item_;
  {  // Slabs one block thin along the first axis that is not 1, read alone: bytes per
     // slab (a thinner one decompresses the whole blocks, and the next slab again).
    const Region in = widen(region);
    size_t d = 0;
    while (d < in.ndim() && in.count[d] == 1) ++d;
    const int64_t deep = d < in.ndim() ? std::min(block_extent(d), in.count[d]) : 1;
    if (d < in.ndim() && in.count[d] > 0 && thin_reads(in, d) &&
        static_cast<size_t>(in.size() / in.count[d] * deep) * isz <= slab_bytes)
      return p;
  }
  // Elements of the thinnest slab per output element (chunk-deep). Through a reshape, the
  // reduced axes inside the first kept one are whole: a slab cutting them (a 48-day
  // coarsening's first 24 days of each window) is strided over the source, and the
  // reshape pulls the rows around it, reading each chunk twice.
  size_t first_kept = 0;
  while (first_kept < ax_.reduced.size() && (ax_.reduced[first_kept] || input.shape()[first_kept] == 1)) ++first_kept;
  int64_t thin = 1;
  for (size_t d = 0; d < ax_.reduced.size(); ++d)
    if (ax_.reduced[d])
      thin *= std::min<int64_t>(input.shape()[d], reshaped_ && align[d] > 0 && d > first_kept ? input.shape()[d]
                                                  : align[d] > 0                              ? align[d]
                                                                                              : 1);
  if (static_cast<size_t>(region.size() * thin) * isz <= slab_bytes) return p;
  size_t o = 0;
  while (o < region.ndim() && region.count[o] == 1) ++o;
  if (o == region.ndim()) return p;
  const int in_axis = input_axis(o);
  if (in_axis < 0) return p;
  const int64_t per_row = region.size() / region.count[o];
  int64_t rows = std::max<int64_t>(1, static_cast<int64_t>(slab_bytes / isz) / std::max<int64_t>(per_row * thin, 1));
  int64_t al = align[static_cast<size_t>(in_axis)];
  // Pieces thinner than a chunk cost no extra decompression when the source reads row
  // ranges alone (of whole blocks); then a chunk-deep piece far over budget is not worth
  // its memory.
  if (al > 0 && range_reads_ &&
      al > static_cast<int64_t>(4 * slab_bytes / isz) / (per_row * thin)) {  // (no product to overflow)
    al = blocks_.empty() ? 0 : blocks_[static_cast<size_t>(in_axis)];
    if (al >= region.count[o]) al = 0, rows = region.count[o];
  }
  if (al > 0 && region.step[o] == 1) rows = std::max(al, rows / al * al);
  p.o = o;
  p.al = region.step[o] == 1 ? al : 0;
  p.rows = std::min(rows, region.count[o]);
  // Whole blocks over budget: cut the last output axis as well.
  size_t l = region.ndim() - 1;
  const int il = l > o ? input_axis(l) : -1;
  if (il >= 0 && region.step[l] == 1 && static_cast<size_t>(p.rows * per_row * thin) * isz > slab_bytes) {
    const int64_t per_col = p.rows * (per_row / std::max<int64_t>(1, region.count[l])) * thin;
    int64_t cols = std::max<int64_t>(1, static_cast<int64_t>(slab_bytes / isz) / std::max<int64_t>(per_col, 1));
    const size_t ia = static_cast<size_t>(il);
    int64_t cal = range_reads_ && !blocks_.empty() ? blocks_[ia] : align[ia];
    if (cal > 0) cols = std::max(cal, cols / cal * cal);
    if (cols < region.count[l]) p.l = l, p.cols = cols, p.cal = cal;
  }
  if (p.rows >= region.count[o] && p.cols == 0) p.rows = 0;
  return p;
}

namespace {
// Along an output axis from `pos`: the length of the next piece of about `len`, ending on
// a multiple of `al` when aligned, at most `left`.
int64_t piece_len(int64_t pos, int64_t len, int64_t al, int64_t left) {
  if (al <= 0) return std::min(len, left);
  int64_t end = (pos + len) / al * al;
  if (end <= pos) end = (pos / al + 1) * al;
  return std::min(left, end - pos);
}
}  // namespace

Region ReduceNode::first_piece(const Region& region, const Pieces& p) const {
  Region r = region;
  if (p.rows == 0) return r;
  r.count[p.o] = std::min(p.rows, region.count[p.o]);
  if (p.cols) r.count[p.l] = std::min(p.cols, region.count[p.l]);
  return r;
}

std::vector<ReduceNode::Piece> ReduceNode::cut(const Region& region, const Pieces& p) const {
  const size_t o = p.o;
  std::vector<Piece> pieces;  // (few: each is about a slab)
  const int64_t per_row = region.size() / region.count[o];
  for (int64_t r0 = 0; r0 < region.count[o];) {
    Region sub = region;
    sub.start[o] = region.start[o] + r0 * region.step[o];
    sub.count[o] = piece_len(sub.start[o], p.rows, p.al, region.count[o] - r0);
    if (p.cols == 0) {
      pieces.push_back({sub, r0 * per_row, true});
    } else {
      const Shape strides = byte_strides(sub.count, 1);  // element strides
      for (int64_t c0 = 0; c0 < sub.count[p.l];) {
        Region part = sub;
        part.start[p.l] = sub.start[p.l] + c0 * sub.step[p.l];
        part.count[p.l] = piece_len(part.start[p.l], p.cols, p.cal, sub.count[p.l] - c0);
        pieces.push_back({part, r0 * per_row + c0 * strides[p.l], false});
        c0 += part.count[p.l];
      }
    }
    r0 += sub.count[o];
  }
  return pieces;
}

bool ReduceNode::split_kept(const Region& region, void* out, ThreadState& ts, size_t slab_bytes,
                            size_t worker_bytes) const {
  const Pieces p = split_pieces(region, slab_bytes, worker_bytes);
  if (p.rows == 0) return false;
  const std::vector<Piece> pieces = cut(region, p);
  char* dst = static_cast<char*>(out);
  const size_t osz = itemsize(dtype());
  const Shape out_strides = byte_strides(region.count, osz);
  auto run = [&](const Piece& pc, ThreadState& t) {
    if (pc.whole) return fill_alone(pc.part, dst + pc.offset * static_cast<int64_t>(osz), t);
    ScratchScope scope(t.scratch);  // a piece of columns, reduced into scratch and copied into its place
    char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(pc.part.size()) * osz));
    fill_alone(pc.part, buf, t);
    const Shape bs = byte_strides(pc.part.count, osz);
    copy_strided(pc.part.ndim(), pc.part.count.data(), buf, bs.data(), dst + pc.offset * static_cast<int64_t>(osz),
                 out_strides.data(), osz);
  };
  // The one chunk of a pass: its pieces go to the workers (each piece's output is its own).
  if (ts.can_fork && ts.eval && ts.eval->workers() > 1 && pieces.size() > 1) {
    ts.eval->parallel_for(static_cast<int64_t>(pieces.size()),
                          [&](int64_t i, int, ThreadState& wts) { run(pieces[static_cast<size_t>(i)], wts); });
  } else {
    for (const Piece& pc : pieces) run(pc, ts);
  }
  return true;
}

namespace {
// Pieces a planner walks per pull: enough to see a node pulled by every slab, few enough
// that planning a huge reduction does not walk the graph once per slab.
constexpr int64_t kMostPieces = 64;
}  // namespace

std::vector<Region> ReduceNode::pull_pieces(const Region& region, size_t, size_t worker_bytes) const {
  if (region.size() == 0) return {};
  const size_t sb = std::min(kSlabBytes, std::max<size_t>(size_t(256) << 10, worker_bytes / 16));
  const Pieces p = split_pieces(region, sb, worker_bytes);
  std::vector<Region> parts;
  if (p.rows == 0) {
    parts.push_back(region);
  } else {  // as split_kept cuts it (rows, then columns)
    for (int64_t r0 = 0; r0 < region.count[p.o];) {
      Region sub = region;
      sub.start[p.o] = region.start[p.o] + r0 * region.step[p.o];
      sub.count[p.o] = piece_len(sub.start[p.o], p.rows, p.al, region.count[p.o] - r0);
      r0 += sub.count[p.o];
      if (p.cols == 0) {
        parts.push_back(sub);
        continue;
      }
      for (int64_t c0 = 0; c0 < sub.count[p.l];) {
        Region part = sub;
        part.start[p.l] = sub.start[p.l] + c0 * sub.step[p.l];
        part.count[p.l] = piece_len(part.start[p.l], p.cols, p.cal, sub.count[p.l] - c0);
        c0 += part.count[p.l];
        parts.push_back(std::move(part));
      }
    }
  }
  if (static_cast<int64_t>(parts.size()) > kMostPieces) return {};
  std::vector<Region> out;
  const int64_t each = std::max<int64_t>(1, kMostPieces / static_cast<int64_t>(parts.size()));
  for (const Region& part : parts) {
    const Region in = widen(part);
    const Slabs s = slabs(in, sb, worker_bytes);
    if (in.size() == 0 || s.size() == 0) continue;
    std::vector<Region> g = s.grouped(each);
    if (g.empty()) return {};
    for (Region& r : g) out.push_back(std::move(r));
  }
  if (out.size() == 1) return {};  // one slab: the whole region
  return out;
}

namespace {
// Strides of the flat index in the reduced sub-space of the input (argmin/argmax).
Shape reduced_strides(const Shape& in, const std::vector<bool>& reduced) {
  Shape rst(in.size(), 0);
  int64_t s = 1;
  for (size_t d = in.size(); d-- > 0;)
    if (reduced[d]) {
      rst[d] = s;
      s *= in[d];
    }
  return rst;
}
}  // namespace

template <class A> void ReduceNode::consume_slab(reduction::Kernel<A>& k, const Region& slab, ThreadState& t) const {
  const Node& input = *inputs()[0];
  ScratchScope scope(t.scratch);
  const int64_t m = slab.size();
  const void* raw = input.pull_view(slab, t);  // zero-copy when the input holds it densely
  if (!raw) {
    void* buf = scope.alloc(m * itemsize(input.dtype()));
    input.pull(slab, buf, t);
    raw = buf;
  }
  if (input.dtype() == acc_) return k.consume(static_cast<const A*>(raw), slab, ax_.reduced);
  // Converted to the accumulator's type a few rows at a time (float32 -> float64 of a
  // whole slab would double its memory, and leave the cache before it is folded).
  const auto cast = kernels::lookup_cast(input.dtype(), acc_);
  const auto [d, rows] = convert_rows(slab);
  const int64_t per_row = d < slab.ndim() ? m / slab.count[d] : m;
  A* conv = static_cast<A*>(scope.alloc(static_cast<size_t>(rows ? rows * per_row : m) * sizeof(A)));
  const size_t in_row = static_cast<size_t>(per_row) * itemsize(input.dtype());
  if (rows == 0) {
    const void* src[1] = {raw};
    cast(conv, src, m);
    return k.consume(conv, slab, ax_.reduced);
  }
  for (int64_t r0 = 0; r0 < slab.count[d]; r0 += rows) {
    Region sub = slab;
    sub.start[d] = slab.start[d] + r0;  // (a reduced axis: step 1)
    sub.count[d] = std::min(rows, slab.count[d] - r0);
    const void* src[1] = {static_cast<const char*>(raw) + static_cast<size_t>(r0) * in_row};
    cast(conv, src, sub.size());
    k.consume(conv, sub, ax_.reduced);
  }
}

// Folds input region `in` (widened from an output region of `nout` elements) in slabs,
// spread over the workers when `ts` may fork, and hands the Folder<A> to use(folder).
template <class Use> void ReduceNode::fold_input(const Region& in, int64_t nout, ThreadState& ts, Use&& use) const {
  const size_t slab_bytes = ts.eval ? this->slab_bytes(ts.eval->max_memory(), ts.eval->workers()) : kSlabBytes;
  const Slabs parts = slabs(in, slab_bytes, worker_budget(ts));  // one at a time: never listed (a huge input has many)
  const int64_t nparts = in.size() ? parts.size() : 0;
  const reduction::KernelArgs args = kernel_args(nout);
  // Accumulate in acc_'s C++ type; the slab is converted to it first.
  dispatch_computing(acc_, [&]<class A>(A*) {
    using Kernel = reduction::Kernel<A>;
    auto consume = [&](Kernel& k, const Region& slab, ThreadState& t) { consume_slab<A>(k, slab, t); };
    std::unique_ptr<Kernel> main = reduction::make_kernel<A>(args);
    const bool fork = ts.can_fork && ts.eval && nparts > 1 && ts.eval->workers() > 1;
    if (!fork) {
      for (int64_t i = 0; i < nparts; ++i) consume(*main, parts.at(i), ts);
    } else {  // spread the slabs over the workers, then merge their partial results
      Evaluation& ev = *ts.eval;
      const int nw = static_cast<int>(std::min<int64_t>(nparts, ev.workers()));
      std::vector<std::unique_ptr<Kernel>> partial(nw);
      ev.parallel_for(nparts, [&](int64_t i, int w, ThreadState& wts) {
        if (!partial[w]) partial[w] = reduction::make_kernel<A>(args);
        consume(*partial[w], parts.at(i), wts);
      });
      for (auto& p : partial)
        if (p) main->merge(*p);
    }
    use(*main);
  });
}

void ReduceNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  if (SiblingGroup* g = ts.eval ? ts.eval->siblings(this) : nullptr)
    if (g->take(this, region, out) || fill_siblings(*g, region, out, ts)) return;
  fill_alone(region, out, ts);
}

void ReduceNode::fill_alone(const Region& region, void* out, ThreadState& ts) const {
  const int64_t nout = region.size();
  if (nout == 0) return;
  const size_t slab_bytes = ts.eval ? this->slab_bytes(ts.eval->max_memory(), ts.eval->workers()) : kSlabBytes;
  if (split_kept(region, out, ts, slab_bytes, worker_budget(ts))) return;
  fold_input(widen(region), nout, ts, [&](const auto& k) { k.finalize(out, dtype()); });
}

// Parts along the outermost reduced axis (slabs are cut along it last, so a part is whole
// slabs), on the input's storage chunks; not for a region fill() would cut into pieces.
Node::FoldAxis ReduceNode::fold_axis(const Region& region) const {
  FoldAxis f;
  const Shape& in = inputs()[0]->shape();
  for (size_t d = 0; d < ax_.reduced.size(); ++d)
    if (ax_.reduced[d] && in[d] > 1) {
      if (region.size() == 0 || split_pieces(region, kSlabBytes, std::numeric_limits<size_t>::max()).rows != 0)
        return f;
      f.axis = static_cast<int>(d);
      f.extent = in[d];
      f.align = align_[d] > 0 ? align_[d] : 1;
      return f;
    }
  return f;
}

std::vector<uint8_t> ReduceNode::fold_part(const Region& region, int64_t lo, int64_t hi, ThreadState& ts) const {
  const FoldAxis f = fold_axis(region);
  if (f.extent == 0 || lo < 0 || hi > f.extent || lo > hi)
    throw ValueError(std::string(reduction_name(r_)) + ": no part [" + std::to_string(lo) + ", " + std::to_string(hi) +
                     ") of its input along the folded axis");
  Region in = widen(region);
  const size_t d = static_cast<size_t>(f.axis);
  in.start[d] = lo;
  in.count[d] = hi - lo;
  std::vector<uint8_t> state;
  fold_input(in, region.size(), ts, [&](const auto& k) { k.save(state); });
  return state;
}

reduction::KernelArgs ReduceNode::kernel_args(int64_t nout) const {
  return {r_, acc_, nout, reduced_count(), reduced_strides(inputs()[0]->shape(), ax_.reduced), correction_};
}

void ReduceNode::fold_merge(const Region& region, std::vector<uint8_t>& into, const uint8_t* part, size_t n) const {
  dispatch_computing(acc_, [&]<class A>(A*) {
    auto a = reduction::make_kernel<A>(kernel_args(region.size())),
         b = reduction::make_kernel<A>(kernel_args(region.size()));
    a->load(into.data(), into.size());
    b->load(part, n);
    a->merge(*b);
    into.clear();
    a->save(into);
  });
}

void ReduceNode::fold_finish(const Region& region, const uint8_t* state, size_t n, void* out) const {
  dispatch_computing(acc_, [&]<class A>(A*) {
    auto k = reduction::make_kernel<A>(kernel_args(region.size()));
    k->load(state, n);
    k->finalize(out, dtype());
  });
}

int ReduceNode::input_axis(size_t o) const {
  for (size_t d = 0; d < ax_.out_axis.size(); ++d)
    if (ax_.out_axis[d] == static_cast<int>(o) && !ax_.reduced[d]) return static_cast<int>(d);
  return -1;
}

size_t ReduceNode::slab_bytes(size_t max_memory, int nworkers) const {
  return std::min(kSlabBytes,
                  std::max<size_t>(size_t(256) << 10, max_memory / 16 / static_cast<size_t>(std::max(1, nworkers))));
}

int64_t ReduceNode::fill_bytes(const Region& region, const MemoryModel& m) const {
  if (region.size() == 0) return 0;
  const Node& input = *inputs()[0];
  const size_t sb = slab_bytes(m.max_memory(), m.nworkers());
  const size_t wb = m.max_memory() / static_cast<size_t>(std::max(1, m.nworkers()));
  const Pieces p = split_pieces(region, sb, wb);
  const Region r = first_piece(region, p);
  int64_t held = 0;  // a piece of columns is reduced into scratch, then copied out
  if (p.cols) held = MemoryModel::region_bytes(*this, r);
  const Region in = widen(r);
  const Slabs parts = slabs(in, sb, wb);
  if (in.size() == 0 || parts.size() == 0) return 0;
  const Region slab = parts.at(0);  // the first slab is a whole one
  int64_t one = m.in_place(input, slab) ? 0 : MemoryModel::region_bytes(input, slab);
  if (input.dtype() != acc_) {
    const auto [d, rows] = convert_rows(slab);
    const int64_t converted = rows ? rows * (slab.size() / slab.count[d]) : slab.size();
    one = sat_add(one, sat_mul(converted, static_cast<int64_t>(itemsize(acc_))));
  }
  one = sat_add(sat_add(one, m.pull_bytes(input, slab)), sat_mul(r.size(), 24));  // the accumulators (moments, indices)
  if (p.rows != 0) return m.spread(sat_add(held, one));  // pieces go to the workers, each folds its own slabs
  return parts.size() > 1 ? m.spread(one) : one;
}

// ---------------------------------------------------------------- siblings in lockstep

std::string ReduceNode::lockstep_key() const {
  std::string k = "reduce|" + shape_str(inputs()[0]->shape()) + "|" + shape_str(shape()) + "|";
  for (bool r : ax_.reduced) k += r ? '1' : '0';
  k += ax_.keepdims ? "|k|" : "||";
  return k + shape_str(align_) + (range_reads_ ? "|r|" : "||") + shape_str(blocks_);
}

template <class A> struct ReduceNode::FolderOf final : ReduceNode::Folder {
  FolderOf(const ReduceNode& n, int64_t nout) : node(n), k(reduction::make_kernel<A>(n.kernel_args(nout))) {}
  void consume(const Region& slab, ThreadState& t) override { node.consume_slab<A>(*k, slab, t); }
  void merge(Folder& other) override { k->merge(*static_cast<FolderOf&>(other).k); }
  void finish(void* out) const override { k->finalize(out, node.dtype()); }
  const ReduceNode& node;
  std::unique_ptr<reduction::Kernel<A>> k;
};

std::unique_ptr<ReduceNode::Folder> ReduceNode::make_folder(int64_t nout) const {
  std::unique_ptr<Folder> f;
  dispatch_computing(acc_, [&]<class A>(A*) { f = std::make_unique<FolderOf<A>>(*this, nout); });
  return f;
}

namespace {
// The region of `target` that pulling `region` of `n` asks, through the first path to it.
bool region_below(const Node& n, const Region& region, const Node* target, Region& out, int depth = 0) {
  if (&n == target) {
    out = region;
    return true;
  }
  if (depth > 256 || n.decompresses()) return false;
  const std::vector<Region> ins = n.input_regions(region);
  for (size_t i = 0; i < ins.size() && i < n.inputs().size(); ++i)
    if (region_below(*n.inputs()[i], ins[i], target, out, depth + 1)) return true;
  return false;
}
}  // namespace

void ReduceNode::fold_lockstep(const SiblingGroup& g, const std::vector<const ReduceNode*>& members, const Region& in,
                               int64_t nout, const std::vector<char*>& outs, ThreadState& ts) const {
  const size_t slab_bytes = ts.eval ? this->slab_bytes(ts.eval->max_memory(), ts.eval->workers()) : kSlabBytes;
  const Slabs parts = slabs(in, slab_bytes, worker_budget(ts));
  const int64_t nparts = in.size() ? parts.size() : 0;
  using Folders = std::vector<std::unique_ptr<Folder>>;
  auto make = [&] {
    Folders f;
    for (const ReduceNode* m : members) f.push_back(m->make_folder(nout));
    return f;
  };
  auto consume = [&](Folders& f, const Region& slab, ThreadState& t) {
    ScratchScope scope(t.scratch);
    std::vector<std::unique_ptr<LendScope>> lent;  // (declared after scope: unlent first)
    for (const NodePtr& src : g.shared) {
      Region r;
      if (!t.nodes || !region_below(*inputs()[0], slab, src.get(), r) || r.size() == 0) continue;
      const void* v = src->pull_view(r, t);
      if (!v) {
        void* buf = scope.alloc(static_cast<size_t>(r.size()) * itemsize(src->dtype()));
        src->pull(r, buf, t);
        v = buf;
      }
      lent.push_back(std::make_unique<LendScope>(t, src.get(), r, v));
    }
    for (auto& one : f) one->consume(slab, t);
  };
  Folders main = make();
  const bool fork = ts.can_fork && ts.eval && nparts > 1 && ts.eval->workers() > 1;
  if (!fork) {
    for (int64_t i = 0; i < nparts; ++i) consume(main, parts.at(i), ts);
  } else {
    Evaluation& ev = *ts.eval;
    std::vector<Folders> partial(static_cast<size_t>(std::min<int64_t>(nparts, ev.workers())));
    ev.parallel_for(nparts, [&](int64_t i, int w, ThreadState& wts) {
      Folders& f = partial[static_cast<size_t>(w)];
      if (f.empty()) f = make();
      consume(f, parts.at(i), wts);
    });
    for (Folders& f : partial)
      for (size_t j = 0; j < f.size(); ++j) main[j]->merge(*f[j]);
  }
  for (size_t j = 0; j < main.size(); ++j) main[j]->finish(outs[j]);
}

bool ReduceNode::fill_siblings(SiblingGroup& g, const Region& region, void* out, ThreadState& ts) const {
  std::vector<const ReduceNode*> members;
  size_t me = g.members.size(), waiting = 0;
  for (const Node* m : g.members) {
    if (m != this && ts.eval && ts.eval->stage(m)) continue;  // computed already (a stage)
    if (m == this) me = members.size();
    else waiting += static_cast<size_t>(region.size()) * itemsize(m->dtype());
    members.push_back(static_cast<const ReduceNode*>(m));  // (the same lockstep_key: reductions)
  }
  if (me == members.size() || members.size() < 2 || !g.reserve(waiting)) return false;
  std::vector<std::vector<uint8_t>> values(members.size());
  std::vector<char*> outs(members.size());
  for (size_t j = 0; j < members.size(); ++j) {
    if (j == me) {
      outs[j] = static_cast<char*>(out);
      continue;
    }
    values[j].resize(static_cast<size_t>(region.size()) * itemsize(members[j]->dtype()));
    outs[j] = reinterpret_cast<char*>(values[j].data());
  }
  try {
    const size_t sb = ts.eval ? slab_bytes(ts.eval->max_memory(), ts.eval->workers()) : kSlabBytes;
    const Pieces p = split_pieces(region, sb, worker_budget(ts));
    if (p.rows == 0) {
      fold_lockstep(g, members, widen(region), region.size(), outs, ts);
    } else {  // as split_kept: pieces (each over budget whole), each folded in lockstep
      const std::vector<Piece> pieces = cut(region, p);
      auto run = [&](const Piece& pc, ThreadState& t) {
        ScratchScope scope(t.scratch);
        std::vector<char*> bufs(members.size());
        for (size_t j = 0; j < members.size(); ++j)
          bufs[j] =
              static_cast<char*>(scope.alloc(static_cast<size_t>(pc.part.size()) * itemsize(members[j]->dtype())));
        fold_lockstep(g, members, widen(pc.part), pc.part.size(), bufs, t);
        for (size_t j = 0; j < members.size(); ++j) {
          const size_t osz = itemsize(members[j]->dtype());
          const Shape bs = byte_strides(pc.part.count, osz), os = byte_strides(region.count, osz);
          copy_strided(pc.part.ndim(), pc.part.count.data(), bufs[j], bs.data(),
                       outs[j] + pc.offset * static_cast<int64_t>(osz), os.data(), osz);
        }
      };
      if (ts.can_fork && ts.eval && ts.eval->workers() > 1 && pieces.size() > 1)
        ts.eval->parallel_for(static_cast<int64_t>(pieces.size()),
                              [&](int64_t i, int, ThreadState& wts) { run(pieces[static_cast<size_t>(i)], wts); });
      else
        for (const Piece& pc : pieces) run(pc, ts);
    }
  } catch (...) {
    g.release(waiting);
    throw;
  }
  for (size_t j = 0; j < members.size(); ++j)
    if (j != me) g.put(members[j], region, std::move(values[j]));
  return true;
}

int64_t ReduceNode::alignment_along(size_t axis, const AlignmentQuery& q) const {
  const int d = input_axis(axis);
  return d < 0 ? 0 : q.of(*inputs()[0], static_cast<size_t>(d));
}

}  // namespace b2lazy
