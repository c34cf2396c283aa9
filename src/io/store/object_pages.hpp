// Small scattered reads of one big object of a store — a zip's central directory, an HDF5
// file's superblock, object headers, B-trees and heaps — through a cache of aligned pages:
// over HTTP each read of a store is a round trip, so the pages a read needs and does not hold
// are fetched in one batch, and nearby reads later find them here. Not for bulk data (chunks
// are fetched by their sources, many at once, through the plan's prefetch).
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "b2lazy/byte_store.hpp"

namespace b2lazy {

class ObjectPages {  // thread-safe
 public:
  // Object `key` of `store` (`size` bytes; -1: asked once, by a stat sent beside the first
  // suffix read, or alone), read in aligned pages of `page` bytes; at most `max_bytes`
  // kept (the least recently used go first).
  ObjectPages(StorePtr store, std::string key, int64_t size = -1, int64_t page = 64 << 10,
              int64_t max_bytes = 16 << 20);

  const std::string& url() const { return url_; }
  const StorePtr& store() const { return store_; }
  const std::string& key() const { return key_; }

  // The object's size (a stat the first time, unless known). IOError naming the URL when
  // the object does not exist.
  int64_t size();
  // What identifies the object's content (ObjectInfo::version), when a stat was made; "".
  std::string version() const;
  // Bytes [offset, offset + len) into dst: pages not held are fetched in one store read.
  // IOError naming the URL when they go past the end or the object is missing.
  void read(int64_t offset, int64_t len, void* dst);
  std::vector<uint8_t> read(int64_t offset, int64_t len);
  // Fetches the pages of [offset, offset + len) not held, in one store read (clipped to
  // the object).
  void warm(int64_t offset, int64_t len);
  // The pages of all these ranges (offset >= 0; length -1: to the end) not held, in one
  // store read.
  void warm(const std::vector<ByteRange>& ranges);
  // The object's last `len` bytes (all of it when shorter). The size unknown: one suffix
  // range, with a stat beside it, in flight together.
  void warm_tail(int64_t len);
  // Are bytes [offset, offset + len) all held (read() would make no request)?
  bool holds(int64_t offset, int64_t len);

  // Drops the pages held outside [offset, offset + len): what a reader keeps after it found
  // its part (a .b2z member's array keeps its member's pages, not the zip's directory).
  void forget_outside(int64_t offset, int64_t len);

  // Store calls made (reads and stats): tests count them.
  int64_t requests() const;

 private:
  int64_t known_size_or_unknown();  // the size, or -1 when not asked yet
  // A page's bytes held: [index * page + skip, + bytes.size()) — all of it but where a
  // suffix read began inside it, or the object ends.
  struct Piece {
    std::shared_ptr<const std::vector<uint8_t>> bytes;
    int64_t skip = 0;
  };
  // The pieces covering [offset, offset + len) (inside the object), fetching in one store
  // read the pages not held; `fetch` false: an empty vector when any is not held.
  std::vector<Piece> cover(int64_t offset, int64_t len, bool fetch);
  // Pages `missing` (ascending) fetched in one store read, kept, and returned.
  std::vector<std::pair<int64_t, Piece>> fetch_pages(const std::vector<int64_t>& missing);
  // Under mu_: the held piece of page `index` covering its bytes [from, to), touched.
  const Piece* find(int64_t index, int64_t from, int64_t to);
  // The object's bytes [at, at + bytes.size()) kept as pages. Under mu_.
  void keep_span(int64_t at, const std::vector<uint8_t>& bytes);
  void keep(int64_t index, Piece p);  // under mu_; evicts the least recently used
  [[noreturn]] void past_end(int64_t offset, int64_t len, int64_t size) const;

  StorePtr store_;
  std::string key_, url_;
  int64_t page_, max_bytes_;
  mutable std::mutex mu_;
  int64_t size_;
  std::string version_;
  int64_t held_bytes_ = 0;
  int64_t requests_ = 0;
  std::list<int64_t> lru_;  // page indices, most recently used first
  struct Held {
    Piece piece;
    std::list<int64_t>::iterator where;
  };
  std::unordered_map<int64_t, Held> held_;
};

}  // namespace b2lazy
