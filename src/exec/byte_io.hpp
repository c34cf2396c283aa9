// Bytes moved between processes (b2lazy/distribute.hpp): little-endian integers, a checked
// reader, files written whole or not at all, and files read in place.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace b2lazy::byte_io {

void put_u64(std::vector<uint8_t>& out, uint64_t v);

// Reads what put_u64 and raw appends wrote; a read past the end is a ValueError naming
// `what` and the reader's `source` (e.g. "a stage piece").
struct Reader {
  const uint8_t* p;
  size_t left;
  const char* source;
  uint64_t u64(const char* what);
  const uint8_t* take(uint64_t n, const char* what);
};

// A file mapped read-only; the mapping lives while any copy of `keep` does.
struct Mapped {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> keep;
};
Mapped map_file(const std::string& path, const char* what);
// Drops the whole pages of [p, p + n), a range of a file mapped by map_file() that will
// not be read again, from this process (they stay in the page cache): a finisher reading
// a stage's pieces in turn holds one entry's pages, not every piece it has read.
void release(const void* p, size_t n) noexcept;

// Writes `path` through write(append) under a temporary name, renamed when complete: the
// file is whole or absent (a retried task writes it again).
void write_file_atomic(const std::string& path,
                       const std::function<void(const std::function<void(const void*, size_t)>&)>& write);

}  // namespace b2lazy::byte_io
