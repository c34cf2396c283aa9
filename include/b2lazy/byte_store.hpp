// Byte stores: where a format's bytes live — local files, HTTP(S), S3, GCS, or any fsspec
// filesystem — behind one interface of named objects read by range (the pattern:
// TensorStore's kvstore, zarr-python's Store, Arrow's FileSystem). Drivers (b2lazy/driver.hpp)
// read and write through a store; a URL's scheme picks the store, its path's suffix (or
// what is there) the driver.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace b2lazy {

// Bytes [offset, offset + length) of an object; length < 0: to its end. offset < 0: the
// object's last -offset bytes (HTTP's "bytes=-N"; length ignored) — a shard index stored
// at the end is read without first asking the shard's size.
struct ByteRange {
  int64_t offset = 0;
  int64_t length = -1;
};

// One object: its key (relative to the store's root), size, and what identifies its content
// (an ETag, or a local file's inode/size/mtime): another version means other bytes.
struct ObjectInfo {
  std::string key;
  int64_t size = -1;
  std::string version;
};

// What a store did, for Array.last_stats / stats (totals since the store was opened).
struct StoreCounters {
  int64_t requests = 0;       // requests sent (retries included)
  int64_t bytes = 0;          // body bytes received
  int64_t bytes_written = 0;  // body bytes sent
  int64_t retries = 0;        // requests repeated after a 5xx/429/timeout/reset
  double wait_seconds = 0;    // time callers spent waiting for responses
};

// How to reach a store: fsspec's names where fsspec has them (storage_options={...}):
// "anon", "key", "secret", "token", "endpoint_url", "region_name", "requester_pays",
// "headers.<Name>". Values are strings ("true"/"false" for flags). Credentials not given
// are taken as each ecosystem does (AWS_* variables and ~/.aws files for S3,
// GOOGLE_APPLICATION_CREDENTIALS / a bearer token for GCS). Never written into saved files.
struct StoreOptions {
  std::map<std::string, std::string> values;
  int concurrency = 64;  // requests in flight per store (a slice over 64 chunks: one round trip a step)
  int max_retries = 8;   // then the error names the URL and the last status
};

class ByteStore {
 public:
  virtual ~ByteStore() = default;

  // The root this store names, without credentials ("s3://bucket/prefix", "/data/x.zarr").
  virtual std::string root() const = 0;
  // The URL of `key` in messages.
  virtual std::string url_of(const std::string& key) const;

  // Ranges of object `key`, each exactly as long as asked (a range past the end is an
  // error, except a to-the-end range); nullopt when the object does not exist. Anything
  // else after the retries — a short or corrupt body, a 403 — is an IOError naming the URL:
  // never zeros. Thread-safe.
  using Parts = std::vector<std::vector<uint8_t>>;
  virtual std::optional<Parts> read(const std::string& key, const std::vector<ByteRange>& ranges) = 0;

  // Many reads at once: a remote store keeps up to StoreOptions::concurrency in flight
  // and coalesces adjacent ranges of one object. The default reads them one by one.
  struct Request {
    std::string key;
    std::vector<ByteRange> ranges;
  };
  virtual std::vector<std::optional<Parts>> read_many(const std::vector<Request>& requests);

  // The whole object, or nullopt when it does not exist.
  std::optional<std::vector<uint8_t>> read_all(const std::string& key);

  virtual std::optional<ObjectInfo> stat(const std::string& key) = 0;
  // Objects whose keys start with `prefix`, every page of the listing, keys relative to root.
  virtual std::vector<ObjectInfo> list(const std::string& prefix) = 0;
  // Writes the whole object (replacing it): readers see the old bytes or the new, never a
  // part. A read-only store throws IOError.
  virtual void write(const std::string& key, const void* data, size_t nbytes) = 0;
  // Removes the object; missing is not an error.
  virtual void remove(const std::string& key) = 0;

  virtual StoreCounters counters() const = 0;
  // A local store's directory (the drivers' fast paths open files there); "" when remote.
  virtual std::string local_path() const { return {}; }
};

using StorePtr = std::shared_ptr<ByteStore>;

// The store for `url` ("https://host/dir", "s3://bucket/prefix", "gs://bucket/p", a local
// path or file:// URL, or a scheme registered below). ValueError naming the scheme and the
// known ones when no store takes it; IOError for bad options.
StorePtr open_store(const std::string& url, const StoreOptions& options = {});

// Adds (or replaces) the store for URL scheme `scheme` — Python registers fsspec's for the
// schemes it knows and for chained URLs ("simplecache::s3://..."). Thread-safe.
using StoreFactory = std::function<StorePtr(const std::string& url, const StoreOptions& options)>;
void register_store(const std::string& scheme, StoreFactory factory);

// The URL schemes stores are registered for (sorted; "file" first), for messages.
std::vector<std::string> store_schemes();

// Does `url` name a remote store (a scheme with a registered store other than file)?
bool is_remote_url(const std::string& url);

}  // namespace b2lazy
