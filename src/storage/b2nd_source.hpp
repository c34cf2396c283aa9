// A b2nd array (file, directory or memory) as a leaf of the graph.
#pragma once
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "b2lazy/byte_store.hpp"
#include "b2lazy/node.hpp"
#include "runtime/context_uid.hpp"
#include "storage/blosc2_objects.hpp"
#include "storage/store_io.hpp"

#include <b2nd.h>

namespace b2lazy {

class PinnedFile;

class B2ndSource : public Node {
 public:
  // Opens the file or sparse directory at `urlpath` and reads it through descriptors kept
  // for the source's life (storage/pinned_io.hpp); named `name` (default: `urlpath`).
  // `offset`: the frame at that byte of the file (a member of a zip, python-blosc2's .b2z).
  static std::shared_ptr<B2ndSource> open(const std::string& urlpath, const std::string& name = "", int64_t offset = 0);
  static std::shared_ptr<B2ndSource> from_cframe(const void* data, int64_t len);
  // The b2nd frame at key "" of `store` (a remote URL's object), read by range
  // (storage/store_io.hpp): named by its URL.
  static std::shared_ptr<B2ndSource> open_in_store(const StorePtr& store);
  // The store a remote source reads, or nullptr.
  StorePtr store() const;
  // Takes ownership of `arr`.
  static std::shared_ptr<B2ndSource> adopt(b2nd_array_t* arr, const std::string& name);

  B2ndSource(b2nd_array_t* arr, DType dtype, Shape shape, std::string name);
  ~B2ndSource() override;
  // Throws IOError "'<name>': changed on disk since it was opened" when an opened file
  // was modified in place.
  void check_unchanged() const;

  std::string kind() const override { return "b2nd"; }
  std::string describe() const override;
  std::string source_name() const override { return name_; }
  // What it holds when it is one of python-blosc2's persisted objects (a saved LazyExpr,
  // LazyUDF...: storage/blosc2_objects.hpp), else nullopt.
  std::optional<Blosc2Object> persisted_object() const;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  // Over a byte store: the first reads of a region's fill (whole chunks, or headers and
  // block tables), fetched ahead by the executor (exec/prefetcher.hpp).
  void store_reads(const Region& region, std::vector<StoreRead>& out) const override;
  int64_t store_read_bytes() const override;
  // A chunk's decompression buffer unless the region is one C-order range of one chunk
  // (decompressed in place), plus a compressed chunk read whole from disk.
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  const ChunkGrid* storage_grid() const override { return &grid_; }
  Shape storage_blocks() const override { return blocks_; }
  bool decompresses() const override { return true; }
  int64_t decompressed_bytes(const Region& region) const override;
  int64_t window_block_bytes() const override;
  void blocks_touched(const Region& region, std::vector<int64_t>& ids) const override;
  bool block_major(const Shape& chunks, const Shape& blocks) const override {
    return grid_.chunks() == chunks && blocks_ == blocks;
  }
  void fill_block_major(int64_t chunk, int64_t /*nitems*/, void* out, ThreadState& ts) const override {
    read_chunk(chunk, out, ts);
  }

  const Shape& blocks() const { return blocks_; }
  const Shape& extchunk() const { return extchunk_; }
  int64_t extchunk_nitems() const { return prod(extchunk_); }
  // Decompress chunk `id` in Blosc2's block-major, padded layout into `dst`
  // (extchunk_nitems() items).
  void read_chunk(int64_t id, void* dst, ThreadState& ts) const;
  // Decompress items [start, start + n) of chunk `id` (block-major order), touching only
  // the blocks that hold them.
  // `counted`: one more decompression of the chunk in the stats (a read in pieces counts
  // its first piece only).
  void read_items(int64_t id, int64_t start, int64_t n, void* dst, ThreadState& ts, bool counted = true) const;
  // Blocks of a chunk that items [start, start + n) of its block-major order touch.
  int64_t touched_blocks(int64_t start, int64_t n) const;
  b2nd_array_t* raw() const { return arr_; }
  // Are a chunk's blocks in its C order, so that a range of rows decompresses alone?
  bool reads_ranges() const override { return c_order_blocks_; }
  bool stored_info(StorageInfo& out) const override;
  bool b2nd_frame(std::vector<uint8_t>& out) const override {
    out = to_cframe();
    return true;
  }
  // Serialise to a contiguous frame (for python-blosc2 and copies).
  std::vector<uint8_t> to_cframe() const;

