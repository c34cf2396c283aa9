// A Zarr v2 or v3 array, as a leaf of the graph: in a local directory store, or in a byte
// store (HTTP, S3, ...). The source decodes; a key reader (zarr_keys.hpp) fetches: by
// pread through the pinned directory locally (its metadata file checked around each
// fill), or by batched range requests from a store (every read of a fill at once). Chunks
// are decoded by the worker that asks, without a lock. A shard whose codecs are
// sharding_indexed alone is read by parts: its index (cached), then only the inner chunks
// a region touches.
#pragma once
#include <memory>
#include <string>

#include "io/unit_source.hpp"
#include "io/zarr/metadata.hpp"
#include "io/zarr/zarr_keys.hpp"

namespace b2lazy {

class ZarrSource : public UnitSource {
 public:
  // The array in directory `path` (zarr.json, else .zarray); named `name` in messages
  // (default: `path`). IOError naming the path and the key at fault.
  static std::shared_ptr<ZarrSource> open(const std::string& path, const std::string& name = "");
  // The array at the root of `store` (or at key prefix `member` of a group there, from
  // the group's consolidated metadata when it has some). IOError naming the URL and key.
  static std::shared_ptr<ZarrSource> open(const StorePtr& store, const std::string& member = "");
  ZarrSource(zarr::Metadata meta, std::unique_ptr<zarr::KeyReader> keys, std::string name);

  std::string kind() const override { return "zarr"; }
  double decode_cost() const override;
  std::string describe() const override;
  std::string source_name() const override { return name_; }
  // (The read unit, UnitSource's grid: chunks, or inner chunks when shards are read by parts.)
  // Outputs aligned with the chunk grid (the shards, up to 64 MiB): each shard's index read
  // once per task.
  Shape preferred_chunks() const override;
  bool stored_info(StorageInfo& out) const override;
  // UnitSource's, through the key reader (which checks or fetches around it).
  void fill(const Region& region, void* out, ThreadState& ts) const override;

  // Over a byte store: the reads of a region's fill, fetched ahead by the executor
  // (exec/prefetcher.hpp); `store_read_bytes`: a read unit's bytes decoded (compressed,
  // it is less).
  void store_reads(const Region& region, std::vector<StoreRead>& out) const override;
  int64_t store_read_bytes() const override;

  const zarr::Metadata& metadata() const { return meta_; }
  const zarr::KeyReader& keys() const { return *keys_; }

 private:
  // Read unit `id` of read_grid_, whole (padded as stored) into `dst`.
  void read_unit(int64_t id, void* dst, ThreadState& ts) const override;
  // Chunks that are one Blosc buffer of the C-order items (codecs bytes + blosc, or v2's
  // blosc compressor alone) decode a run of items from the blocks that hold it.
  bool unit_ranges() const override { return blosc_runs_; }
  void read_unit_range(int64_t id, int64_t start, int64_t n, void* dst, ThreadState& ts) const override;
  // Where unit `id` is: its chunk's key, or its shard's key, id and inner index.
  zarr::KeyRead key_of(int64_t id) const;
  // What fill(region) reads, key by key (`window`: units the plan keeps decoded, not read).
  std::vector<zarr::KeyRead> key_reads(const Region& region, BlockWindow* window) const;

  zarr::Metadata meta_;
  ChunkGrid grid_;
  zarr::ReadLayout lay_;
  bool partial_shards_ = false;  // codecs are sharding_indexed alone
  bool blosc_runs_ = false;      // a chunk file is one Blosc buffer of the chunk's C order
  std::string name_;
  std::unique_ptr<zarr::KeyReader> keys_;
};

}  // namespace b2lazy
