// The node contract: every node fills a requested output Region by pulling only the
// input regions it needs.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "b2lazy/box.hpp"
#include "b2lazy/byte_store.hpp"
#include "b2lazy/checked.hpp"
#include "b2lazy/dtype.hpp"

namespace b2lazy {

class Node;
using NodePtr = std::shared_ptr<const Node>;
class ThreadState;     // per-thread scratch, codec contexts and counters (src/runtime)
struct StorageInfo;    // b2lazy/driver.hpp
class MemoryModel;     // the memory projection of one evaluation (src/runtime/memory_model.hpp)
class AlignmentQuery;  // storage-chunk alignment seen through the graph (src/runtime/alignment.hpp)

// One read a store-backed source makes (ByteStore::read of `ranges` of `key`): what the
// executor fetches ahead of the tasks that need it (Node::store_reads, runtime/fetch_cache.hpp).
struct StoreRead {
  StorePtr store;
  std::string key;
  std::vector<ByteRange> ranges;
  // The reads that follow from this one's bytes (a shard's index: the inner chunks the
  // region needs), listed by the prefetch once they are here; empty: none. Called on the
  // prefetch's thread; it may throw (nothing follows: the task reads for itself).
  std::function<void(const ByteStore::Parts& parts, std::vector<StoreRead>& out)> then;
  // The bytes a range read to the object's end is expected to bring (the prefetch's room);
  // -1: the source's typical read (Node::store_read_bytes).
  int64_t expected = -1;
  // The same bytes as smaller reads (a shard's index, then its inner chunks), for a
  // prefetch whose room is too small for this one read; empty: none.
  std::vector<StoreRead> instead;
};

class Node {
 public:
  Node(DType dtype, Shape shape, std::vector<NodePtr> inputs = {})
      : dtype_(dtype), shape_(std::move(shape)), inputs_(std::move(inputs)) {
    check_array_size(shape_, dtype_);  // the rule: sizes and byte sizes fit int64, never wrap
  }
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  size_t ndim() const { return shape_.size(); }
  int64_t size() const { return prod(shape_); }
  const std::vector<NodePtr>& inputs() const { return inputs_; }

  // Short name of the operation ("b2nd", "numpy", "fused", "slice", ...).
  virtual std::string kind() const = 0;
  // One line for explain(): kind plus attributes.
  virtual std::string describe() const { return kind(); }
  virtual bool is_elementwise() const { return false; }
  // Sources count decompressed chunks under this name in stats.
  virtual std::string source_name() const { return {}; }

  // Write this node's values at `region` into `out`: dense, C order, shape
  // region.count, dtype(). Called concurrently from several threads.
  virtual void fill(const Region& region, void* out, ThreadState& ts) const = 0;

  // What consumers call: like fill(), but reads the evaluation's cached copy when the
  // planner materialised this node because several output chunks need it.
  void pull(const Region& region, void* out, ThreadState& ts) const;
  // Likewise for view().
  const void* pull_view(const Region& region, ThreadState& ts) const;
  // Likewise for view_rows().
  const void* pull_view_rows(const Region& region, int64_t& row_stride, ThreadState& ts) const;

  // The pull rule: the region of each input that fill(region) reads. Used by the planner
  // to find reused nodes and by explain().
  virtual std::vector<Region> input_regions(const Region& region) const { return {}; }
  // How fill(region) pulls input `input`'s region: in these pieces, one after another
  // (a product streams K-panels of an operand it does not hold), or whole (empty). What
  // reading costs is estimated from the pieces: a stored source decompresses every block
  // a piece touches, again for each piece. `worker_bytes`: a worker's share of max_memory.
  virtual std::vector<Region> pull_pieces(const Region& /*region*/, size_t /*input*/, size_t /*worker_bytes*/) const {
    return {};
  }

  // May the planner compute this node once per evaluation and keep the result, when
  // several output chunks need overlapping parts of it? (Reductions and scans: their
  // cost per element is high. Elementwise nodes are cheaper to recompute.)
  virtual bool cacheable() const { return false; }
  // Is any part of this node as costly as all of it (sorted runs: a pull of a few
  // elements sorts whole runs)? Then it is computed once whenever it is pulled at all,
  // even by pulls that do not overlap.
  virtual bool computed_whole() const { return false; }
  // The part of this node a fill of `region` computes (a sort: the whole lanes the region
  // crosses). Requests whose computed parts overlap make a cacheable node computed once,
  // in chunks of its own (kept_chunks), even when the regions asked do not overlap.
  virtual Region computed_region(const Region& region) const { return region; }

