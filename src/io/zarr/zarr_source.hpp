// A Zarr v2 or v3 array in a local directory store, as a leaf of the graph. Chunks are
// read with pread through a descriptor of the store's directory opened once (so an array
// opened before its directory is moved keeps reading it) and decoded by the worker that
// asks, without a lock. A shard whose codecs are sharding_indexed alone is read by parts:
// its index (cached with the shard file's stamp), then only the inner chunks a region
// touches. Every read looks at the store as it is then: a chunk or shard another writer
// replaced reads its new values — a cached index is used only while it is the file's.
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/regular_file.hpp"
#include "io/unit_source.hpp"
#include "io/zarr/metadata.hpp"

namespace b2lazy {

class ZarrSource : public UnitSource {
 public:
  // The array in directory `path` (zarr.json, else .zarray); named `name` in messages
  // (default: `path`). IOError naming the path and the key at fault.
  static std::shared_ptr<ZarrSource> open(const std::string& path, const std::string& name = "");
  ZarrSource(zarr::Metadata meta, int dirfd, std::string name);
  ~ZarrSource() override;

  std::string kind() const override { return "zarr"; }
  double decode_cost() const override;
  std::string describe() const override;
  std::string source_name() const override { return name_; }
  // (The read unit, UnitSource's grid: chunks, or inner chunks when shards are read by parts.)
  // Outputs aligned with the chunk grid (the shards, up to 64 MiB): each shard's index read
  // once per task.
  Shape preferred_chunks() const override;
  bool stored_info(StorageInfo& out) const override;
  // UnitSource's, with the metadata file checked before and after (check_metadata).
  void fill(const Region& region, void* out, ThreadState& ts) const override;

  const zarr::Metadata& metadata() const { return meta_; }

 private:
  // Read unit `id` of read_grid_, whole (padded as stored) into `dst`.
  void read_unit(int64_t id, void* dst, ThreadState& ts) const override;
  // Chunks that are one Blosc buffer of the C-order items (codecs bytes + blosc, or v2's
  // blosc compressor alone) decode a run of items from the blocks that hold it.
  bool unit_ranges() const override { return blosc_runs_; }
  void read_unit_range(int64_t id, int64_t start, int64_t n, void* dst, ThreadState& ts) const override;
  // Opens chunk file `key` of the store and hands `use` its descriptor and size, closing
  // it after; false (the store checked) when the file is missing.
  bool with_file(const std::string& key, const std::function<void(int fd, int64_t size)>& use) const;
  // The bytes of chunk file `key` into scratch; false when there is no such file.
  bool read_file(const std::string& key, std::vector<uint8_t>& out, int64_t offset = 0, int64_t len = -1,
                 int64_t* size = nullptr) const;
  // A chunk file larger than its chunk can be stored in (zarr::max_stored) is damaged:
  // refused before it is read.
  void check_stored_size(const std::string& key, int64_t size) const;
  // An absent chunk file reads as the fill value, unless the store itself is gone.
  void check_store() const;
  [[noreturn]] void throw_store_gone() const;
  // Around each fill: the metadata file is the one opened, or one that reads the files
  // alike (attributes changed); else IOError naming it and what changed (shape, dtype...).
  void check_metadata() const;
  // A shard's decoded index (offset and size per inner chunk) and the file it was read from.
  struct ShardIndex {
    FileStamp stamp;
    std::vector<uint64_t> entries;
  };
  // Inner chunk `i` of shard `shard` (stored bytes) into `out`; false when the shard file
  // or the inner chunk is absent. The index entry and the bytes come from one descriptor,
  // so from one version of the file.
  bool read_inner(const Shape& shard, int64_t i, std::vector<uint8_t>& out, ThreadState& ts) const;
  // The index of the shard file open as `fd` (`stamp`): the cached one while it is that
  // file's and its entry `i` is what the file holds there now, else read and cached anew.
  std::shared_ptr<const ShardIndex> shard_index(int64_t sid, const std::string& key, int fd, const FileStamp& stamp,
                                                int64_t i, ThreadState& ts) const;
  // The shard index's entry `i` as the file `fd` holds it now (16 bytes read); false when
  // the index codecs place it elsewhere than at 16 * i (a transpose) or it cannot be read.
  bool index_entry(int fd, int64_t size, int64_t i, uint64_t entry[2]) const;
  std::string where(const std::string& key) const { return name_ + "/" + key; }

  zarr::Metadata meta_;
  ChunkGrid grid_;
  Shape per_shard_;             // inner chunks per shard along each axis (partial reads)
  bool partial_shards_ = false;  // codecs are sharding_indexed alone
  bool blosc_runs_ = false;      // a chunk file is one Blosc buffer of the chunk's C order
  int64_t most_stored_ = 0;      // the most bytes a chunk (shard) file holds
  int64_t most_inner_ = 0;       // the most bytes an inner chunk is stored in (partial shards)
  int dirfd_ = -1;
  std::string name_, meta_file_;
  std::string layout_;             // what reads depend on in the metadata opened
  mutable FileStamp meta_stamp_;   // the metadata file last checked to have that layout (under mu_)
  mutable std::mutex mu_;
  mutable std::unordered_map<int64_t, std::shared_ptr<const ShardIndex>> indexes_;  // by shard id
};

}  // namespace b2lazy
