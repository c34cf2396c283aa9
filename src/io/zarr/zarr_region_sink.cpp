#include "io/zarr/zarr_region_sink.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <exception>
#include <filesystem>
#include <sstream>
#include <thread>

#include "b2lazy/error.hpp"
#include "core/strided_copy.hpp"
#include "io/zarr/zarr_source.hpp"
#include "storage/output_path.hpp"

namespace b2lazy {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

int64_t number(const std::string& s, const std::string& url) {
  try {
    size_t used = 0;
    const long long v = std::stoll(s, &used);
    if (used == s.size()) return v;
  } catch (const std::exception&) {}
  throw ValueError("'" + url + "': '" + s + "' is not an integer");
}

// Sets the parsed pipeline's compressor parameters from `codec`, refusing what this sink
// cannot encode as the array's metadata says (the caller then writes through zarr-python).
void apply_codec(zarr::Pipeline& p, const std::string& codec, const std::string& url) {
  if (p.sharding || !p.order.empty())
    throw ValueError("'" + url + "': sharded or transposed Zarr arrays are not written in place by b2lazy");
  const std::vector<std::string> f = split(codec, ':');
  if (f.empty() || f[0] == "none") {
    if (!p.bytes_codecs.empty()) throw ValueError("'" + url + "': codec 'none' but the array is compressed");
    return;
  }
  if (p.bytes_codecs.size() != 1)
    throw ValueError("'" + url + "': one compressor expected, the array has " + std::to_string(p.bytes_codecs.size()));
  zarr::BytesCodec& b = p.bytes_codecs[0];
  if (f[0] == "zstd" && f.size() == 2 && b.kind == zarr::BytesCodec::Kind::Zstd) {
    b.level = static_cast<int>(number(f[1], url));
  } else if (f[0] == "blosc" && f.size() == 4 && b.kind == zarr::BytesCodec::Kind::Blosc) {
    b.cname = f[1];
    b.level = static_cast<int>(number(f[2], url));
    b.shuffle = number(f[3], url) != 0;
  } else {
    throw ValueError("'" + url + "': codec '" + codec + "' is not the array's compressor '" + b.name + "'");
  }
}

bool is_nan(const uint8_t* p, size_t size) {
  if (size == 4) {
    float f;
    std::memcpy(&f, p, 4);
    return std::isnan(f);
  }
  if (size == 8) {
    double d;
    std::memcpy(&d, p, 8);
    return std::isnan(d);
  }
  if (size == 2) {  // half: exponent all ones, mantissa non-zero
    const uint16_t h = static_cast<uint16_t>(p[0] | (p[1] << 8));
    return (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0;
  }
  return false;
}

}  // namespace

ZarrRegionSink::ZarrRegionSink(const SinkSpec& spec) {
  const std::string url = spec.path;
  const size_t q = url.rfind('?');
  if (q == std::string::npos) throw ValueError("'" + url + "': a zarr-region URL needs ?offset=..&codec=..&empty=..");
  dir_ = strip_trailing_slashes(url.substr(0, q));
  Shape offset;
  std::string codec;
  for (const std::string& kv : split(url.substr(q + 1), '&')) {
    const size_t eq = kv.find('=');
    const std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (k == "offset") {
      for (const std::string& o : split(v, ',')) offset.push_back(number(o, url));
    } else if (k == "codec") {
      codec = v;
    } else if (k == "empty") {
      write_empty_ = v == "1";
    } else {
      throw ValueError("'" + url + "': unknown parameter '" + k + "'");
    }
  }
  if (is_remote_url(dir_)) {
    store_ = open_store(dir_, spec.options ? spec.options->storage : StoreOptions{});
    meta_ = ZarrSource::open(store_)->metadata();
  } else {
    meta_ = ZarrSource::open(dir_)->metadata();
  }
  apply_codec(meta_.codecs, codec, url);
  const size_t nd = meta_.shape.size();
  if (spec.dtype != meta_.dtype)
    throw ValueError("'" + dir_ + "': writing " + dtype_name(spec.dtype) + " values into a " + dtype_name(meta_.dtype) +
                     " array");
  if (offset.size() != nd || spec.shape.size() != nd)
    throw ValueError("'" + dir_ + "': a region of shape " + shape_str(spec.shape) + " at " + shape_str(offset) +
                     " does not match the array's shape " + shape_str(meta_.shape));
  if (spec.chunks != meta_.chunks)
    throw ValueError("'" + dir_ + "': evaluated in chunks " + shape_str(spec.chunks) + ", stored in " +
                     shape_str(meta_.chunks));
  first_.resize(nd);
  for (size_t d = 0; d < nd; ++d) {
    const int64_t stop = offset[d] + spec.shape[d];
    if (offset[d] < 0 || stop > meta_.shape[d] || offset[d] % meta_.chunks[d] != 0 ||
        (stop % meta_.chunks[d] != 0 && stop != meta_.shape[d]))
      throw ValueError("'" + dir_ + "': a region of shape " + shape_str(spec.shape) + " at " + shape_str(offset) +
                       " is not made of whole chunks " + shape_str(meta_.chunks) + " of the array's shape " +
                       shape_str(meta_.shape));
    first_[d] = offset[d] / meta_.chunks[d];
  }
  grid_ = ChunkGrid(spec.shape, meta_.chunks);
  if (store_) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "b2lazy-region-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      throw IOError("cannot write into '" + dir_ + "': no spool directory (" + std::strerror(errno) + ")");
    spool_ = tmpl;
  }
  const std::string& local = store_ ? spool_ : dir_;
  if ((dirfd_ = ::open(local.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    throw IOError("cannot write into '" + dir_ + "' (" + std::strerror(errno) + ")");
  suffix_ = ".b2lazy-" + std::to_string(::getpid()) + "-" + std::to_string(reinterpret_cast<uintptr_t>(this));
}

ZarrRegionSink::~ZarrRegionSink() {
  if (!committed_)
    for (const auto& s : staged_) ::unlinkat(dirfd_, s.first.c_str(), 0);
  if (dirfd_ >= 0) ::close(dirfd_);
  if (!spool_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(spool_, ec);
  }
}

void ZarrRegionSink::fail(const std::string& key, const std::string& what) const {
  throw IOError("cannot write chunk '" + key + "' of '" + dir_ + "': " + what + " (" + std::strerror(errno) + ")");
}

// As zarr-python decides that a chunk need not be stored: every item the fill value, bit
// for bit, or NaN when the fill value is NaN.
bool ZarrRegionSink::all_fill(const uint8_t* chunk, int64_t n) const {
  const size_t isz = itemsize(meta_.dtype);
  const DKind k = kind(meta_.dtype);
  const size_t part = k == DKind::Complex ? isz / 2 : isz;
  const bool floats = k == DKind::Float || k == DKind::Complex;
  auto nan_item = [&](const uint8_t* p) { return is_nan(p, part) || (part != isz && is_nan(p + part, part)); };
  const bool fill_nan = floats && nan_item(meta_.fill);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* p = chunk + i * isz;
    if (std::memcmp(p, meta_.fill, isz) != 0 && !(fill_nan && nan_item(p))) return false;
  }
  return true;
}

void ZarrRegionSink::write_temp(const std::string& key, const std::vector<uint8_t>& bytes) {
  const size_t slash = key.rfind('/');
  const std::string temp = slash == std::string::npos
                               ? "." + key + suffix_
                               : key.substr(0, slash + 1) + "." + key.substr(slash + 1) + suffix_;
  for (size_t s = key.find('/'); s != std::string::npos; s = key.find('/', s + 1))
    if (::mkdirat(dirfd_, key.substr(0, s).c_str(), 0755) != 0 && errno != EEXIST)
      fail(key, "cannot create its directory");
  const int fd = ::openat(dirfd_, temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(key, "cannot create");
  {
    std::lock_guard<std::mutex> g(mu_);  // recorded first: removed if what follows fails
    staged_.emplace_back(temp, key);
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int err = errno;
      ::close(fd);
      errno = err;
      fail(key, "cannot write");
    }
    done += static_cast<size_t>(w);
  }
  if (::close(fd) != 0) fail(key, "cannot write");
  written_ += static_cast<int64_t>(bytes.size());
}

void ZarrRegionSink::write_chunk(int64_t id, const void* data, ThreadState& /*ts*/) {
  const size_t isz = itemsize(meta_.dtype), nd = meta_.shape.size();
  const Shape bs = grid_.chunk_box(id).shape();
  Shape coords = grid_.chunk_coords(id);
  for (size_t d = 0; d < nd; ++d) coords[d] += first_[d];
  const std::string key = meta_.key(coords);
  const int64_t n = prod(meta_.chunks);
  const uint8_t* chunk = static_cast<const uint8_t*>(data);
  std::vector<uint8_t> padded;
  if (bs != meta_.chunks) {  // at the array's end: stored whole, padded with the fill value
    padded.resize(static_cast<size_t>(n) * isz);
    for (int64_t k = 0; k < n; ++k) std::memcpy(padded.data() + k * isz, meta_.fill, isz);
    const Shape src = byte_strides(bs, isz), dst = byte_strides(meta_.chunks, isz);
    copy_strided(nd, bs.data(), static_cast<const char*>(data), src.data(), reinterpret_cast<char*>(padded.data()),
                 dst.data(), isz);
    chunk = padded.data();
  }
  if (!write_empty_ && all_fill(chunk, n)) {
    std::lock_guard<std::mutex> g(mu_);
    emptied_.push_back(key);
    return;
  }
  std::vector<uint8_t> bytes;
  zarr::encode(meta_.codecs, chunk, meta_.chunks, meta_.dtype, bytes, meta_.fill);
  write_temp(key, bytes);
}

void ZarrRegionSink::upload_staged() {
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr failure;
  auto upload = [&] {
    for (size_t i = next++; i < staged_.size(); i = next++) {
      try {
        const auto& [temp, key] = staged_[i];
        const int fd = ::openat(dirfd_, temp.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) fail(key, "cannot read its spooled chunk");
        struct stat st;
        std::vector<uint8_t> bytes;
        bool ok = ::fstat(fd, &st) == 0;
        if (ok) bytes.resize(static_cast<size_t>(st.st_size));
        for (size_t done = 0; ok && done < bytes.size();) {
          const ssize_t r = ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
          if (r < 0 && errno == EINTR) continue;
          ok = r > 0;
          done += ok ? static_cast<size_t>(r) : 0;
        }
        ::close(fd);
        if (!ok) fail(key, "cannot read its spooled chunk");
        store_->write(key, bytes.data(), bytes.size());
      } catch (...) {
        std::lock_guard<std::mutex> g(mu);
        if (!failure) failure = std::current_exception();
        next = staged_.size();  // (the rest is not sent)
      }
    }
  };
  std::vector<std::thread> threads;
  const size_t n = std::min<size_t>(16, staged_.size());
  for (size_t t = 1; t < n; ++t) threads.emplace_back(upload);
  upload();
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  for (const std::string& key : emptied_) store_->remove(key);
}

NodePtr ZarrRegionSink::finish() {
  if (store_) {
    upload_staged();
    committed_ = true;
    return ZarrSource::open(store_);
  }
  for (const auto& [temp, key] : staged_)
    if (::renameat(dirfd_, temp.c_str(), dirfd_, key.c_str()) != 0) fail(key, "cannot move it into place");
  committed_ = true;
  for (const std::string& key : emptied_)
    if (::unlinkat(dirfd_, key.c_str(), 0) != 0 && errno != ENOENT) fail(key, "cannot remove it (all fill value)");
  return ZarrSource::open(dir_);
}

Driver zarr_region_driver() {
  Driver d;
  d.name = "zarr region";
  d.schemes = {"zarr-region"};
  d.suite_exempt = "it writes into a region of an existing array (to_zarr(region=...)), not a new one";
  d.open = [](const std::string& path) -> NodePtr {
    const std::string dir = path.substr(0, path.rfind('?'));
    if (is_remote_url(dir)) return ZarrSource::open(open_store(dir));
    return ZarrSource::open(dir);
  };
  d.create = [](const SinkSpec& s) -> std::unique_ptr<Sink> { return std::make_unique<ZarrRegionSink>(s); };
  return d;
}

}  // namespace b2lazy
