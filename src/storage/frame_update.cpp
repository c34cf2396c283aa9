#include "storage/frame_update.hpp"

#include <blosc2.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>

#include "b2lazy/error.hpp"
#include "storage/blosc2_util.hpp"

namespace b2lazy {

namespace {

// The header fields rewritten (msgpack, big-endian): frame length at byte 16 (marker 0xcf
// at 15), chunk bytes at byte 39 (marker 0xd3 at 38); header length at byte 11 (0xd2 at 10).
constexpr int kFrameLenAt = 16, kCbytesAt = 39, kFieldsEnd = 47;
constexpr int kChunkHeader = BLOSC_EXTENDED_HEADER_LENGTH;  // 32 bytes

int64_t get_be(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | p[i];
  return static_cast<int64_t>(v);
}
void put_be(uint8_t* p, int64_t value) {
  for (int i = 7; i >= 0; --i, value >>= 8) p[i] = static_cast<uint8_t>(value & 0xff);
}
int32_t get_le32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | p[i];
  return static_cast<int32_t>(v);
}

void read_exactly(int fd, void* dst, int64_t n, int64_t at, const std::string& path) {
  auto* p = static_cast<char*>(dst);
  for (int64_t done = 0; done < n;) {
    const ssize_t r = ::pread(fd, p + done, static_cast<size_t>(n - done), static_cast<off_t>(at + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw IOError("'" + path + "': cannot read " + std::to_string(n) + " bytes at " + std::to_string(at));
    done += r;
  }
}

void write_exactly(int fd, const void* src, int64_t n, int64_t at, const std::string& path) {
  const auto* p = static_cast<const char*>(src);
  for (int64_t done = 0; done < n;) {
    const ssize_t r = ::pwrite(fd, p + done, static_cast<size_t>(n - done), static_cast<off_t>(at + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw IOError("'" + path + "': cannot write: " + std::strerror(errno));
    done += r;
  }
}

void sync(int fd, const std::string& path) {
  if (::fdatasync(fd) != 0) throw IOError("'" + path + "': cannot flush to disk: " + std::strerror(errno));
}

// The offsets index as C-Blosc2 compresses it (frame.c: typesize 8, BloscLZ, 16 KiB blocks).
std::vector<uint8_t> compress_offsets(const std::vector<int64_t>& offsets) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = sizeof(int64_t);
  cp.compcode = BLOSC_BLOSCLZ;
  cp.blocksize = 16 * 1024;
  cp.splitmode = BLOSC_NEVER_SPLIT;
  cp.nthreads = 1;
  const int32_t nbytes = static_cast<int32_t>(offsets.size() * sizeof(int64_t));
  std::vector<uint8_t> out(static_cast<size_t>(nbytes) + BLOSC2_MAX_OVERHEAD);
  blosc2_context* ctx = blosc2_create_cctx(cp);
  const int n = blosc2_compress_ctx(ctx, offsets.data(), nbytes, out.data(), static_cast<int32_t>(out.size()));
  blosc2_free_ctx(ctx);
  check_blosc2(n > 0 ? 0 : -1, "compressing a frame's offsets index");
  out.resize(static_cast<size_t>(n));
  return out;
}

// A chunk of zeros, NaNs or uninitialised values is no bytes but a mark in the index, as
// C-Blosc2 stores it (its readers refuse such a chunk at a regular offset): that mark, or 0.
int64_t special_mark(const uint8_t* chunk, int32_t cbytes) {
  const int special =
      cbytes > BLOSC2_CHUNK_BLOSC2_FLAGS ? (chunk[BLOSC2_CHUNK_BLOSC2_FLAGS] >> 4) & BLOSC2_SPECIAL_MASK : 0;
  if (special != BLOSC2_SPECIAL_ZERO && special != BLOSC2_SPECIAL_NAN && special != BLOSC2_SPECIAL_UNINIT) return 0;
  return static_cast<int64_t>(uint64_t(1) << 63 | uint64_t(special) << 56);
}

// A frame's header, offsets index and trailer. The index follows the chunks in a
// contiguous frame, the header in a sparse directory's chunks.b2frame.
struct FrameParts {
  std::vector<uint8_t> header;
  int64_t header_len = 0, frame_len = 0, cbytes = 0;
  std::vector<int64_t> offsets;  // chunk positions after the header (sparse: chunk file numbers); < 0: marks
  std::vector<uint8_t> trailer;

  void read(int fd, const std::string& path, int64_t nchunks, bool sparse) {
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) throw IOError("'" + path + "' is not a regular file");
    const std::string bad = "'" + path + "': not a consistent b2nd frame (";
    uint8_t h[kFieldsEnd];
    if (st.st_size < kFieldsEnd) throw IOError(bad + "too short)");
    read_exactly(fd, h, kFieldsEnd, 0, path);
    if (h[10] != 0xd2 || h[15] != 0xcf || h[38] != 0xd3) throw IOError(bad + "header)");
    header_len = get_be(h + 11, 4);
    frame_len = get_be(h + kFrameLenAt, 8);
    cbytes = get_be(h + kCbytesAt, 8);
    const int64_t chunk_bytes = sparse ? 0 : cbytes;  // (a sparse frame's cbytes counts its files)
    if (header_len < kFieldsEnd || frame_len > st.st_size || cbytes < 0 ||
        chunk_bytes > frame_len - header_len - kChunkHeader)
      throw IOError(bad + "header lengths)");
    header.resize(static_cast<size_t>(header_len));
    read_exactly(fd, header.data(), header_len, 0, path);
    const int64_t index_at = header_len + chunk_bytes;
    uint8_t ih[kChunkHeader];
    read_exactly(fd, ih, kChunkHeader, index_at, path);
    const int32_t index_nbytes = get_le32(ih + 4), index_cbytes = get_le32(ih + 12);
    if (index_nbytes != nchunks * 8 || index_cbytes < kChunkHeader || index_cbytes > frame_len - index_at)
      throw IOError(bad + "offsets index)");
    std::vector<uint8_t> index(static_cast<size_t>(index_cbytes));
    read_exactly(fd, index.data(), index_cbytes, index_at, path);
    offsets.resize(static_cast<size_t>(nchunks));
    blosc2_context* dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
    const int got = blosc2_decompress_ctx(dctx, index.data(), index_cbytes, offsets.data(), index_nbytes);
    blosc2_free_ctx(dctx);
    if (got != index_nbytes) throw IOError(bad + "offsets index)");
    trailer.resize(static_cast<size_t>(frame_len - index_at - index_cbytes));
    read_exactly(fd, trailer.data(), static_cast<int64_t>(trailer.size()), index_at + index_cbytes, path);
  }
};

int open_checked(int dirfd, const char* name, int flags, const std::string& what) {
  const int fd = ::openat(dirfd, name, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) throw IOError("cannot open '" + what + "' for writing: " + std::strerror(errno));
  return fd;
}

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

// Writes file `name` in directory `dirfd` by `write` (given the new file's descriptor):
// under a temporary name first, flushed, then renamed over `name` — a reader sees the old
// file or the new one.
void replace_file(int dirfd, const std::string& name, mode_t mode, const std::string& where,
                  const std::function<void(int fd)>& write) {
  static std::atomic<int> counter{0};
  const std::string tmp = name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  int fd = ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) throw IOError("'" + where + "': cannot write '" + tmp + "': " + std::strerror(errno));
  try {
    write(fd);
    sync(fd, where);
    ::close(fd);
    fd = -1;
    if (::renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) != 0)
      throw IOError("'" + where + "': cannot replace '" + name + "': " + std::strerror(errno));
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlinkat(dirfd, tmp.c_str(), 0);
    throw;
  }
}

// The same with the file's bytes given as pieces, written one after another.
void replace_file(int dirfd, const std::string& name, mode_t mode, const std::string& where,
                  const std::vector<std::pair<const void*, int64_t>>& parts) {
  replace_file(dirfd, name, mode, where, [&](int fd) {
    int64_t at = 0;
    for (const auto& [data, n] : parts) {
      write_exactly(fd, data, n, at, where);
      at += n;
    }
  });
}

// A contiguous file: chunks appended, the header switched once (see the header file).
class FileUpdate final : public ChunkUpdate {
 public:
  FileUpdate(const std::string& path, int64_t nchunks)
      : path_(path), fd_(::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) {
    if (fd_.fd < 0) throw IOError("cannot open '" + path + "' for writing: " + std::strerror(errno));
    f_.read(fd_.fd, path, nchunks, false);
    const std::string bad = "'" + path + "': not a consistent b2nd frame (";
    // Each regular chunk's stored size, from its own header (for the dead space).
    sizes_.assign(f_.offsets.size(), 0);
    for (size_t i = 0; i < f_.offsets.size(); ++i) {
      if (f_.offsets[i] < 0) continue;
      uint8_t ch[kChunkHeader];
      if (f_.offsets[i] > f_.cbytes - kChunkHeader) throw IOError(bad + "chunk " + std::to_string(i) + " offset)");
      read_exactly(fd_.fd, ch, kChunkHeader, f_.header_len + f_.offsets[i], path);
      sizes_[i] = get_le32(ch + 12);
      if (sizes_[i] < kChunkHeader || sizes_[i] > f_.cbytes - f_.offsets[i])
        throw IOError(bad + "chunk " + std::to_string(i) + " size)");
      live_bytes_ += sizes_[i];
    }
    end_ = f_.frame_len;  // (bytes past the frame's length, left by a killed update, are free)
  }

