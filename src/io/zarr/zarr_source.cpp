#include "io/zarr/zarr_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "b2lazy/driver.hpp"
#include "b2lazy/error.hpp"
#include "core/saturating.hpp"
#include "exec/thread_state.hpp"
#include "io/blosc_range.hpp"
#include "io/regular_file.hpp"
#include "storage/blosc2_util.hpp"

namespace b2lazy {

namespace {

constexpr int64_t kMaxMetadata = int64_t(64) << 20;
constexpr int64_t kMaxChunkBytes = (int64_t(1) << 31) - 1;  // a read unit, decoded
constexpr size_t kKeptStoredBytes = size_t(16) << 20;       // read_unit's buffer kept per worker

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
    if (st.st_size > kMaxMetadata) throw IOError("'" + where + "': " + std::to_string(st.st_size) + " bytes is too large for metadata");
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
std::string pipeline_layout(const zarr::Pipeline& p) {
  std::string s = "[";
  for (int o : p.order) s += std::to_string(o) + ",";
  s += p.big_endian ? "] big" : "] little";
  if (p.sharding)
    s += " sharding(" + shape_str(p.sharding->inner) + " " + pipeline_layout(p.sharding->codecs) + " index " +
         pipeline_layout(p.sharding->index_codecs) + (p.sharding->index_at_end ? " end)" : " start)");
  for (const zarr::BytesCodec& b : p.bytes_codecs) s += " " + b.name;
  return s;
}

// What reading the array's files depends on in its metadata (not its attributes).
std::string layout(const zarr::Metadata& m) {
  std::string fill;
  for (size_t k = 0; k < itemsize(m.dtype); ++k) fill += std::to_string(m.fill[k]) + ",";
  return std::to_string(m.version) + " " + shape_str(m.shape) + " " + dtype_name(m.dtype) + " " + shape_str(m.chunks) +
         " " + pipeline_layout(m.codecs) + " fill " + fill + (m.c_prefix ? " c" : " ") + m.separator;
}

// A read with the metadata checked around it: before (changed since the last read), after
// (changed while read: zarr-python writes it before the chunks) and when the read fails
// (new chunks decoded the old way fail on their own: the metadata says why).
template <class Check, class Read>
void metadata_checked(const Check& check, const Read& read) {
  check();
  try {
    read();
  } catch (const IOError&) {
    check();
    throw;
  }
  check();
}

}  // namespace

std::shared_ptr<ZarrSource> ZarrSource::open(const std::string& path, const std::string& name_in) {
  const std::string name = name_in.empty() ? path : name_in;
  const int dfd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    const int err = errno;
    if (err == ENOTDIR) throw IOError("cannot open '" + name + "' as a Zarr array: it is a file, not a directory store");
    throw IOError("cannot open '" + name + "' as a Zarr array (" + std::strerror(err) + ")");
  }
  try {
    std::string text;
    zarr::Metadata m;
    FileStamp stamp;
    if (read_small(dfd, "zarr.json", text, name + "/zarr.json", &stamp)) {
      m = zarr::parse_metadata(text, 3, name + "/zarr.json");
    } else if (read_small(dfd, ".zarray", text, name + "/.zarray", &stamp)) {
      m = zarr::parse_metadata(text, 2, name + "/.zarray");
    } else {
      std::string group;
      if (read_small(dfd, ".zgroup", group, name + "/.zgroup"))
        throw IOError("'" + name + "' is a Zarr group, not an array: name an array inside it");
      throw IOError("cannot open '" + name + "' as a Zarr array: it has no zarr.json or .zarray");
    }
    try {
      auto src = std::make_shared<ZarrSource>(std::move(m), dfd, name);
      src->meta_stamp_ = stamp;
      return src;
    } catch (const ValueError& e) {  // sizes beyond int64 (Node's check): the file is at fault
      throw IOError("'" + name + "': " + e.what());
    }
  } catch (...) {
    ::close(dfd);
    throw;
  }
}

