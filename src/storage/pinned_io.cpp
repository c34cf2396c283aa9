#include "storage/pinned_io.hpp"

#include <blosc2.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>
#include <new>

#include "b2lazy/error.hpp"
#include "storage/b2nd_validate.hpp"
#include "storage/blosc2_util.hpp"

namespace b2lazy {

namespace {
// C-Blosc2 keeps ids 160..255 for backends registered at run time.
constexpr uint8_t kPinnedIoId = 224;
constexpr char kPinnedIoName[] = "b2lazy-pinned";

bool same_content(const struct stat& a, const struct stat& b) {
  // Not ctime: a rename or unlink changes it, and a replaced array must stay readable.
  return a.st_ino == b.st_ino && a.st_dev == b.st_dev && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

struct Stream {
  int fd;
  bool owned;  // a chunk file opened for this read; the array's own descriptor is not
  const PinnedFile* file;
  bool chunk_file;  // "<n>.chunk" of a sparse directory
};

thread_local ChunkFetch* armed_fetch = nullptr;

// Big-endian integer of `n` bytes at `p` (the frame header's msgpack fields).
int64_t big_endian(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | p[i];
  return static_cast<int64_t>(v);
}
}  // namespace

ChunkFetch::ChunkFetch(int64_t expected_bytes, int32_t typesize)
    : expected_bytes_(expected_bytes), typesize_(typesize), outer_(armed_fetch) {
  armed_fetch = this;
}

ChunkFetch::~ChunkFetch() { armed_fetch = outer_; }

ChunkFetch* ChunkFetch::armed() { return armed_fetch; }

bool ChunkFetch::accept(const uint8_t* header, int64_t available) {
  std::string why = stored_chunk_problem(header, expected_bytes_, typesize_, available);
  if (why.empty()) return true;
  if (problem_.empty()) problem_ = std::move(why);
  return false;
}

// The callbacks C-Blosc2 calls for every read of an array opened by PinnedOpen::open.
struct PinnedIO {
  static void* open(const char* urlpath, const char* mode, void* params) {
    auto* p = static_cast<PinnedFile*>(params);
    if (!p || !urlpath || !mode || mode[0] != 'r' || std::strchr(mode, '+')) return nullptr;  // sources are read only
    if (!p->dir_) {
      // The frame's own path: read the file that was opened, whatever is at that path now.
      if (p->path_ != urlpath) return nullptr;
      return new (std::nothrow) Stream{p->fd_, false, p, false};
    }
    // "<dir>/chunks.b2frame" or "<dir>/<n>.chunk": opened inside the directory that was opened.
    const char* slash = std::strrchr(urlpath, '/');
    if (!slash || slash[1] == '\0' || std::strcmp(slash + 1, "..") == 0 || std::strcmp(slash + 1, ".") == 0)
      return nullptr;
    int fd = ::openat(p->fd_, slash + 1, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return nullptr;
    const size_t len = std::strlen(slash + 1);
    const bool chunk_file = len > 6 && std::strcmp(slash + 1 + len - 6, ".chunk") == 0;
    auto* s = new (std::nothrow) Stream{fd, true, p, chunk_file};
    if (!s) ::close(fd);
    return s;
  }
  static int close(void* stream) {
    auto* s = static_cast<Stream*>(stream);
    if (s && s->owned) ::close(s->fd);
    delete s;
    return 0;
  }
  static int64_t size(void* stream) {
    struct stat st;
    return ::fstat(static_cast<Stream*>(stream)->fd, &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
  }
  static int64_t read(void** ptr, int64_t size, int64_t nitems, int64_t position, void* stream) {
    if (!ptr || !*ptr || size <= 0 || nitems < 0 || position < 0 || nitems > INT64_MAX / size) return 0;
    const int fd = static_cast<Stream*>(stream)->fd;
    char* buf = static_cast<char*>(*ptr);
    const int64_t want = size * nitems;
    int64_t done = 0;
    while (done < want) {
      ssize_t n = ::pread(fd, buf + done, static_cast<size_t>(want - done), static_cast<off_t>(position + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += n;
    }
    if (armed_fetch && done == want && want >= BLOSC_EXTENDED_HEADER_LENGTH &&
        !header_accepted(*static_cast<Stream*>(stream), position, want, reinterpret_cast<const uint8_t*>(buf)))
      return 0;
    return done / size;
  }
  // For a read that starts with a chunk header (see ChunkFetch): does it claim what can be
  // stored? A sparse chunk file is read from its start, whole or its header alone; a frame's
  // chunk header is read alone (32 bytes) before C-Blosc2 allocates for the chunk.
  static bool header_accepted(const Stream& s, int64_t position, int64_t len, const uint8_t* header) {
    int64_t available = -1;  // bytes from `position` to the end of the chunk's storage
    struct stat st;
    if (s.chunk_file) {
      if (position == 0 && ::fstat(s.fd, &st) == 0) available = st.st_size;
    } else if (!s.file->dir_ && len == BLOSC_EXTENDED_HEADER_LENGTH && position >= s.file->chunks_begin_ &&
               position < s.file->chunks_end_) {
      available = std::min<int64_t>(s.file->chunks_end_, s.file->at_open_.st_size) - position;
    }
    if (available < 0) return true;  // not a chunk header
    return armed_fetch->accept(header, available);
  }
  static int64_t write(const void*, int64_t, int64_t, int64_t, void*) { return 0; }
  static int truncate(void*, int64_t) { return -1; }
  // The PinnedFile belongs to its PinnedOpen, not to C-Blosc2: blosc2_schunk_open_udio
  // calls destroy on some of its failure paths and not on others.
  static int destroy(void*) { return 0; }
};

namespace {
void register_pinned_io() {
  static std::once_flag once;
  std::call_once(once, [] {
    ensure_blosc2();
    blosc2_io_cb cb{};
    cb.id = kPinnedIoId;
    cb.name = const_cast<char*>(kPinnedIoName);
    cb.is_allocation_necessary = true;
    cb.open = PinnedIO::open;
    cb.close = PinnedIO::close;
    cb.size = PinnedIO::size;
    cb.write = PinnedIO::write;
    cb.read = PinnedIO::read;
    cb.truncate = PinnedIO::truncate;
    cb.destroy = PinnedIO::destroy;
    check_blosc2(blosc2_register_io_cb(&cb), "registering b2lazy's I/O backend");
  });
}

[[noreturn]] void throw_open_error(const std::string& urlpath, int err) {
  if (err == ENOENT) throw IOError("no such file or directory: '" + urlpath + "'");
  if (err == EMFILE || err == ENFILE)
    throw IOError("cannot open '" + urlpath + "': " + std::strerror(err) +
                  " (each open b2nd array holds one file descriptor; raise the limit with ulimit -n)");
  throw IOError("cannot open '" + urlpath + "': " + std::strerror(err));
}
}  // namespace

PinnedFile::~PinnedFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool PinnedFile::unchanged() const {
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !same_content(st, at_open_)) return false;
  if (!dir_) return true;
  return ::fstatat(fd_, "chunks.b2frame", &st, AT_SYMLINK_NOFOLLOW) == 0 && same_content(st, index_at_open_);
}

// One attempt: the descriptor, then C-Blosc2's open through it.
PinnedOpen::Attempt PinnedOpen::try_open(const std::string& urlpath, int64_t offset) {
  PinnedFile& f = *file;
  f.fd_ = ::open(urlpath.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);  // a FIFO must not block
  if (f.fd_ < 0) throw_open_error(urlpath, errno);
  if (::fstat(f.fd_, &f.at_open_) != 0) throw_open_error(urlpath, errno);
  f.dir_ = S_ISDIR(f.at_open_.st_mode);
  if (!f.dir_ && !S_ISREG(f.at_open_.st_mode)) return Attempt::NotB2nd;  // a FIFO, device, socket
  if (f.dir_ && (offset != 0 || ::fstatat(f.fd_, "chunks.b2frame", &f.index_at_open_, AT_SYMLINK_NOFOLLOW) != 0))
    return Attempt::NotB2nd;
  f.path_ = urlpath;
  if (!f.dir_) {
    // Where the frame's chunks are: msgpack int32 header length at byte 11 (marker 0xd2 at
    // 10), int64 cbytes at byte 39 (marker 0xd3 at 38), both big-endian.
    // (Positions in the file: a frame at `offset` has them shifted by it.)
    uint8_t h[47];
    if (::pread(f.fd_, h, sizeof h, offset) == static_cast<ssize_t>(sizeof h) && h[10] == 0xd2 && h[38] == 0xd3) {
      const int64_t begin = big_endian(h + 11, 4), cbytes = big_endian(h + 39, 8);
      if (begin > 0 && cbytes >= 0 && offset <= INT64_MAX / 2 - begin) {
        f.chunks_begin_ = offset + begin;
        f.chunks_end_ = f.chunks_begin_ + std::min(cbytes, INT64_MAX - f.chunks_begin_);
      }
    }
  }
  blosc2_io io{kPinnedIoId, kPinnedIoName, &f};
  blosc2_schunk* sc = nullptr;
  {
    ChunkFetch fetch;  // the headers read at open (C-Blosc2 reads chunk 0's lazily)
    sc = offset ? blosc2_schunk_open_offset_udio(urlpath.c_str(), offset, &io)
                : blosc2_schunk_open_udio(urlpath.c_str(), &io);
    if (!sc && !fetch.problem().empty()) why = "a chunk " + fetch.problem();
  }
  if (!sc) return Attempt::NotB2nd;
  arr = b2nd_from_checked_schunk(sc, why);  // frees sc when it is no consistent b2nd array
  if (!arr) return Attempt::NotB2nd;
  if (f.unchanged()) return Attempt::Opened;
  b2nd_free(arr);
  arr = nullptr;
  return Attempt::Changed;  // written to while it was being opened
}

PinnedOpen PinnedOpen::open(const std::string& urlpath, int64_t offset) {
  register_pinned_io();
  // An open that fails because the path was replaced meanwhile (C-Blosc2 looks at the path
  // once more, and the callbacks refuse paths of the other kind; an old sparse directory
  // loses its index as it is removed) is tried again: the path holds a complete array.
  for (int attempt = 0;; ++attempt) {
    PinnedOpen r;
    r.file.reset(new PinnedFile);
    const Attempt a = r.try_open(urlpath, offset);
    if (a == Attempt::Opened) return r;
    struct stat now;
    const struct stat& was = r.file->at_open_;
    const bool replaced = ::stat(urlpath.c_str(), &now) == 0 && (now.st_ino != was.st_ino || now.st_dev != was.st_dev);
    if ((!replaced && a != Attempt::Changed) || attempt == 4) return r;
  }
}

bool opens_as_b2nd(const std::string& urlpath) {
  PinnedOpen o = PinnedOpen::open(urlpath);
  if (!o.arr) return false;
  b2nd_free(o.arr);
  return true;
}

}  // namespace b2lazy
