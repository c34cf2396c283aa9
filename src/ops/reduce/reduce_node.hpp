// Reductions over axes as lazy nodes. An output region pulls the input region widened
// to the full extent of the reduced axes, consumed in bounded slabs (aligned with the
// input's storage chunks when it has them) and accumulated:
//   float32 and float64 sums, products, means and variances accumulate in float64;
//   integer sums and products in int64 / uint64 (wrapping, as NumPy); slabs are summed
//   sequentially and combined in order; variance merges slabs with Chan's formula.
#pragma once
#include <utility>
#include <vector>

#include "b2lazy/node.hpp"
#include "b2lazy/vocabulary.hpp"
#include "ops/reduce/kernels/kernel.hpp"
#include "ops/reduce/reduced_axes.hpp"

namespace b2lazy {

class SiblingGroup;

class ReduceNode : public Node {
 public:
  ReduceNode(NodePtr input, Reduction r, std::vector<bool> reduced, bool keepdims, DType out, DType acc,
             double correction);
  std::string kind() const override;
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  // The slabs fill(region) pulls its input in, one fill each: a node below that every
  // slab asks the same part of (mean(u) under mean(u - mean(u))) is then seen as pulled
  // again and again, and computed once. At most kMostPieces (consecutive slabs grouped).
  std::vector<Region> pull_pieces(const Region& region, size_t input, size_t worker_bytes) const override;
  bool cacheable() const override { return true; }
  // Reductions of the same kind of fold: the same input shape, reduced axes and slabs.
  std::string lockstep_key() const override;
  // One slab (and its conversion to the accumulator) and its pull, on every worker the
  // slabs are spread over; a region whose thinnest slab is over budget, by its first piece.
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;

  FoldAxis fold_axis(const Region& region) const override;
  std::vector<uint8_t> fold_part(const Region& region, int64_t lo, int64_t hi, ThreadState& ts) const override;
  void fold_merge(const Region& region, std::vector<uint8_t>& into, const uint8_t* part, size_t n) const override;
  void fold_finish(const Region& region, const uint8_t* state, size_t n, void* out) const override;

  Reduction reduction() const { return r_; }
  const std::vector<bool>& reduced() const { return ax_.reduced; }
  // Number of input elements folded into each output element.
  int64_t reduced_count() const { return ax_.count(); }
  // The input axis that output axis `out_axis` keeps, or -1 (a reduced keepdims axis).
  int input_axis(size_t out_axis) const;
  int64_t alignment_along(size_t axis, const AlignmentQuery& q) const override;

 private:
  Region widen(const Region& out) const { return ax_.widen(out); }
  // The slabs a widened input region is folded in, by index: a huge input has too many
  // to list before the work starts.
  class Slabs {
   public:
    Slabs(Region in, Shape piece, const std::vector<bool>& reduced);
    int64_t size() const { return count_; }
    Region at(int64_t i) const;
    // The slabs in order, consecutive ones along the cut axis merged into at most `most`
    // regions (empty when even one region per position on the outer axes is too many).
    std::vector<Region> grouped(int64_t most) const;

   private:
    Region in_;
    Shape piece_, npieces_;  // slab extent and number of slabs per axis
    int64_t count_;
  };
  // `worker_bytes` (max_memory / workers) decides whether slabs follow source chunks seen
  // through a reshape (aligned()).
  Slabs slabs(const Region& in, size_t slab_bytes, size_t worker_bytes) const;
  // May slabs of widened region `in` cut along reduced axis `d` be thinner than a storage
  // chunk (each one C-order range of the chunks it touches, read alone)?
  bool thin_reads(const Region& in, size_t d) const;
  // align_, or none when it was seen through a reshape and a slab one source chunk deep
  // does not fit `worker_bytes` (then the planner's window of blocks bounds memory).
  const Shape& aligned(size_t worker_bytes) const;
  bool split_kept(const Region& region, void* out, ThreadState& ts, size_t slab_bytes, size_t worker_bytes) const;
  // fill() without the sibling group (a piece of split_kept, or a member filled alone).
  void fill_alone(const Region& region, void* out, ThreadState& ts) const;
  // split_kept's pieces: `rows` of output axis `o` per piece (ending on multiples of `al`
  // when aligned), and when even that is over budget `cols` of the last output axis `l`
  // (multiples of `cal`); rows 0: the region is reduced whole, cols 0: whole rows.
  struct Pieces {
    size_t o = 0, l = 0;
    int64_t rows = 0, al = 0, cols = 0, cal = 0;
  };
  Pieces split_pieces(const Region& region, size_t slab_bytes, size_t worker_bytes) const;
  // The input's block extent along input axis `d` when it reads ranges (else 1): what a
  // thinner read decompresses anyway.
  int64_t block_extent(size_t d) const;
  // The first piece of `region` (the largest).
  Region first_piece(const Region& region, const Pieces& p) const;
  // The pieces `region` is cut in (p.rows != 0), with their offsets in its output.
  struct Piece {
    Region part;
    int64_t offset;  // of the piece's first element in the output (elements)
    bool whole;      // whole rows: contiguous in the output
  };
  std::vector<Piece> cut(const Region& region, const Pieces& p) const;
  // A fold of one member of a sibling group, whatever its accumulator type.
  struct Folder {
    virtual ~Folder() = default;
    virtual void consume(const Region& slab, ThreadState& t) = 0;
    virtual void merge(Folder& other) = 0;
    virtual void finish(void* out) const = 0;
  };
  template <class A> struct FolderOf;
  std::unique_ptr<Folder> make_folder(int64_t nout) const;
  // Pulls `slab` of the input, converts it to A and folds it into k.
  template <class A> void consume_slab(reduction::Kernel<A>& k, const Region& slab, ThreadState& t) const;
  // Every member of `g` at `region` (this one into `out`, the others left waiting in g):
  // false when they may not wait (over the group's memory), then nothing is done.
  bool fill_siblings(SiblingGroup& g, const Region& region, void* out, ThreadState& ts) const;
  // The members folded over this node's slabs of widened region `in`, in lockstep: each
  // slab of the shared sources pulled once and lent to every member's pull.
  void fold_lockstep(const SiblingGroup& g, const std::vector<const ReduceNode*>& members, const Region& in,
                     int64_t nout, const std::vector<char*>& outs, ThreadState& ts) const;
  size_t slab_bytes(size_t max_memory, int nworkers) const;
  // Along which axis, and how many rows at a time, a slab is converted to the accumulator
  // (rows 0: whole).
  std::pair<size_t, int64_t> convert_rows(const Region& slab) const;
  // The kernel arguments for an output region of `nout` outputs.
  reduction::KernelArgs kernel_args(int64_t nout) const;
  template <class Use> void fold_input(const Region& in, int64_t nout, ThreadState& ts, Use&& use) const;
  Reduction r_;
  ReducedAxes ax_;
  DType acc_;
  double correction_;
  Shape align_;               // per input axis: storage chunk length to align slabs to (0: none)
  bool range_reads_ = false;  // that source decompresses row ranges of a chunk alone
  bool reshaped_ = false;     // align_ seen through a reshape (or slice) of the source
  int64_t chunk_bytes_ = 0;   // then: the bytes of one source chunk
  Shape unaligned_;           // zeros
  size_t slab_item_ = 1;      // bytes per item that slabs are sized by (widest_item)
  Shape blocks_;              // that source's blocks (what a range read decompresses), or empty
};

}  // namespace b2lazy