  void replace(int64_t id, const uint8_t* chunk, int32_t cbytes) override {
    const size_t i = static_cast<size_t>(id);
    live_bytes_ -= sizes_.at(i);
    sizes_[i] = 0;
    if (const int64_t mark = special_mark(chunk, cbytes)) {
      f_.offsets[i] = mark;
      return;
    }
    f_.offsets[i] = end_ - f_.header_len;
    append(chunk, cbytes);
    live_bytes_ += cbytes;
    sizes_[i] = cbytes;
  }

  void commit() override {
    const std::vector<uint8_t> index = compress_offsets(f_.offsets);
    const int64_t index_at = end_;
    append(index.data(), static_cast<int64_t>(index.size()));
    append(f_.trailer.data(), static_cast<int64_t>(f_.trailer.size()));
    sync(fd_.fd, path_);  // everything the new frame uses is on disk before the header points at it
    f_.cbytes = index_at - f_.header_len;
    f_.frame_len = end_;
    put_be(f_.header.data() + kFrameLenAt, f_.frame_len);
    put_be(f_.header.data() + kCbytesAt, f_.cbytes);
    write_exactly(fd_.fd, f_.header.data() + kFrameLenAt, kFieldsEnd - kFrameLenAt, kFrameLenAt, path_);
    if (::ftruncate(fd_.fd, f_.frame_len) != 0)
      throw IOError("'" + path_ + "': cannot truncate: " + std::strerror(errno));
    sync(fd_.fd, path_);
    const int64_t dead = f_.cbytes - live_bytes_;
    if (dead > live_bytes_ && dead > (int64_t(1) << 20)) compact();
  }