 private:
  const uint64_t ctx_uid_ = next_context_uid();  // (its threads' Blosc2 contexts: runtime/context_uid.hpp)
  // read_items' decompression of (lazy) chunk `id` (`cbytes` bytes at `chunk`), each byte
  // count checked (storage/b2nd_validate.hpp).
  void read_checked(int64_t id, const uint8_t* chunk, int32_t cbytes, int64_t start, int64_t n, void* dst,
                    ThreadState& ts) const;
  // `chunk` holds the decompressed chunk's bytes from byte `base` on (a range read).
  void gather_from_chunk(const char* chunk, int64_t base, const Box& cbox, const Region& region, const Shape& i_lo,
                         const Shape& i_hi, char* out) const;
  // fill()'s read of the part [i_lo, i_hi) of `region` inside chunk `id` that is not one
  // C-order range of it: C-order blocks in item ranges of at most kPieceBytes, other
  // blocks whole (one at a time when the chunk is larger than a piece, else the chunk).
  void read_in_pieces(int64_t id, const Box& cbox, const Region& region, const Shape& i_lo, const Shape& i_hi,
                      char* out, ThreadState& ts) const;
  // Calls f(chunk id, chunk box, block id within the chunk, i_lo, i_hi) for every block
  // `region` touches — [i_lo, i_hi) of the region's indices along each axis — chunk by
  // chunk (C order of the grid), block by block (C order of the chunk's blocks).
  template <class F> void for_each_block(const Region& region, F f) const;
  // fill() through the plan's window of decompressed blocks (runtime/block_window.hpp).
  void fill_windowed(const Region& region, char* out, ThreadState& ts, class BlockWindow& window) const;
  // Blocks not in C order: is a chunk read whole (it is at most a piece, or one block),
  // rather than block by block? fill_bytes, read_in_pieces and decompressed_bytes agree.
  bool reads_chunk_whole() const;
  // Blocks of chunk box `cbox` that [i_lo, i_hi) of `region` touches.
  int64_t blocks_touched_in(const Box& cbox, const Region& region, const Shape& i_lo, const Shape& i_hi) const;
  // C-order blocks: is [i_lo, i_hi) of `region` read block by block, its item range
  // spanning blocks it does not touch (a column band of row strips: (8, 65536) chunks of
  // (1, 8192) blocks asked 8 of the 57 blocks between the first item and the last)? A
  // range read would decompress them all. fill_bytes, read_in_pieces and
  // decompressed_bytes agree.
  bool sparse_in_span(const Box& cbox, const Region& region, const Shape& i_lo, const Shape& i_hi) const;
  // [i_lo, i_hi) of `region` inside chunk `id`, each block it touches decompressed alone.
  void read_blocks(int64_t id, const Box& cbox, const Region& region, const Shape& i_lo, const Shape& i_hi, char* out,
                   ThreadState& ts) const;
  // The first and last item (C order of the padded chunk) of [i_lo, i_hi) of `region`.
  std::pair<int64_t, int64_t> item_span(const Box& cbox, const Region& region, const Shape& i_lo,
                                        const Shape& i_hi) const;
  // fill_bytes of a local source (a remote one adds what it fetches ahead).
  int64_t fill_bytes_local(const Region& region) const;
  // read_items' fetch of chunk `id` from the store (prefetched by fill(), else now): a
  // Blosc2 buffer holding at least items [start, start + n) (`holder` keeps one fetched now).
  const StoreFrame::Fetched& remote_chunk(int64_t id, int64_t start, int64_t n, StoreFrame::Fetched& holder,
                                          ThreadState& ts) const;
  // What fill(region) fetches from the store at once: every chunk (or the blocks of it) it
  // needs, up to kPrefetchBytes (`capped`; the prefetch's list is bounded by its cache).
  std::vector<StoreFrame::Want> remote_wants(const Region& region, bool capped = true) const;
  // fill() over a store: remote_wants(region) fetched at once and kept for read_items
  // while the returned guard lives.
  std::shared_ptr<void> prefetch(const Region& region, ThreadState& ts) const;
  b2nd_array_t* arr_;
  ChunkGrid grid_;
  Shape blocks_, extchunk_;
  bool c_order_blocks_ = false;  // block-major order is the chunk's C order
  std::string name_;
  std::unique_ptr<PinnedFile> pinned_;  // what open() read through; freed after arr_
  std::shared_ptr<StoreFrame> remote_;  // what open_in_store() reads through; freed after arr_
  mutable std::mutex mu_;               // a super-chunk's reads are not thread-safe
};

}  // namespace b2lazy
