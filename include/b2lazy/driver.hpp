// Storage drivers: the formats open() reads and compute(urlpath=...) writes, chosen by
// URL scheme and path suffix (the pattern: TensorStore's driver registry). A format lives
// in its own folder and is added by one registration (src/io/builtin_drivers.cpp, or
// register_driver() from outside the library).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "b2lazy/byte_store.hpp"
#include "b2lazy/context.hpp"
#include "b2lazy/dtype.hpp"
#include "b2lazy/node.hpp"

namespace b2lazy {

// What a stored array holds, read from its metadata (b2lazy info).
struct StorageInfo {
  std::string format = "b2nd";  // the driver's name: "b2nd", "zarr"
  std::string urlpath;
  Shape shape, chunks, blocks;  // blocks: Blosc2's blocks (b2nd); a Zarr store's shards
  DType dtype = DType::F64;
  std::string codec, filters;  // b2nd: Blosc2 names, filters joined with '+'; Zarr: its codecs
  int clevel = 0;
  int64_t nbytes = 0, cbytes = 0;  // uncompressed / compressed sizes (cbytes 0: not known)
  bool contiguous = true;
};

// Where compute() writes its output chunks: a driver's writer, created for one
// evaluation. The output is kept under a temporary name until finish() moves it into
// place; destroying a sink before that removes it.
class Sink {
 public:
  virtual ~Sink() = default;
  // The chunks the evaluation writes, each exactly once, from any worker thread.
  virtual const ChunkGrid& grid() const = 0;
  // Chunk `id`: its box of the output, dense in C order.
  virtual void write_chunk(int64_t id, const void* data, ThreadState& ts) = 0;
  // Block-order writes (Blosc2's block-major padded layout, b2nd): may chunks come as
  // the operands' chunks are decompressed, `items()` items each, without reordering?
  virtual bool block_major(const Shape& /*blocks*/) const { return false; }
  virtual int64_t block_major_items() const { return 0; }
  virtual void write_block_major(int64_t id, const void* data, ThreadState& ts);
  // Moves the complete output into place and returns it opened (from before the move, so
  // it is this sink's array whatever later happens at the path).
  virtual NodePtr finish() = 0;
  virtual int64_t bytes_written() const = 0;
  // Distributed outputs (b2lazy/distribute.hpp). Where other processes write chunks
  // themselves (a driver's create_part sink over it), or empty: they send them here.
  virtual std::string staging_path() const { return {}; }
  // Chunk `id` compressed as this output stores it (from compressed_chunk() of a sink of
  // the same layout), inserted without recompressing. The default throws.
  virtual void write_compressed(int64_t id, const void* data, size_t nbytes);
  // That form of chunk `id` (written before); the default throws.
  virtual std::vector<uint8_t> compressed_chunk(int64_t id) const;
};

// What a driver needs to create a sink: the output's layout and compute()'s options.
// `path` is the output path with the URL's scheme removed (empty: in memory).
struct SinkSpec {
  Shape shape;
  DType dtype = DType::F64;
  Shape chunks, blocks;  // as planned (chunks are the shards when ComputeOptions::shards is set)
  std::string path;
  const ComputeOptions* options = nullptr;
};

struct Driver {
  std::string name;                   // "b2nd", "zarr": the format's name in messages
  std::vector<std::string> schemes;   // URL schemes naming it: "zarr" for zarr:PATH or zarr://PATH
  std::vector<std::string> suffixes;  // path suffixes naming it: ".zarr"
  // Does something at `path` hold this format? Looked at (metadata only) when neither the
  // scheme nor the suffix decides; never throws.
  std::function<bool(const std::string& path)> recognizes;
  // Opens the array at `path` (no data read); IOError naming the path and key on failure.
  std::function<NodePtr(const std::string& path)> open;
  // Creates a sink for compute(); empty for a read-only format.
  std::function<std::unique_ptr<Sink>(const SinkSpec&)> create;
  // A sink writing chunks into another sink's staging_path() (a worker of a distributed
  // compute); never finished. Empty: the format takes one writer only.
  std::function<std::unique_ptr<Sink>(const SinkSpec&, const std::string& staging)> create_part;
  // Remote URLs (b2lazy/byte_store.hpp): the same three over a store whose root is the
  // array's URL (a b2nd file: the object at key ""; a Zarr array: the keys under it). Empty:
  // the format reads local paths only, and a remote URL naming it is an IOError saying so.
  std::function<bool(const StorePtr& store)> recognizes_in_store;
  std::function<NodePtr(const StorePtr& store)> open_in_store;
  std::function<std::unique_ptr<Sink>(const SinkSpec&, const StorePtr& store)> create_in_store;
  // A member of a container file over a store ("https://h/f.h5#/g/x": the store whose root
  // is the file, and "/g/x"), as `open` takes "f.h5#/g/x". Empty: no members remotely.
  std::function<NodePtr(const StorePtr& store, const std::string& member)> open_member_in_store;
  // The shared write suite (tests/cpp/test_driver_conformance.cpp) runs once per case a
  // driver that writes declares here, beside itself: a name, the output path's suffix and,
  // for Zarr, shards. A driver that writes but takes no case says why in suite_exempt.
  struct SuiteCase {
    std::string name, suffix;
    bool sharded = false;
  };
  std::vector<SuiteCase> suite_cases;
  std::string suite_exempt;
};

// Adds a driver, or replaces the one of the same name. Thread-safe.
void register_driver(Driver d);
// The registered drivers' names, in the order they are consulted.
std::vector<std::string> driver_names();

// The driver for `url` and the path it names (scheme removed): a registered scheme
// ("zarr:x", "zarr://x", also "file://x"), else a registered suffix of the path, else the
// driver that recognizes what is there, else the default (b2nd). `for_writing` consults
// recognition only when something is at the path.
// A remote URL (is_remote_url) resolves to its store, opened with `storage`, and the driver
// named by the URL path's suffix, else the one recognizing what the store holds (reading),
// else b2nd (writing).
// A remote URL naming a member of a container ("s3://b/f.h5#/g/x", a driver with
// open_member_in_store and the suffix before the '#') resolves to the container's store
// and the member.
struct Resolved {
  std::shared_ptr<const Driver> driver;
  std::string path;
  StorePtr store;      // remote URLs only
  std::string member;  // remote URLs naming a container's member only
};
Resolved resolve_url(const std::string& url, bool for_writing, const StoreOptions& storage = {});

// The array `store` holds, opened by the driver named `driver` (its open_in_store): a
// caller keeping the store sees its counters (the tests count requests and bytes).
// ValueError when no such driver reads from stores.
// `member` not empty: that member of the container the store holds (open_member_in_store).
NodePtr open_in_store(const StorePtr& store, const std::string& driver, const std::string& member = "");

// The sink compute() writes into for `spec` (spec.path: the URL as given).
std::unique_ptr<Sink> create_sink(SinkSpec spec);
// The part sink of `spec`'s driver writing into `staging`; ValueError if it has none.
std::unique_ptr<Sink> create_part_sink(SinkSpec spec, const std::string& staging);

}  // namespace b2lazy