ZarrSource::ZarrSource(zarr::Metadata meta, int dirfd, std::string name)
    : UnitSource(meta.dtype, meta.shape), meta_(std::move(meta)), dirfd_(dirfd), name_(std::move(name)) {
  ensure_blosc2();  // (blosc chunks are decoded by C-Blosc2)
  meta_file_ = meta_.version == 3 ? "zarr.json" : ".zarray";
  layout_ = layout(meta_);
  const std::string file = name_ + "/" + meta_file_;
  grid_ = ChunkGrid(shape(), meta_.chunks);
  Shape unit = meta_.chunks;
  const auto& sh = meta_.codecs.sharding;
  if (sh) {
    if (sh->inner.size() != ndim()) throw IOError("'" + file + "': sharding chunk_shape " + shape_str(sh->inner) + " has not " + std::to_string(ndim()) + " axes");
    per_shard_.resize(ndim());
    // The shard (after any transpose) holds whole inner chunks.
    for (size_t k = 0; k < ndim(); ++k) {
      const int64_t outer = meta_.chunks[meta_.codecs.order.empty() ? k : meta_.codecs.order[k]];
      if (outer % sh->inner[k] != 0)
        throw IOError("'" + file + "': shard shape " + shape_str(meta_.chunks) + " is not a multiple of the inner chunks " +
                      shape_str(sh->inner));
    }
    int64_t n = 1;  // the index (16 bytes per inner chunk) is read whole
    for (size_t d = 0; d < ndim(); ++d) n = sat_mul(n, meta_.chunks[d] / sh->inner[d]);
    if (n > (int64_t(1) << 26))
      throw IOError("'" + file + "': shards " + shape_str(meta_.chunks) + " of inner chunks " + shape_str(sh->inner) +
                    " hold " + std::to_string(n) + " inner chunks: the index is too large to read");
    partial_shards_ = meta_.codecs.order.empty() && meta_.codecs.bytes_codecs.empty();
    if (partial_shards_) {
      unit = sh->inner;
      for (size_t d = 0; d < ndim(); ++d) per_shard_[d] = meta_.chunks[d] / sh->inner[d];
      most_inner_ = static_cast<int64_t>(std::min<size_t>(zarr::max_stored(sh->codecs, sh->inner, dtype()), INT64_MAX));
    }
  }
  if (sat_mul(prod(unit), static_cast<int64_t>(itemsize(dtype()))) > kMaxChunkBytes)
    throw IOError("'" + file + "': chunks " + shape_str(unit) + " of " + dtype_name(dtype()) + " exceed 2 GiB");
  read_grid_ = ChunkGrid(shape(), unit);
  most_stored_ = static_cast<int64_t>(std::min<size_t>(zarr::max_stored(meta_.codecs, meta_.chunks, dtype()), INT64_MAX));
  const zarr::Pipeline& p = meta_.codecs;
  blosc_runs_ = ndim() > 0 && !p.sharding && p.order.empty() && (!p.big_endian || itemsize(dtype()) == 1) &&
                p.bytes_codecs.size() == 1 && p.bytes_codecs[0].kind == zarr::BytesCodec::Kind::Blosc;
}

void ZarrSource::fill(const Region& region, void* out, ThreadState& ts) const {
  // (Every read of the files is in a fill: once per task's region, not per unit.)
  metadata_checked([&] { check_metadata(); }, [&] { UnitSource::fill(region, out, ts); });
}

void ZarrSource::read_unit_range(int64_t id, int64_t start, int64_t n, void* dst, ThreadState& ts) const {
  const size_t isz = itemsize(dtype());
  const std::string key = meta_.key(read_grid_.chunk_coords(id));
  int64_t decoded = 0;
  const bool found = with_file(key, [&](int fd, int64_t size) {
    check_stored_size(key, size);
    const BloscRangeRead in{fd, 0, size, sat_mul(prod(read_grid_.chunks()), static_cast<int64_t>(isz)), isz, where(key)};
    decoded = read_blosc_range(in, start, n, dst, ts);
  });
  if (!found) {  // a missing chunk: the fill value
    auto* d = static_cast<uint8_t*>(dst);
    for (int64_t k = 0; k < n; ++k) std::memcpy(d + k * static_cast<int64_t>(isz), meta_.fill, isz);
    return;
  }
  if (dtype() == DType::Bool) {  // any byte other than 0 is True (NumPy's truth), as 1
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t k = 0; k < n; ++k) b[k] = b[k] != 0;
  }
  ts.decompressed[this][id]++;
  ts.decompressed_bytes[this] += decoded;
}

