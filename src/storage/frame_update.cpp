#include "storage/frame_update.hpp"

#include <blosc2.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

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

}  // namespace

FrameUpdate::FrameUpdate(const std::string& path, int64_t nchunks) : path_(path) {
  ensure_blosc2();
  fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd_ < 0) throw IOError("cannot open '" + path + "' for writing: " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw IOError("'" + path + "' is not a regular file");
  }
  try {
    const std::string bad = "'" + path + "': not a consistent b2nd frame (";
    uint8_t h[kFieldsEnd];
    if (st.st_size < kFieldsEnd) throw IOError(bad + "too short)");
    read_exactly(fd_, h, kFieldsEnd, 0, path);
    if (h[10] != 0xd2 || h[15] != 0xcf || h[38] != 0xd3) throw IOError(bad + "header)");
    header_len_ = get_be(h + 11, 4);
    frame_len_ = get_be(h + kFrameLenAt, 8);
    cbytes_ = get_be(h + kCbytesAt, 8);
    if (header_len_ < kFieldsEnd || frame_len_ > st.st_size || cbytes_ < 0 ||
        cbytes_ > frame_len_ - header_len_ - kChunkHeader)
      throw IOError(bad + "header lengths)");
    header_.resize(static_cast<size_t>(header_len_));
    read_exactly(fd_, header_.data(), header_len_, 0, path);

    // The offsets index: one Blosc2 chunk right after the chunks.
    const int64_t index_at = header_len_ + cbytes_;
    uint8_t ih[kChunkHeader];
    read_exactly(fd_, ih, kChunkHeader, index_at, path);
    const int32_t index_nbytes = get_le32(ih + 4), index_cbytes = get_le32(ih + 12);
    if (index_nbytes < 0 || index_nbytes % 8 != 0 || index_cbytes < kChunkHeader ||
        index_cbytes > frame_len_ - index_at || index_nbytes / 8 != nchunks)
      throw IOError(bad + "offsets index)");
    std::vector<uint8_t> index(static_cast<size_t>(index_cbytes));
    read_exactly(fd_, index.data(), index_cbytes, index_at, path);
    offsets_.resize(static_cast<size_t>(index_nbytes / 8));
    blosc2_context* dctx = blosc2_create_dctx(BLOSC2_DPARAMS_DEFAULTS);
    const int got = blosc2_decompress_ctx(dctx, index.data(), index_cbytes, offsets_.data(), index_nbytes);
    blosc2_free_ctx(dctx);
    if (got != index_nbytes) throw IOError(bad + "offsets index)");
    trailer_.resize(static_cast<size_t>(frame_len_ - index_at - index_cbytes));
    read_exactly(fd_, trailer_.data(), static_cast<int64_t>(trailer_.size()), index_at + index_cbytes, path);

    // Each regular chunk's stored size, from its own header.
    sizes_.assign(offsets_.size(), 0);
    for (size_t i = 0; i < offsets_.size(); ++i) {
      if (offsets_[i] < 0) continue;  // a special chunk (zeros, NaNs, uninitialised): no bytes
      uint8_t ch[kChunkHeader];
      if (offsets_[i] > cbytes_ - kChunkHeader) throw IOError(bad + "chunk " + std::to_string(i) + " offset)");
      read_exactly(fd_, ch, kChunkHeader, header_len_ + offsets_[i], path);
      sizes_[i] = get_le32(ch + 12);
      if (sizes_[i] < kChunkHeader || sizes_[i] > cbytes_ - offsets_[i])
        throw IOError(bad + "chunk " + std::to_string(i) + " size)");
      live_bytes_ += sizes_[i];
    }
    end_ = frame_len_;  // (bytes past the frame's length, left by a killed update, are free)
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

FrameUpdate::~FrameUpdate() {
  if (fd_ >= 0) ::close(fd_);
}

void FrameUpdate::append(const void* data, int64_t n) {
  write_exactly(fd_, data, n, end_, path_);
  end_ += n;
}

void FrameUpdate::replace(int64_t id, const uint8_t* chunk, int32_t cbytes) {
  if (id < 0 || id >= nchunks()) throw IndexError("'" + path_ + "': no chunk " + std::to_string(id));
  live_bytes_ -= sizes_[static_cast<size_t>(id)];
  sizes_[static_cast<size_t>(id)] = 0;
  // A chunk of zeros, NaNs or uninitialised values is no bytes but a mark in the index, as
  // C-Blosc2 stores it (its readers refuse such a chunk at a regular offset).
  const int special = cbytes > BLOSC2_CHUNK_BLOSC2_FLAGS ? (chunk[BLOSC2_CHUNK_BLOSC2_FLAGS] >> 4) & BLOSC2_SPECIAL_MASK : 0;
  if (special == BLOSC2_SPECIAL_ZERO || special == BLOSC2_SPECIAL_NAN || special == BLOSC2_SPECIAL_UNINIT) {
    offsets_[static_cast<size_t>(id)] = static_cast<int64_t>(uint64_t(1) << 63 | uint64_t(special) << 56);
    return;
  }
  const int64_t at = end_;
  append(chunk, cbytes);
  offsets_[static_cast<size_t>(id)] = at - header_len_;
  live_bytes_ += cbytes;
  sizes_[static_cast<size_t>(id)] = cbytes;
}

void FrameUpdate::commit() {
  const std::vector<uint8_t> index = compress_offsets(offsets_);
  const int64_t index_at = end_;
  append(index.data(), static_cast<int64_t>(index.size()));
  append(trailer_.data(), static_cast<int64_t>(trailer_.size()));
  // Everything the new frame uses is on disk before the header points at it.
  sync(fd_, path_);
  cbytes_ = index_at - header_len_;
  frame_len_ = end_;
  put_be(header_.data() + kFrameLenAt, frame_len_);
  put_be(header_.data() + kCbytesAt, cbytes_);
  write_exactly(fd_, header_.data() + kFrameLenAt, kFieldsEnd - kFrameLenAt, kFrameLenAt, path_);
  if (::ftruncate(fd_, frame_len_) != 0) throw IOError("'" + path_ + "': cannot truncate: " + std::strerror(errno));
  sync(fd_, path_);
  if (dead_bytes() > live_bytes_ && dead_bytes() > (int64_t(1) << 20)) compact();
}

// The frame rewritten without dead space into a temporary beside it, renamed over it.
void FrameUpdate::compact() {
  static std::atomic<int> counter{0};
  const std::string tmp = path_ + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  struct stat st;
  if (::fstat(fd_, &st) != 0) throw IOError("'" + path_ + "': " + std::strerror(errno));
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st.st_mode & 07777);
  if (out < 0) return;  // (no room for a copy: the frame stays valid, only larger)
  try {
    std::vector<int64_t> offsets(offsets_.size());
    std::vector<uint8_t> buf;
    int64_t at = header_len_;
    for (size_t i = 0; i < offsets_.size(); ++i) {
      offsets[i] = offsets_[i];
      if (offsets_[i] < 0) continue;
      buf.resize(static_cast<size_t>(sizes_[i]));
      read_exactly(fd_, buf.data(), sizes_[i], header_len_ + offsets_[i], path_);
      write_exactly(out, buf.data(), sizes_[i], at, tmp);
      offsets[i] = at - header_len_;
      at += sizes_[i];
    }
    const std::vector<uint8_t> index = compress_offsets(offsets);
    write_exactly(out, index.data(), static_cast<int64_t>(index.size()), at, tmp);
    const int64_t cbytes = at - header_len_;
    at += static_cast<int64_t>(index.size());
    write_exactly(out, trailer_.data(), static_cast<int64_t>(trailer_.size()), at, tmp);
    at += static_cast<int64_t>(trailer_.size());
    std::vector<uint8_t> header = header_;
    put_be(header.data() + kFrameLenAt, at);
    put_be(header.data() + kCbytesAt, cbytes);
    write_exactly(out, header.data(), header_len_, 0, tmp);
    sync(out, tmp);
    ::close(out);
    out = -1;
    if (::rename(tmp.c_str(), path_.c_str()) != 0) throw IOError("'" + path_ + "': " + std::strerror(errno));
  } catch (...) {
    if (out >= 0) ::close(out);
    ::unlink(tmp.c_str());
    throw;
  }
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
  b2nd_context_t* ctx = b2nd_create_ctx(&storage, static_cast<int8_t>(nd), box.data(), arr->chunkshape,
                                        arr->blockshape, arr->dtype, arr->dtype_format, nullptr, 0);
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