 private:
  void append(const void* data, int64_t n) {
    write_exactly(fd_.fd, data, n, end_, path_);
    end_ += n;
  }

  // The frame without dead space, written beside it (chunk by chunk) and renamed over it.
  void compact() {
    struct stat st;
    if (::fstat(fd_.fd, &st) != 0) throw IOError("'" + path_ + "': " + std::strerror(errno));
    const std::filesystem::path file(path_);
    const std::filesystem::path parent = file.has_parent_path() ? file.parent_path() : ".";
    Fd dir(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.fd < 0) return;  // (the frame stays valid, only larger)
    replace_file(dir.fd, file.filename().string(), st.st_mode & 07777, path_, [&](int out) {
      std::vector<int64_t> offsets = f_.offsets;
      std::vector<uint8_t> chunk;
      int64_t at = f_.header_len;
      for (size_t i = 0; i < offsets.size(); ++i) {
        if (offsets[i] < 0) continue;
        chunk.resize(static_cast<size_t>(sizes_[i]));
        read_exactly(fd_.fd, chunk.data(), sizes_[i], f_.header_len + f_.offsets[i], path_);
        write_exactly(out, chunk.data(), sizes_[i], at, path_);
        offsets[i] = at - f_.header_len;
        at += sizes_[i];
      }
      const std::vector<uint8_t> index = compress_offsets(offsets);
      const int64_t cbytes = at - f_.header_len;
      write_exactly(out, index.data(), static_cast<int64_t>(index.size()), at, path_);
      at += static_cast<int64_t>(index.size());
      write_exactly(out, f_.trailer.data(), static_cast<int64_t>(f_.trailer.size()), at, path_);
      at += static_cast<int64_t>(f_.trailer.size());
      std::vector<uint8_t> header = f_.header;
      put_be(header.data() + kFrameLenAt, at);
      put_be(header.data() + kCbytesAt, cbytes);
      write_exactly(out, header.data(), f_.header_len, 0, path_);
    });
  }

  std::string path_;
  Fd fd_;
  FrameParts f_;
  std::vector<int32_t> sizes_;  // each regular chunk's stored bytes (0 for marks)
  int64_t end_ = 0;             // where the next appended byte goes
  int64_t live_bytes_ = 0;      // sum of sizes_
};

// A sparse directory: chunk files replaced by rename, the index last when it changes.
class DirectoryUpdate final : public ChunkUpdate {
 public:
  DirectoryUpdate(const std::string& path, int64_t nchunks)
      : path_(path), dir_(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (dir_.fd < 0) throw IOError("cannot open '" + path + "' for writing: " + std::strerror(errno));
    Fd index(open_checked(dir_.fd, "chunks.b2frame", O_RDONLY | O_NOFOLLOW, path + "/chunks.b2frame"));
    f_.read(index.fd, path + "/chunks.b2frame", nchunks, true);
    struct stat st;
    mode_ = ::fstat(index.fd, &st) == 0 ? st.st_mode & 07777 : 0644;
    for (int64_t o : f_.offsets) next_file_ = std::max(next_file_, o + 1);
  }

