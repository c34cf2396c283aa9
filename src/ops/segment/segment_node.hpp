// Segment reduction: the input reduced along one axis by integer group codes (xarray's
// groupby and resample reductions). An output region holds some groups; it pulls only the
// input rows whose codes are among them, in slabs that follow the input's storage chunks
// along the axis (each chunk read once per output region, however many groups it feeds),
// and folds each run of equal codes into that group's partial (the reduction kernel
// families of src/ops/reduce/kernels: sum, mean, moments, min/max, ...). Slabs are spread
// over the workers, each with its own partials, merged at the end.
#pragma once
#include <memory>
#include <vector>

#include "b2lazy/node.hpp"
#include "b2lazy/vocabulary.hpp"
#include "ops/reduce/kernels/kernel.hpp"

namespace b2lazy {

// The codes of one axis: code per row (-1: dropped), rows per group.
struct SegmentCodes {
  std::vector<int64_t> code;
  std::vector<int64_t> count;        // ngroups entries
  std::vector<int64_t> first, last;  // per group its first and last row (-1: empty)
  SegmentCodes(std::vector<int64_t> codes, int64_t ngroups);
  int64_t ngroups() const { return static_cast<int64_t>(count.size()); }
};

enum class SegmentFold { Kernel, First, Last, NanFirst, NanLast };

class SegmentReduceNode : public Node {
 public:
  // `r`: the kernel family's reduction (fold Kernel); `empty_nan`: empty groups are NaN.
  SegmentReduceNode(NodePtr input, size_t axis, std::shared_ptr<const SegmentCodes> codes, SegmentFold fold,
                    Reduction r, DType out, DType acc, double correction, bool empty_nan, std::string name);
  std::string kind() const override { return "segment_" + name_; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  // The hull of the rows of the region's groups (fill reads only those rows, in slabs).
  std::vector<Region> input_regions(const Region& region) const override;
  std::vector<Region> pull_pieces(const Region& region, size_t input, size_t worker_bytes) const override;
  bool cacheable() const override { return true; }
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  // Output chunks whole along the other axes where the input's chunks are (a split there
  // reads every input chunk again per piece: a climatology over 16 tiles kept the whole
  // input in memory), and along the groups: all of them, or for sorted codes over an
  // input stored in chunks along the axis (resample) about 4 MiB of groups, each such
  // chunk reading its own rows; at most 32 MiB.
  Shape preferred_chunks() const override;
  Shape kept_chunks(const Shape& box, size_t target_bytes, size_t most_bytes) const override;
  // Unsorted codes (a climatology): a kept result is filled in one region, its slabs
  // spread over the workers; tiles of a few groups would each read most of the input.
  bool fills_whole_box() const override { return !sorted_; }

  size_t axis() const { return axis_; }

 private:
  // A slab: input rows [lo, hi) along the axis, read in one pull.
  struct Slab {
    int64_t lo, hi;
  };
  // The slabs of the rows `region`'s groups need, at most about `slab_bytes` each unless
  // one storage chunk is more (a chunk cut in two is decompressed twice).
  std::vector<Slab> slabs(const Region& region, size_t slab_bytes) const;
  Region slab_region(const Region& region, const Slab& s) const;
  // The region's local group index of code c, or -1.
  int64_t local_group(const Region& region, int64_t c) const;
  size_t slab_bytes(size_t max_memory, int nworkers) const;
  reduction::KernelArgs kernel_args(int64_t nout, int64_t group) const;
  template <class A> std::unique_ptr<reduction::Kernel<A>> make(int64_t nout, int64_t group) const;

  size_t axis_;
  std::shared_ptr<const SegmentCodes> codes_;
  SegmentFold fold_;
  Reduction r_;
  DType acc_;
  double correction_;
  bool empty_nan_;
  std::string name_;
  int64_t align_ = 0;         // the input's storage chunk length along the axis (0: none)
  bool range_reads_ = false;  // that source reads row ranges of a chunk alone
  Shape in_chunks_;           // that source's chunks (empty: none)
  bool sorted_ = false;       // codes never decrease (dropped ones aside): contiguous groups
};

}  // namespace b2lazy