  // Zero-copy access: a pointer to `region` laid out densely in C order when the node
  // already holds it that way in memory (NumPy sources), else nullptr.
  virtual const void* view(const Region& /*region*/) const { return nullptr; }
  // Zero-copy access to a region whose rows (runs along its last axis) lie `row_stride`
  // elements apart, when the node holds it so (a column panel of a NumPy matrix or of a
  // dense kept stage, which BLAS reads with a leading dimension): its first element, else
  // nullptr. By default view(), whose rows are the region's last axis apart.
  virtual const void* view_rows(const Region& region, int64_t& row_stride) const;

  // The chunk grid the node is stored in, if any (b2nd sources); evaluation prefers
  // output chunks aligned with it.
  virtual const ChunkGrid* storage_grid() const { return nullptr; }
  // The blocks inside those chunks (b2nd sources): the unit a partial read decompresses.
  virtual Shape storage_blocks() const { return {}; }

  // Can fill() decompress a contiguous range of a stored chunk's C order without the rest
  // of it (partial reads: b2nd chunks whose blocks keep the chunk's C order)?
  virtual bool reads_ranges() const { return false; }
  // A stored array (a driver's source): fills `out` with its format, path and layout.
  virtual bool stored_info(StorageInfo& /*out*/) const { return false; }
  // A b2nd array's contiguous frame (for python-blosc2); false for any other node.
  virtual bool b2nd_frame(std::vector<uint8_t>& /*out*/) const { return false; }

  // Output chunks this node is cheapest to evaluate on (its storage chunks, or for a
  // scan the segments its carries are cached at); empty for no preference.
  virtual Shape preferred_chunks() const { return storage_grid() ? storage_grid()->chunks() : Shape{}; }
  // Are preferred_chunks() the chunks the user asked for (rechunk)? An evaluation of this
  // node, or of elementwise work of its shape over it, then writes them unless given chunks.
  virtual bool chunks_requested() const { return false; }

  // Storage-chunk length along output `axis` as seen from this node (0: none known): work
  // cut at its multiples decompresses each stored chunk once. Inputs are asked through
  // q.of(input, axis) (memoised). Default: an elementwise node's largest among its
  // same-shaped inputs, else none. (A stored source answers its chunks before this is asked.)
  virtual int64_t alignment_along(size_t axis, const AlignmentQuery& q) const;
  // For a view reshaping or slicing input 0: the input's per-axis alignment (cuts at
  // multiples of it cut no source chunk; the extent: only whole; 0: none) as seen on this
  // node's axes. nullopt: alignment is not followed through this node.
  virtual std::optional<Shape> alignment_through_view(const Shape& /*input*/) const { return std::nullopt; }
  // Is it a view of input 0 (a slice, a permutation, rechunk): pulling it again costs a
  // pull of the input, no computation?
  virtual bool is_view() const { return chunks_requested(); }

  // --- What the planner asks (src/plan/): it decides from these, never from a node's type.