  void replace(int64_t id, const uint8_t* chunk, int32_t cbytes) override {
    int64_t& o = f_.offsets.at(static_cast<size_t>(id));
    if (const int64_t mark = special_mark(chunk, cbytes)) {
      if (o >= 0) orphans_.push_back(o);
      o = mark;
      index_changed_ = true;
      return;
    }
    if (o < 0) {  // a new file, unseen until the new index names it
      o = next_file_++;
      index_changed_ = true;
    }
    replace_file(dir_.fd, file_name(o), mode_, path_, {{chunk, cbytes}});
  }

  void commit() override {
    if (index_changed_) {
      const std::vector<uint8_t> index = compress_offsets(f_.offsets);
      put_be(f_.header.data() + kFrameLenAt, f_.header_len + static_cast<int64_t>(index.size() + f_.trailer.size()));
      replace_file(dir_.fd, "chunks.b2frame", mode_, path_,
                   {{f_.header.data(), f_.header_len},
                    {index.data(), static_cast<int64_t>(index.size())},
                    {f_.trailer.data(), static_cast<int64_t>(f_.trailer.size())}});
      for (int64_t o : orphans_)
        if (std::find(f_.offsets.begin(), f_.offsets.end(), o) == f_.offsets.end())
          ::unlinkat(dir_.fd, file_name(o).c_str(), 0);
    }
    ::fsync(dir_.fd);  // (the renames, on disk)
  }

 private:
  static std::string file_name(int64_t n) {  // C-Blosc2's: eight upper-case hex digits
    char name[32];
    std::snprintf(name, sizeof name, "%08" PRIX32 ".chunk", static_cast<uint32_t>(n));
    return name;
  }

  std::string path_;
  Fd dir_;
  FrameParts f_;
  mode_t mode_ = 0644;
  int64_t next_file_ = 0;
  bool index_changed_ = false;
  std::vector<int64_t> orphans_;  // files of chunks that became marks
};

}  // namespace

std::unique_ptr<ChunkUpdate> ChunkUpdate::open(const std::string& urlpath, int64_t nchunks) {
  ensure_blosc2();
  struct stat st;
  if (::stat(urlpath.c_str(), &st) != 0) throw IOError("cannot open '" + urlpath + "': " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return std::make_unique<DirectoryUpdate>(urlpath, nchunks);
  return std::make_unique<FileUpdate>(urlpath, nchunks);
}

}  // namespace b2lazy

namespace b2lazy {

std::vector<uint8_t> compress_chunk_like(const b2nd_array_t* arr, const Shape& box, const void* data) {
  // A one-chunk array of the box's shape with `arr`'s chunk and block shapes and
  // compression: its chunk is laid out (blocks, padding) and compressed as `arr`'s would be.
  blosc2_cparams* cp = nullptr;
  check_blosc2(blosc2_schunk_get_cparams(arr->sc, &cp), "reading an array's compression parameters");
  blosc2_cparams cparams = *cp;
  std::free(cp);
  cparams.nthreads = 1;
  cparams.schunk = nullptr;
  blosc2_storage storage = BLOSC2_STORAGE_DEFAULTS;
  storage.cparams = &cparams;
  const int nd = arr->ndim;
  b2nd_context_t* ctx = b2nd_create_ctx(&storage, static_cast<int8_t>(nd), box.data(), arr->chunkshape, arr->blockshape,
                                        arr->dtype, arr->dtype_format, nullptr, 0);
  if (!ctx) throw IOError("cannot make a chunk like those of the array");
  b2nd_array_t* one = nullptr;
  const int64_t nbytes = prod(box) * arr->sc->typesize;
  const int rc = b2nd_from_cbuffer(ctx, &one, data, nbytes);
  b2nd_free_ctx(ctx);
  check_blosc2(rc, "compressing a chunk");
  uint8_t* chunk = nullptr;
  bool needs_free = false;
  const int cbytes = blosc2_schunk_get_chunk(one->sc, 0, &chunk, &needs_free);
  std::vector<uint8_t> out;
  if (cbytes > 0) out.assign(chunk, chunk + cbytes);
  if (needs_free) std::free(chunk);
  b2nd_free(one);
  check_blosc2(cbytes > 0 ? 0 : -1, "compressing a chunk");
  return out;
}

}  // namespace b2lazy
