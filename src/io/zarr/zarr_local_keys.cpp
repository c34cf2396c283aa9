// The local directory store's reader (zarr_keys.hpp). Chunks are read with pread through
// a descriptor of the store's directory opened once (so an array opened before its
// directory is moved keeps reading it). A shard's index is cached with the shard file's
// stamp. Every read looks at the store as it is then: a chunk or shard another writer
// replaced reads its new values — a cached index is used only while it is the file's.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <unordered_map>

#include "b2lazy/error.hpp"
#include "io/regular_file.hpp"
#include "io/zarr/zarr_keys.hpp"
#include "runtime/thread_state.hpp"
#include "storage/blosc_range.hpp"

namespace b2lazy::zarr {

namespace {

constexpr int64_t kMaxMetadata = int64_t(64) << 20;

// The whole of `fd` from `offset` (`len` bytes, or to the end) into `out`.
void read_fd(int fd, int64_t offset, int64_t len, std::vector<uint8_t>& out, const std::string& where) {
  out.resize(static_cast<size_t>(len));
  int64_t done = 0;
  while (done < len) {
    const ssize_t r = ::pread(fd, out.data() + done, static_cast<size_t>(len - done), offset + done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw IOError("'" + where + "': cannot read (" + std::strerror(errno) + ")");
    if (r == 0) throw IOError("'" + where + "': shorter than expected (changed while read?)");
    done += r;
  }
}

// Reads a small file of directory `dirfd`; false when it does not exist. A FIFO, device
// or directory in its place is refused without blocking (io/regular_file.hpp).
bool read_small(int dirfd, const std::string& name, std::string& text, const std::string& where,
                FileStamp* stamp = nullptr) {
  const int fd = open_regular_file(dirfd, name, where);
  if (fd < 0) return false;
  struct stat st;
  std::vector<uint8_t> buf;
  try {
    if (::fstat(fd, &st) != 0) throw IOError("'" + where + "': cannot stat (" + std::strerror(errno) + ")");
    if (stamp) *stamp = FileStamp::of(st);
    if (st.st_size > kMaxMetadata)
      throw IOError("'" + where + "': " + std::to_string(st.st_size) + " bytes is too large for metadata");
    read_fd(fd, 0, st.st_size, buf, where);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  text.assign(buf.begin(), buf.end());
  return true;
}

struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

FileStamp stamp_of(int fd, const std::string& where) {
  struct stat st;
  if (::fstat(fd, &st) != 0) throw IOError("'" + where + "': cannot stat (" + std::strerror(errno) + ")");
  return FileStamp::of(st);
}

// A pipeline as its decoding depends on it (not levels: decoders need none).
std::string pipeline_layout(const Pipeline& p) {
  std::string s = "[";
  for (int o : p.order) s += std::to_string(o) + ",";
  s += p.big_endian ? "] big" : "] little";
  if (p.sharding)
    s += " sharding(" + shape_str(p.sharding->inner) + " " + pipeline_layout(p.sharding->codecs) + " index " +
         pipeline_layout(p.sharding->index_codecs) + (p.sharding->index_at_end ? " end)" : " start)");
  for (const BytesCodec& b : p.bytes_codecs) s += " " + b.name;
  return s;
}

// What reading the array's files depends on in its metadata (not its attributes).
std::string layout(const Metadata& m) {
  std::string fill;
  for (size_t k = 0; k < itemsize(m.dtype); ++k) fill += std::to_string(m.fill[k]) + ",";
  return std::to_string(m.version) + " " + shape_str(m.shape) + " " + dtype_name(m.dtype) + " " + shape_str(m.chunks) +
         " " + pipeline_layout(m.codecs) + " fill " + fill + (m.c_prefix ? " c" : " ") + m.separator;
}

// A read with the metadata checked around it: before (changed since the last read), after
// (changed while read: zarr-python writes it before the chunks) and when the read fails
// (new chunks decoded the old way fail on their own: the metadata says why).
template <class Check, class Read> void metadata_checked(const Check& check, const Read& read) {
  check();
  try {
    read();
  } catch (const IOError&) {
    check();
    throw;
  }
  check();
}

class LocalKeys final : public KeyReader {
 public:
  LocalKeys(int dirfd, std::string name, std::string meta_file, const Metadata& m, FileStamp stamp)
      : dirfd_(dirfd),
        name_(std::move(name)),
        meta_file_(std::move(meta_file)),
        layout_(layout(m)),
        meta_stamp_(stamp) {}
  ~LocalKeys() override { ::close(dirfd_); }

  bool chunk(const std::string& key, std::vector<uint8_t>& out) const override {
    return with_file(key, [&](int fd, int64_t size) {
      lay_->check_stored_size(key, size);
      read_fd(fd, 0, size, out, lay_->where(key));
    });
  }

  bool run(const KeyRead& r, void* dst, int64_t& decoded, ThreadState& ts) const override {
    const size_t isz = itemsize(lay_->meta->dtype);
    const int64_t expected = prod(lay_->unit) * static_cast<int64_t>(isz);
    if (r.inner >= 0)
      return in_shard(r.shard, r.key, r.inner, ts, [&](int fd, int64_t off, int64_t len) {
        const BloscRangeRead in{fd, off, len, expected, isz, inner_name(r.key, r.inner)};
        decoded = read_blosc_range(in, r.start, r.n, dst, ts);
      });
    return with_file(r.key, [&](int fd, int64_t size) {
      lay_->check_stored_size(r.key, size);
      const BloscRangeRead in{fd, 0, size, expected, isz, lay_->where(r.key)};
      decoded = read_blosc_range(in, r.start, r.n, dst, ts);
    });
  }

  bool inner(int64_t sid, const std::string& key, int64_t i, std::vector<uint8_t>& out,
             ThreadState& ts) const override {
    return in_shard(sid, key, i, ts,
                    [&](int fd, int64_t off, int64_t len) { read_fd(fd, off, len, out, lay_->where(key)); });
  }

  void around_fill(const std::function<std::vector<KeyRead>()>&, const std::function<void()>& fill,
                   ThreadState&) const override {
    // (Every read of the files is in a fill: once per task's region, not per unit.)
    metadata_checked([&] { check_metadata(); }, fill);
  }

  int64_t stored_bytes() const override {
    // The files' sizes, wherever the directory is now (it may have been moved into place).
    int64_t total = 0;
    std::error_code ec;
    const std::string dir = "/proc/self/fd/" + std::to_string(dirfd_);
    for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code e2;
      if (it->is_regular_file(e2)) total += static_cast<int64_t>(it->file_size(e2));
    }
    return total;
  }

 private:
  std::string inner_name(const std::string& key, int64_t i) const {
    return lay_->where(key) + " (inner chunk " + std::to_string(i) + ")";
  }

  // read(fd, offset, length) of inner chunk `i` of shard `key` (id `sid`); false when the
  // shard or the inner chunk is absent. Read again when a writer in place (not by rename,
  // as zarr-python) changed the shard under the reads.
  template <class Read>
  bool in_shard(int64_t sid, const std::string& key, int64_t i, ThreadState& ts, const Read& read) const {
    const std::string path = lay_->where(key);
    for (int attempt = 1;; ++attempt) {
      struct stat st;
      const int fd = open_regular_file(dirfd_, key, path, &st);
      if (fd < 0) {  // no shard: all fill (nothing cached, so a shard written later is read)
        check_store();
        return false;
      }
      const FdCloser closer{fd};
      const FileStamp stamp = FileStamp::of(st);
      const auto index = shard_index(sid, key, fd, stamp, i, ts);
      const uint64_t off = index->entries[2 * i], len = index->entries[2 * i + 1];
      const bool found = !(off == kMissing && len == kMissing);
      if (found) read(fd, static_cast<int64_t>(off), static_cast<int64_t>(len));
      if (stamp_of(fd, path) == stamp) return found;
      if (attempt == 3)
        throw IOError("'" + path +
                      "': the shard kept changing while it was read (written in place by another process?)");
    }
  }

  // A shard's decoded index (offset and size per inner chunk) and the file it was read from.
  struct ShardIndex {
    FileStamp stamp;
    std::vector<uint64_t> entries;
  };

  // Opens chunk file `key` and hands `use` its descriptor and size, closing it after;
  // false (the store checked) when the file is missing.
  bool with_file(const std::string& key, const std::function<void(int fd, int64_t size)>& use) const {
    const int fd = open_regular_file(dirfd_, key, lay_->where(key));
    if (fd < 0) {
      check_store();
      return false;
    }
    const FdCloser closer{fd};
    struct stat st;
    if (::fstat(fd, &st) != 0) throw IOError("'" + lay_->where(key) + "': cannot stat (" + std::strerror(errno) + ")");
    use(fd, st.st_size);
    return true;
  }

  // An absent chunk file reads as the fill value, unless the store itself is gone.
  void check_store() const {
    struct stat st;
    if (::fstatat(dirfd_, meta_file_.c_str(), &st, 0) != 0) throw_store_gone();
  }

  [[noreturn]] void throw_store_gone() const {
    throw IOError("'" + name_ + "': the Zarr array was removed or replaced while open (its " + meta_file_ +
                  " is gone)");
  }

  // The metadata file is the one opened, or one that reads the files alike (attributes
  // changed); else IOError naming it and what changed (shape, dtype...).
  void check_metadata() const {
    struct stat st;
    if (::fstatat(dirfd_, meta_file_.c_str(), &st, 0) != 0) throw_store_gone();
    const FileStamp now = FileStamp::of(st);
    {
      std::lock_guard<std::mutex> g(mu_);
      if (now == meta_stamp_) return;
    }
    // Rewritten (zarr-python rewrites it for attributes too): refused only if reads differ.
    const Metadata& meta = *lay_->meta;
    const std::string file = name_ + "/" + meta_file_;
    std::string text;
    FileStamp read_stamp;
    if (!read_small(dirfd_, meta_file_, text, file, &read_stamp)) throw_store_gone();
    const Metadata m = parse_metadata(text, meta.version, file);
    if (layout(m) != layout_) {
      std::string what = "its chunks, codecs or fill value differ";
      if (m.shape != meta.shape) what = "its shape " + shape_str(meta.shape) + " is now " + shape_str(m.shape);
      else if (m.dtype != meta.dtype)
        what = std::string("its data type ") + dtype_name(meta.dtype) + " is now " + dtype_name(m.dtype);
      throw IOError("'" + file + "' changed since the array was opened (" + what + "): open it again");
    }
    std::lock_guard<std::mutex> g(mu_);
    meta_stamp_ = read_stamp;
  }

  // The shard index's entry `i` as the file `fd` holds it now (16 bytes read); false when
  // the index codecs place it elsewhere than at 16 * i (a transpose) or it cannot be read.
  bool index_entry(int fd, int64_t size, int64_t i, uint64_t entry[2]) const {
    const Sharding& s = *lay_->meta->codecs.sharding;
    const int64_t ib = s.index_bytes(prod(lay_->per_shard));
    if (!s.index_codecs.order.empty() || size < ib) return false;
    const int64_t at = (s.index_at_end ? size - ib : 0) + 16 * i;
    ssize_t r;
    do r = ::pread(fd, entry, 16, at);
    while (r < 0 && errno == EINTR);
    if (r != 16) return false;  // (read whole with its errors by the caller)
    if (s.index_codecs.big_endian) byteswap(entry, 2, 8);
    return true;
  }

  // The index of the shard file open as `fd` (`stamp`): the cached one while it is that
  // file's and its entry `i` is what the file holds there now, else read and cached anew.
  std::shared_ptr<const ShardIndex> shard_index(int64_t sid, const std::string& key, int fd, const FileStamp& stamp,
                                                int64_t i, ThreadState& ts) const {
    std::shared_ptr<const ShardIndex> cached;
    {
      std::lock_guard<std::mutex> g(mu_);
      auto it = indexes_.find(sid);
      if (it != indexes_.end()) cached = it->second;
    }
    // The stamp alone could miss a rewrite (an inode number reused within one tick of the
    // clock): the entry used is checked against the file's too (16 bytes).
    uint64_t entry[2] = {0, 0};
    if (cached && cached->stamp == stamp && index_entry(fd, stamp.size, i, entry) &&
        entry[0] == cached->entries[2 * i] && entry[1] == cached->entries[2 * i + 1])
      return cached;
    // Read and decoded outside the lock; two workers may both do it once.
    const Sharding& s = *lay_->meta->codecs.sharding;
    const int64_t n = prod(lay_->per_shard);
    const int64_t ib = s.index_bytes(n);
    const int64_t size = stamp.size;
    if (size < ib)
      throw IOError("'" + lay_->where(key) + "': shard of " + std::to_string(size) +
                    " bytes is shorter than its index (" + std::to_string(ib) + " bytes)");
    std::vector<uint8_t> bytes;
    read_fd(fd, s.index_at_end ? size - ib : 0, ib, bytes, lay_->where(key));
    auto v = decode_index(s, bytes.data(), bytes.size(), n, lay_->where(key), ts);
    lay_->check_index(v, size, key);
    auto index = std::make_shared<const ShardIndex>(ShardIndex{stamp, std::move(v)});
    std::lock_guard<std::mutex> g(mu_);
    indexes_[sid] = index;  // (the file's now: it replaces an older one)
    return index;
  }

  int dirfd_;
  std::string name_, meta_file_;
  std::string layout_;            // what reads depend on in the metadata opened
  mutable FileStamp meta_stamp_;  // the metadata file last checked to have that layout (under mu_)
  mutable std::mutex mu_;
  mutable std::unordered_map<int64_t, std::shared_ptr<const ShardIndex>> indexes_;  // by shard id
};

}  // namespace

std::unique_ptr<KeyReader> open_local_keys(const std::string& path, const std::string& name, Metadata& m) {
  const int dfd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    const int err = errno;
    if (err == ENOTDIR)
      throw IOError("cannot open '" + name + "' as a Zarr array: it is a file, not a directory store");
    throw IOError("cannot open '" + name + "' as a Zarr array (" + std::strerror(err) + ")");
  }
  try {
    std::string text;
    FileStamp stamp;
    std::string file;
    if (read_small(dfd, "zarr.json", text, name + "/zarr.json", &stamp)) {
      m = parse_metadata(text, 3, name + "/zarr.json");
      file = "zarr.json";
    } else if (read_small(dfd, ".zarray", text, name + "/.zarray", &stamp)) {
      m = parse_metadata(text, 2, name + "/.zarray");
      file = ".zarray";
    } else {
      std::string group;
      if (read_small(dfd, ".zgroup", group, name + "/.zgroup"))
        throw IOError("'" + name + "' is a Zarr group, not an array: name an array inside it");
      throw IOError("cannot open '" + name + "' as a Zarr array: it has no zarr.json or .zarray");
    }
    return std::make_unique<LocalKeys>(dfd, name, file, m, stamp);
  } catch (...) {
    ::close(dfd);
    throw;
  }
}

}  // namespace b2lazy::zarr
