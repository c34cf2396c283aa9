#include "io/store/local_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "b2lazy/error.hpp"
#include "io/regular_file.hpp"

namespace b2lazy {

namespace {

namespace fs = std::filesystem;

class LocalStore final : public ByteStore {
 public:
  explicit LocalStore(std::string root) : root_(std::move(root)) {}

  std::string root() const override { return root_; }
  std::string local_path() const override { return root_; }

  std::optional<Parts> read(const std::string& key, const std::vector<ByteRange>& ranges) override {
    const std::string path = path_of(key);
    struct stat st;
    const int fd = open_regular_file(AT_FDCWD, path, path, &st);
    if (fd < 0) return std::nullopt;
    Parts out;
    try {
      out.reserve(ranges.size());
      for (const auto& r : ranges) out.push_back(read_range(fd, path, st.st_size, r));
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    return out;
  }

  std::optional<ObjectInfo> stat(const std::string& key) override {
    const std::string path = path_of(key);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
      throw IOError("'" + path + "': cannot stat (" + std::strerror(errno) + ")");
    }
    if (!S_ISREG(st.st_mode)) return std::nullopt;
    return ObjectInfo{key, static_cast<int64_t>(st.st_size), version_of(st)};
  }

  std::vector<ObjectInfo> list(const std::string& prefix) override {
    std::vector<ObjectInfo> out;
    std::error_code ec;
    const fs::path base(root_);
    // The deepest directory the prefix names completely; entries under it are filtered.
    const auto slash = prefix.rfind('/');
    const fs::path start = slash == std::string::npos ? base : base / prefix.substr(0, slash);
    if (!fs::is_directory(start, ec)) return out;
    for (auto it = fs::recursive_directory_iterator(start, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      std::string key = fs::relative(it->path(), base, ec).generic_string();
      if (key.compare(0, prefix.size(), prefix) != 0) continue;
      struct stat st;
      if (::stat(it->path().c_str(), &st) != 0) continue;
      out.push_back({std::move(key), static_cast<int64_t>(st.st_size), version_of(st)});
    }
    if (ec) throw IOError("'" + start.string() + "': cannot list (" + ec.message() + ")");
    return out;
  }

  void write(const std::string& key, const void* data, size_t nbytes) override {
    const std::string path = path_of(key);
    std::error_code ec;
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    if (ec) throw IOError("'" + parent.string() + "': cannot create (" + ec.message() + ")");
    write_atomic(path, data, nbytes);
    written_ += static_cast<int64_t>(nbytes);
  }

  void remove(const std::string& key) override {
    const std::string path = path_of(key);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      throw IOError("'" + path + "': cannot remove (" + std::strerror(errno) + ")");
  }

  StoreCounters counters() const override {
    StoreCounters c;
    c.requests = requests_.load();
    c.bytes = bytes_.load();
    c.bytes_written = written_.load();
    return c;
  }

 private:
  std::string path_of(const std::string& key) const {
    if (key.empty()) return root_;
    if (root_.empty()) return key;
    return root_.back() == '/' ? root_ + key : root_ + "/" + key;
  }

  // Under a temporary name unique to this call, renamed into place when whole.
  static void write_atomic(const std::string& path, const void* data, size_t nbytes) {
    static std::atomic<uint64_t> serial{0};
    const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) throw IOError("'" + tmp + "': cannot create (" + std::strerror(errno) + ")");
    const auto* p = static_cast<const uint8_t*>(data);
    size_t done = 0;
    int err = 0;
    while (done < nbytes) {
      const ssize_t n = ::write(fd, p + done, nbytes - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        err = n < 0 ? errno : EIO;
        break;
      }
      done += static_cast<size_t>(n);
    }
    if (::close(fd) != 0 && !err) err = errno;
    if (!err && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
    if (err) {
      ::unlink(tmp.c_str());
      throw IOError("'" + path + "': cannot write (" + std::strerror(err) + ")");
    }
  }

  static std::string version_of(const struct stat& st) {
    const auto s = FileStamp::of(st);
    return std::to_string(s.dev) + ":" + std::to_string(s.ino) + ":" + std::to_string(s.size) + ":" +
           std::to_string(s.mtime_ns);
  }

  std::vector<uint8_t> read_range(int fd, const std::string& path, int64_t size, ByteRange r) {
    if (r.offset < 0) {  // the last -offset bytes
      if (-r.offset > size)
        throw IOError("'" + path + "': its last " + std::to_string(-r.offset) + " bytes asked, it has " +
                      std::to_string(size));
      r = {size + r.offset, -r.offset};
    }
    const int64_t len = r.length < 0 ? size - r.offset : r.length;
    if (r.offset < 0 || len < 0 || r.offset + len > size)
      throw IOError("'" + path + "': bytes [" + std::to_string(r.offset) + ", " +
                    std::to_string(r.offset + (r.length < 0 ? 0 : r.length)) + ") are past its end (" +
                    std::to_string(size) + " bytes)");
    std::vector<uint8_t> out(static_cast<size_t>(len));
    int64_t done = 0;
    while (done < len) {
      const ssize_t n = ::pread(fd, out.data() + done, static_cast<size_t>(len - done), r.offset + done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw IOError("'" + path + "': read " + std::to_string(done) + " of " + std::to_string(len) + " bytes at " +
                      std::to_string(r.offset) + (n < 0 ? std::string(" (") + std::strerror(errno) + ")" : ""));
      done += n;
    }
    ++requests_;
    bytes_ += len;
    return out;
  }

  std::string root_;
  std::atomic<int64_t> requests_{0}, bytes_{0}, written_{0};
};

}  // namespace

StorePtr make_local_store(const std::string& root) { return std::make_shared<LocalStore>(root); }

}  // namespace b2lazy