  // Chunks to keep `box` (a part of this node's result computed once: a stage kept
  // compressed or spilled) in, when balanced tiles of about `target_bytes` would make its
  // own pass read its inputs many times over; at most `most_bytes` (except a node computed
  // whole: its own chunks, whatever their size). Empty: balanced tiles.
  virtual Shape kept_chunks(const Shape& /*box*/, size_t /*target_bytes*/, size_t /*most_bytes*/) const { return {}; }
  // The blocks (the unit a partial read decompresses) of such a stage, at most this many
  // bytes: smaller for a stage its consumers read in many small pieces.
  virtual size_t kept_block_bytes() const { return size_t(256) << 10; }
  // Is `box` of this node, computed once and kept dense, best filled in one region (one
  // fill, which shares its work among the workers itself) rather than tile by tile? (The
  // upper triangle of x^T x: one pass streams x once for every tile, where tiles read
  // x's panels once each, so x would have to be kept.)
  virtual bool fills_whole_box() const { return false; }
  // Does this node read compressed storage itself (b2nd sources)? The cost model then
  // weighs decompressing what several tasks pull again against keeping it once.
  virtual bool decompresses() const { return false; }
  // Nodes with the same non-empty key fold their inputs over the same slabs (reductions
  // over the same axes of same-shaped inputs): when their inputs read the same stored
  // sources through elementwise nodes, they are folded in lockstep, each slab of those
  // sources decompressed once for all of them (Plan::siblings).
  virtual std::string lockstep_key() const { return {}; }
  // What decompressing a byte costs next to zstd or Blosc (1): Deflate is about 3x slower
  // (543 against 1684 MB/s on one core, the same float32 data), so a source read twice is
  // worth keeping when it is slow to decode (plan/build.cpp).
  virtual double decode_cost() const { return 1.0; }
  // Bytes fill(region) decompresses (whole chunks, or the item ranges of partial reads).
  virtual int64_t decompressed_bytes(const Region& /*region*/) const { return 0; }
  // A source that can read through a window of decompressed blocks (Plan::windows): the
  // bytes of one decompressed block, else 0; and the blocks (ids unique within the node)
  // a pull of `region` touches, appended to `ids` in the order the pull reads them.
  virtual int64_t window_block_bytes() const { return 0; }
  virtual void blocks_touched(const Region& /*region*/, std::vector<int64_t>& /*ids*/) const {}
  // A source over a ByteStore opts into the plan's prefetch with these two: the store
  // reads a pull of `region` makes, in the order it makes them (appended to `out`; the
  // source then reads through fetch_read(), runtime/fetch_cache.hpp, which hands it the
  // bytes fetched ahead while earlier tasks computed), and the most bytes one such read
  // returns (> 0: opted in; the plan sizes its cache of fetched bytes from it).
  virtual void store_reads(const Region& /*region*/, std::vector<StoreRead>& /*out*/) const {}
  virtual int64_t store_read_bytes() const { return 0; }
  // Memory fill(region) holds at its peak beyond `out`, per worker: its own scratch (a
  // product's kept band and streamed K-panels, a reduction's slabs) plus the most its
  // pulls hold below it, asked of the inputs through MemoryModel::pull_bytes (memoised;
  // it knows the nodes computed once and the worker's share of max_memory). The one
  // memory query of the planner: the plan's task projections and the max_memory check
  // (src/plan/memory.hpp) both read it. The default (src/plan/memory.cpp) suits a node
  // that pulls each input region into a buffer of its own, all held at once.
  virtual int64_t fill_bytes(const Region& region, const MemoryModel& m) const;
  // Does this node keep state between output chunks along the last grid axis (all other
  // grid coordinates fixed), so that such a row of chunks should be one task? (products)
  virtual bool shares_rows() const { return false; }
  // Filling whole chunks of an output stored in `chunks` of `blocks` (shape shape()) in
  // Blosc2's block-major padded layout, without reordering: elementwise work over b2nd
  // operands stored exactly so. fill_block_major writes `nitems` (padded chunk) items.
  virtual bool block_major(const Shape& /*chunks*/, const Shape& /*blocks*/) const { return false; }
  virtual void fill_block_major(int64_t chunk, int64_t nitems, void* out, ThreadState& ts) const;
  // Lines explain() prints below describe() (a fused program's instructions).
  virtual std::string listing() const { return {}; }
  // A carry this node can take from the region before along `axis` instead of from input
  // `input` (a scan's segment totals, computed once in a pass of their own): when every
  // region the output tasks ask of this node starts where one asked by an earlier chunk
  // ends, a run of all the tasks in order passes the carry from chunk to chunk
  // (src/plan/carry.cpp) and that input is never computed. input -1: no such carry.
  struct Carry {
    int input = -1;
    int axis = -1;
  };
  virtual Carry carry() const { return {}; }

  // --- Folding in parts (a stage of few chunks split over processes, b2lazy/distribute.hpp):
  // a node whose fill() folds its input along an axis (reductions) fills `region` from
  // parts of that input folded apart into partial states, merged in any tree, finished once.
  struct FoldAxis {
    int axis = -1;       // the input axis cut into parts
    int64_t extent = 0;  // its length; 0: `region` is not filled in parts
    int64_t align = 1;   // parts start on multiples of this (the input's storage chunks)
  };
  virtual FoldAxis fold_axis(const Region& /*region*/) const { return {}; }
  // The partial state of `region` over input [lo, hi) along the fold axis.
  virtual std::vector<uint8_t> fold_part(const Region& region, int64_t lo, int64_t hi, ThreadState& ts) const;
  // `into` := `into` merged with `part` (states of the same region over disjoint ranges).
  virtual void fold_merge(const Region& region, std::vector<uint8_t>& into, const uint8_t* part, size_t n) const;
  // `region`'s values from the state of all of the fold axis, as fill() writes them.
  virtual void fold_finish(const Region& region, const uint8_t* state, size_t n, void* out) const;

 private:
  DType dtype_;
  Shape shape_;
  std::vector<NodePtr> inputs_;
};

}  // namespace b2lazy