Shape ZarrSource::preferred_chunks() const {
  // The chunk grid's cells (shards) within the array, unless that is large: then the read unit.
  Shape c = meta_.chunks;
  for (size_t d = 0; d < ndim(); ++d) c[d] = std::max<int64_t>(1, std::min(c[d], shape()[d]));
  if (sat_mul(prod(c), static_cast<int64_t>(itemsize(dtype()))) > (int64_t(64) << 20)) return read_grid_.chunks();
  return c;
}

ZarrSource::~ZarrSource() {
  if (dirfd_ >= 0) ::close(dirfd_);
}

double ZarrSource::decode_cost() const {
  const auto deflate = [](const zarr::Pipeline& p) {
    for (const zarr::BytesCodec& c : p.bytes_codecs)
      if (c.kind == zarr::BytesCodec::Kind::Deflate) return true;
    return false;
  };
  const zarr::Pipeline& p = meta_.codecs;
  return deflate(p) || (p.sharding && deflate(p.sharding->codecs)) ? 3.0 : 1.0;
}

std::string ZarrSource::describe() const {
  return "zarr v" + std::to_string(meta_.version) + " '" + name_ + "' " + shape_str(shape()) + " " +
         dtype_name(dtype()) + " chunks=" + shape_str(read_grid_.chunks()) +
         (meta_.codecs.sharding ? " shards=" + shape_str(meta_.chunks) : "") + " codecs=" + meta_.codecs.describe();
}

void ZarrSource::check_stored_size(const std::string& key, int64_t size) const {
  if (size > most_stored_)
    throw IOError("'" + where(key) + "': " + std::to_string(size) + " bytes, more than a chunk " + shape_str(meta_.chunks) +
                  " of " + dtype_name(dtype()) + " is stored in through its codecs (" + std::to_string(most_stored_) +
                  "): a damaged chunk");
}

void ZarrSource::check_store() const {
  struct stat st;
  if (::fstatat(dirfd_, meta_file_.c_str(), &st, 0) != 0) throw_store_gone();
}

void ZarrSource::throw_store_gone() const {
  throw IOError("'" + name_ + "': the Zarr array was removed or replaced while open (its " + meta_file_ + " is gone)");
}

void ZarrSource::check_metadata() const {
  struct stat st;
  if (::fstatat(dirfd_, meta_file_.c_str(), &st, 0) != 0) throw_store_gone();
  const FileStamp now = FileStamp::of(st);
  {
    std::lock_guard<std::mutex> g(mu_);
    if (now == meta_stamp_) return;
  }
  // Rewritten (zarr-python rewrites it for attributes too): refused only if reads differ.
  const std::string file = name_ + "/" + meta_file_;
  std::string text;
  FileStamp read_stamp;
  if (!read_small(dirfd_, meta_file_, text, file, &read_stamp)) throw_store_gone();
  const zarr::Metadata m = zarr::parse_metadata(text, meta_.version, file);
  if (layout(m) != layout_) {
    std::string what = "its chunks, codecs or fill value differ";
    if (m.shape != meta_.shape) what = "its shape " + shape_str(meta_.shape) + " is now " + shape_str(m.shape);
    else if (m.dtype != meta_.dtype) what = std::string("its data type ") + dtype_name(meta_.dtype) + " is now " + dtype_name(m.dtype);
    throw IOError("'" + file + "' changed since the array was opened (" + what + "): open it again");
  }
  std::lock_guard<std::mutex> g(mu_);
  meta_stamp_ = read_stamp;
}

