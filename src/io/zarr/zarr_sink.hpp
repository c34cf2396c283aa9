// Writes compute()'s output as a Zarr v3 array: one file per chunk (or per shard, whose
// inner chunks are encoded together), from any worker, into a temporary directory beside
// the target that is moved into place when complete (storage/output_path.hpp: only a Zarr
// array is ever replaced there). Chunks whose values are all the fill value are left out,
// as zarr-python does.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "b2lazy/driver.hpp"
#include "io/zarr/metadata.hpp"
#include "storage/output_path.hpp"

namespace b2lazy {

namespace zarr {
// The v3 metadata of compute()'s output `spec` (codecs from its options; shards when
// asked); ValueError for options a Zarr output cannot take. `name` in messages.
Metadata output_metadata(const SinkSpec& spec, const std::string& name);
// Output chunk `id` of `grid` (its box of the output, dense) encoded as stored: padded at
// the edges; false (nothing encoded) when all of it is the fill value, left out then.
bool encode_output_chunk(const Metadata& meta, const ChunkGrid& grid, int64_t id, const void* data,
                         std::vector<uint8_t>& bytes);
}  // namespace zarr

// What a Zarr output may replace: a directory holding a Zarr array (zarr.json of an
// array, or .zarray).
const ReplaceRule& zarr_replace_rule();

class ZarrSink : public Sink {
 public:
  explicit ZarrSink(const SinkSpec& spec);
  // A part sink (a distributed compute's worker): writes chunk files into `staging`,
  // another ZarrSink's staging_path(); never finished.
  ZarrSink(const SinkSpec& spec, const std::string& staging);
  ~ZarrSink() override;
  const ChunkGrid& grid() const override { return grid_; }
  void write_chunk(int64_t id, const void* data, ThreadState& ts) override;
  NodePtr finish() override;
  int64_t bytes_written() const override { return written_.load(); }
  std::string staging_path() const override;

 private:
  void init(const SinkSpec& spec);
  void write_file(const std::string& key, const uint8_t* data, size_t n);
  zarr::Metadata meta_;
  ChunkGrid grid_;
  std::string final_;
  std::unique_ptr<OutputTemp> temp_;
  int dirfd_ = -1;
  std::atomic<int64_t> written_{0};
};

}  // namespace b2lazy
