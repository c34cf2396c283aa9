// b2nd arrays read through descriptors opened once (a C-Blosc2 I/O backend).
//
// C-Blosc2's own backend opens the file by path on every read, so an array whose file is
// replaced (renamed over) while it is open reads the new file: mixed values. Ours keeps the
// descriptor of what was opened — the file, or the sparse directory whose chunk files are
// opened relative to it — so a replacement leaves an open array reading its old version,
// and a file modified in place is detected (size and mtime compared with what was opened).
#pragma once
#include <b2nd.h>
#include <sys/stat.h>

#include <memory>
#include <string>

namespace b2lazy {

class PinnedFile {
 public:
  ~PinnedFile();
  PinnedFile(const PinnedFile&) = delete;
  PinnedFile& operator=(const PinnedFile&) = delete;
  // Is the file (for a directory: its entries and chunks.b2frame) as it was opened?
  bool unchanged() const;
  bool is_directory() const { return dir_; }

 private:
  PinnedFile() = default;
  friend struct PinnedOpen;
  friend struct PinnedIO;
  int fd_ = -1;  // the file, or the directory
  bool dir_ = false;
  std::string path_;              // the path C-Blosc2 was given (its frame's urlpath for a file)
  struct stat at_open_ {};        // the file or directory
  struct stat index_at_open_ {};  // directory form: its chunks.b2frame
  // File form: the frame's chunks, [header length, header length + its cbytes), from the
  // frame header as it was opened (empty when that header is not readable).
  int64_t chunks_begin_ = 0, chunks_end_ = 0;
};

// While one is alive on a thread, every chunk header C-Blosc2 reads through a PinnedFile on
// that thread is checked (stored_chunk_problem, storage/b2nd_validate.hpp) before C-Blosc2
// allocates the sizes it claims: a corrupted header could claim gigabytes. A bad one reads
// short, so C-Blosc2 fails without allocating, and problem() says what is wrong. Arm it only
// around calls that fetch chunks (or open): there, a 32-byte read among the frame's chunks,
// or at the start of a sparse chunk file, is a chunk header; a block read during a
// decompression may be 32 bytes too. Per thread: worker threads fetch chunks concurrently.
class ChunkFetch {
 public:
  // The chunks fetched hold `expected_bytes` of items of `typesize` bytes; < 0: unknown
  // (at open), then only what a header claims about itself is checked.
  explicit ChunkFetch(int64_t expected_bytes = -1, int32_t typesize = -1);
  ~ChunkFetch();
  ChunkFetch(const ChunkFetch&) = delete;
  ChunkFetch& operator=(const ChunkFetch&) = delete;
  // The first problem found, phrased as stored_chunk_problem's; "" when none.
  const std::string& problem() const { return problem_; }
  // The one armed on this thread, or nullptr.
  static ChunkFetch* armed();
  // Other backends (storage/store_io.hpp): does the 32-byte chunk `header`, with
  // `available` bytes stored from it on, claim what can be stored? Records the problem.
  bool accept(const uint8_t* header, int64_t available);

 private:
  friend struct PinnedIO;
  int64_t expected_bytes_;
  int32_t typesize_;
  std::string problem_;
  ChunkFetch* outer_;  // the one armed before (nested fetches)
};

// An array opened through a PinnedFile; the array must be freed (b2nd_free) before the file.
struct PinnedOpen {
  b2nd_array_t* arr = nullptr;  // nullptr: C-Blosc2 could not open what is there as b2nd
  std::unique_ptr<PinnedFile> file;
  // When arr is nullptr although C-Blosc2 read a frame: what makes it no consistent b2nd
  // array (storage/b2nd_validate.hpp).
  std::string why;
  // Opens the b2nd contiguous file or sparse directory at `urlpath`, or the b2nd frame at
  // byte `offset` of a file (a member stored in a zip: a python-blosc2 .b2z). Throws IOError
  // naming the path when nothing can be opened there (missing, no permission, out of
  // descriptors).
  static PinnedOpen open(const std::string& urlpath, int64_t offset = 0);

 private:
  enum class Attempt { Opened, NotB2nd, Changed };
  Attempt try_open(const std::string& urlpath, int64_t offset);
};

// True when `urlpath` holds something C-Blosc2 opens as a b2nd array (the array is freed).
bool opens_as_b2nd(const std::string& urlpath);

}  // namespace b2lazy