bool ZarrSource::with_file(const std::string& key, const std::function<void(int fd, int64_t size)>& use) const {
  const int fd = open_regular_file(dirfd_, key, where(key));
  if (fd < 0) {
    check_store();
    return false;
  }
  try {
    struct stat st;
    if (::fstat(fd, &st) != 0) throw IOError("'" + where(key) + "': cannot stat (" + std::strerror(errno) + ")");
    use(fd, st.st_size);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return true;
}

bool ZarrSource::read_file(const std::string& key, std::vector<uint8_t>& out, int64_t offset, int64_t len,
                           int64_t* size) const {
  return with_file(key, [&](int fd, int64_t file_size) {
    if (size) *size = file_size;
    if (len < 0) {
      check_stored_size(key, file_size);
      len = file_size - offset;
    }
    if (offset < 0 || offset > file_size || len > file_size - offset)
      throw IOError("'" + where(key) + "': bytes " + std::to_string(offset) + ".." + std::to_string(offset + len) +
                    " lie outside the file's " + std::to_string(file_size));
    read_fd(fd, offset, len, out, where(key));
  });
}

bool ZarrSource::read_inner(const Shape& shard, int64_t i, std::vector<uint8_t>& out, ThreadState& ts) const {
  const std::string key = meta_.key(shard), path = where(key);
  const int64_t sid = grid_.chunk_id(shard);
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
    const bool found = !(off == zarr::kMissing && len == zarr::kMissing);
    if (found) read_fd(fd, static_cast<int64_t>(off), static_cast<int64_t>(len), out, path);
    // A writer in place (not by rename, as zarr-python) may have changed it under the reads.
    if (stamp_of(fd, path) == stamp) return found;
    if (attempt == 3)
      throw IOError("'" + path + "': the shard kept changing while it was read (written in place by another process?)");
  }
}

bool ZarrSource::index_entry(int fd, int64_t size, int64_t i, uint64_t entry[2]) const {
  const zarr::Sharding& s = *meta_.codecs.sharding;
  const int64_t ib = s.index_bytes(prod(per_shard_));
  if (!s.index_codecs.order.empty() || size < ib) return false;
  const int64_t at = (s.index_at_end ? size - ib : 0) + 16 * i;
  ssize_t r;
  do r = ::pread(fd, entry, 16, at);
  while (r < 0 && errno == EINTR);
  if (r != 16) return false;  // (read whole with its errors by the caller)
  if (s.index_codecs.big_endian) zarr::byteswap(entry, 2, 8);
  return true;
}

std::shared_ptr<const ZarrSource::ShardIndex> ZarrSource::shard_index(int64_t sid, const std::string& key, int fd,
                                                                       const FileStamp& stamp, int64_t i,
                                                                       ThreadState& ts) const {
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
  const zarr::Sharding& s = *meta_.codecs.sharding;
  const int64_t n = prod(per_shard_);
  const int64_t ib = s.index_bytes(n);
  const int64_t size = stamp.size;
  if (size < ib)
    throw IOError("'" + where(key) + "': shard of " + std::to_string(size) + " bytes is shorter than its index (" +
                  std::to_string(ib) + " bytes)");
  std::vector<uint8_t> bytes;
  read_fd(fd, s.index_at_end ? size - ib : 0, ib, bytes, where(key));
  auto v = zarr::decode_index(s, bytes.data(), bytes.size(), n, where(key), ts);
  for (int64_t k = 0; k < n; ++k) {
    const uint64_t off = v[2 * k], len = v[2 * k + 1];
    if (off == zarr::kMissing && len == zarr::kMissing) continue;
    if (off > static_cast<uint64_t>(size) || len > static_cast<uint64_t>(size) - off)
      throw IOError("'" + where(key) + "': shard index: inner chunk " + std::to_string(k) + " at " + std::to_string(off) +
                    " (+" + std::to_string(len) + ") lies outside the file's " + std::to_string(size) + " bytes");
    if (len > static_cast<uint64_t>(most_inner_))
      throw IOError("'" + where(key) + "': shard index: inner chunk " + std::to_string(k) + " is stored in " +
                    std::to_string(len) + " bytes, more than an inner chunk " + shape_str(s.inner) + " of " +
                    dtype_name(dtype()) + " takes through its codecs (" + std::to_string(most_inner_) + ")");
  }
  auto index = std::make_shared<const ShardIndex>(ShardIndex{stamp, std::move(v)});
  std::lock_guard<std::mutex> g(mu_);
  indexes_[sid] = index;  // (the file's now: it replaces an older one)
  return index;
}

