// How a Zarr source reads its keys ("zarr.json", "c/0/1", a shard's inner chunk): the
// source decodes, its reader fetches. Two readers: a local directory store read by pread
// through a descriptor of the directory pinned at open (zarr_local_keys.cpp), and a byte
// store (b2lazy/byte_store.hpp: HTTP, S3, ...) whose requests cost tens of milliseconds,
// so that every read a fill() needs is fetched at once, in batched rounds
// (zarr_store_keys.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "b2lazy/byte_store.hpp"
#include "b2lazy/node.hpp"
#include "io/zarr/metadata.hpp"

namespace b2lazy {

class ThreadState;

namespace zarr {

// What a reader knows of the array it reads (set by the source at open).
struct ReadLayout {
  const Metadata* meta = nullptr;
  std::string name;         // the array in messages: its path or URL
  Shape unit;               // the read unit: a chunk (shard), or an inner chunk
  Shape per_shard;          // inner chunks per shard along each axis (partial shards)
  int64_t most_stored = 0;  // the most bytes a chunk (shard) object holds
  int64_t most_inner = 0;   // the most bytes an inner chunk is stored in (partial shards)
  std::string where(const std::string& key) const { return name + "/" + key; }
  // A chunk object larger than its chunk can be stored in is damaged: refused.
  void check_stored_size(const std::string& key, int64_t size) const;
  // A shard's decoded index checked: every inner chunk within the shard's `size` bytes
  // (-1: not known) and no larger than its codecs make it.
  void check_index(const std::vector<uint64_t>& entries, int64_t size, const std::string& key) const;
  // The inner chunks of shard `shard` (its id in the shard grid) inside the array.
  int64_t inner_chunks_in(int64_t shard) const;
};

// A read a fill makes: chunk `key` whole; inner chunk `inner` of shard `key` (id
// `shard`); or items [start, start + n) of the Blosc chunk `key` (of that inner chunk
// when `inner` >= 0).
struct KeyRead {
  enum class Kind { Chunk, Inner, Run } kind = Kind::Chunk;
  std::string key;
  int64_t shard = -1, inner = -1;
  int64_t start = 0, n = 0;
};

class KeyReader {
 public:
  virtual ~KeyReader() = default;
  void attach(const ReadLayout* layout) { lay_ = layout; }
  // Chunk (or shard) `key`'s stored bytes into `out`; false when it is absent.
  virtual bool chunk(const std::string& key, std::vector<uint8_t>& out) const = 0;
  // Inner chunk `i` of shard `key` (id `shard`) into `out`; false when the shard or the
  // inner chunk is absent.
  virtual bool inner(int64_t shard, const std::string& key, int64_t i, std::vector<uint8_t>& out,
                     ThreadState& ts) const = 0;
  // Items [r.start, r.start + r.n) of Blosc chunk `r.key` (or of its inner chunk
  // `r.inner`) decoded into `dst`, the bytes decompressed into `decoded`; false when the
  // chunk is absent.
  virtual bool run(const KeyRead& r, void* dst, int64_t& decoded, ThreadState& ts) const = 0;
  // Runs one fill: `reads()` lists what it will read (asked only by readers that fetch
  // ahead). The local reader checks the metadata file around it.
  virtual void around_fill(const std::function<std::vector<KeyRead>()>& reads, const std::function<void()>& fill,
                           ThreadState& ts) const = 0;
  // Does it read a byte store through the execution's fetch cache (store_reads lists
  // what the prefetch may fetch ahead)?
  virtual bool fetches_ahead() const { return false; }
  // The store reads of `reads` known before they run, each range its own: whole chunks,
  // shard indexes not cached yet, inner chunks of cached indexes, a Blosc run's first step.
  virtual void store_reads(const std::vector<KeyRead>& /*reads*/, std::vector<StoreRead>& /*out*/) const {}
  // The stored bytes of the array's objects (info's cbytes); 0 when not known.
  virtual int64_t stored_bytes() const = 0;

 protected:
  const ReadLayout* lay_ = nullptr;
};

// The array in local directory `path` (zarr.json, else .zarray): its metadata into
// `meta`. IOError naming the path and key.
std::unique_ptr<KeyReader> open_local_keys(const std::string& path, const std::string& name, Metadata& meta);

// The array at key prefix `member` ("" or "a/b") of `store`: its metadata into `meta`,
// read in one batch of requests (zarr.json and .zarray together); with a member, taken
// from the group's consolidated metadata when it has some (no request of the array's
// own). IOError naming the URL and key.
std::unique_ptr<KeyReader> open_store_keys(const StorePtr& store, const std::string& member, Metadata& meta);

// The reader of an array at `prefix` of `store` whose metadata is known (just written).
std::unique_ptr<KeyReader> store_keys(const StorePtr& store, const std::string& prefix = "");

// Does `store`'s root hold a Zarr array or group (zarr.json, .zarray, .zgroup)?
bool store_holds_zarr(const StorePtr& store);

// Shard indexes a store reader has read (each once while cached); 0 for a local reader.
int64_t store_index_reads(const KeyReader& keys);

}  // namespace zarr
}  // namespace b2lazy
