// Writes compute()'s output into a region of an existing Zarr v2/v3 array (one another
// library created, e.g. xarray through zarr-python), encoded with that array's own codecs,
// fill value and chunk keys: what xarray's to_zarr hands the chunk manager's store().
//
// URL: "zarr-region:DIR?offset=O0,O1,..&codec=C&empty=0|1", the region starting at the
// chunk-aligned `offset`; it ends on a chunk boundary or at the array's end, so every output
// chunk is one whole stored chunk, written once. C gives what the parsed metadata does not
// keep: "none", "zstd:LEVEL", "blosc:CNAME:LEVEL:SHUFFLE(0|1)". empty=1 writes chunks that
// are all the fill value (zarr-python's write_empty_chunks); else their files are removed.
//
// Chunks go to temporary files beside their keys; finish() renames them all into place, so
// an evaluation that fails (or is cancelled) leaves the array as it was. DIR may be a
// remote URL (b2lazy/byte_store.hpp: "s3://bucket/x.zarr/var"): the chunks are then
// spooled to a local temporary directory and uploaded by finish(), in parallel — a failed
// or cancelled evaluation leaves the array as it was; an upload that fails midway leaves
// the chunks uploaded before it (an object store has no rename of many objects).
#pragma once
#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "b2lazy/driver.hpp"
#include "io/zarr/metadata.hpp"

namespace b2lazy {

class ZarrRegionSink : public Sink {
 public:
  explicit ZarrRegionSink(const SinkSpec& spec);
  ~ZarrRegionSink() override;
  const ChunkGrid& grid() const override { return grid_; }
  void write_chunk(int64_t id, const void* data, ThreadState& ts) override;
  NodePtr finish() override;
  int64_t bytes_written() const override { return written_.load(); }

 private:
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  bool all_fill(const uint8_t* chunk, int64_t n) const;
  void write_temp(const std::string& key, const std::vector<uint8_t>& bytes);
  // finish() of a remote array: every staged chunk uploaded, then the emptied ones removed.
  void upload_staged();
  zarr::Metadata meta_;
  ChunkGrid grid_;  // the region's chunks (the array's, from the region's start)
  Shape first_;     // the region's first chunk, in chunk coordinates of the array
  std::string dir_, suffix_;
  bool write_empty_ = false;
  int dirfd_ = -1;     // the array's directory, or the spool directory of a remote array
  StorePtr store_;     // a remote array's store
  std::string spool_;  // the spool directory (remote arrays)
  std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> staged_;  // (temporary, key)
  std::vector<std::string> emptied_;                         // keys to remove: all fill now
  bool committed_ = false;
  std::atomic<int64_t> written_{0};
};

}  // namespace b2lazy