void ZarrSource::read_unit(int64_t id, void* dst, ThreadState& ts) const {
  const size_t isz = itemsize(dtype());
  const Shape& ushape = read_grid_.chunks();
  const int64_t nitems = prod(ushape);
  Shape coords = read_grid_.chunk_coords(id);
  // The stored bytes, in a buffer each worker keeps: one per unit would be allocated and
  // given back to the system by glibc (brk, page faults) unit after unit — at times twice
  // the time of a sum over 512 KiB inner chunks. Not kept when large.
  thread_local std::vector<uint8_t> bytes;
  struct Release {
    ~Release() {
      if (bytes.capacity() > kKeptStoredBytes) std::vector<uint8_t>().swap(bytes);
    }
  } release;
  bool found;
  std::string key;
  if (partial_shards_) {
    Shape shard(ndim()), inner(ndim());
    for (size_t d = 0; d < ndim(); ++d) shard[d] = coords[d] / per_shard_[d], inner[d] = coords[d] % per_shard_[d];
    int64_t i = 0;
    for (size_t d = 0; d < ndim(); ++d) i = i * per_shard_[d] + inner[d];
    found = read_inner(shard, i, bytes, ts);
    key = meta_.key(shard) + " (inner chunk " + std::to_string(i) + ")";
    if (found)
      zarr::decode(meta_.codecs.sharding->codecs, bytes.data(), bytes.size(), ushape, dtype(), dst, where(key), ts, meta_.fill);
  } else {
    key = meta_.key(coords);
    found = read_file(key, bytes);
    if (found) zarr::decode(meta_.codecs, bytes.data(), bytes.size(), ushape, dtype(), dst, where(key), ts, meta_.fill);
  }
  if (!found) {
    auto* d = static_cast<uint8_t*>(dst);
    for (int64_t k = 0; k < nitems; ++k) std::memcpy(d + k * isz, meta_.fill, isz);
    return;
  }
  if (dtype() == DType::Bool) {  // any byte other than 0 is True (NumPy's truth), as 1
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t k = 0; k < nitems; ++k) b[k] = b[k] != 0;
  }
  ts.decompressed[this][id]++;
  ts.decompressed_bytes[this] += nitems * static_cast<int64_t>(isz);
}

bool ZarrSource::stored_info(StorageInfo& info) const {
  info.format = "zarr";
  info.urlpath = name_;
  info.shape = shape();
  info.chunks = read_grid_.chunks();
  info.blocks = meta_.codecs.sharding ? meta_.chunks : Shape{};
  info.dtype = dtype();
  info.codec = "zarr v" + std::to_string(meta_.version) + ": " + meta_.codecs.describe();
  info.filters = "";
  info.clevel = 0;
  for (const auto& b : meta_.codecs.bytes_codecs) info.clevel = std::max(info.clevel, b.level);
  info.nbytes = sat_mul(size(), static_cast<int64_t>(itemsize(dtype())));
  info.cbytes = 0;
  info.contiguous = false;
  // The files' sizes, wherever the directory is now (it may have been moved into place).
  std::error_code ec;
  const std::string dir = "/proc/self/fd/" + std::to_string(dirfd_);
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2)) info.cbytes += static_cast<int64_t>(it->file_size(e2));
  }
  return true;
}

}  // namespace b2lazy
