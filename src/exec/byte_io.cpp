#include "exec/byte_io.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "b2lazy/error.hpp"

namespace b2lazy::byte_io {

void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint64_t Reader::u64(const char* what) {
  const uint8_t* q = take(8, what);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(q[i]) << (8 * i);
  return v;
}

const uint8_t* Reader::take(uint64_t n, const char* what) {
  if (n > left) throw ValueError(std::string(source) + ": the bytes end inside " + what);
  const uint8_t* q = p;
  p += n;
  left -= static_cast<size_t>(n);
  return q;
}

Mapped map_file(const std::string& path, const char* what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IOError(std::string("cannot open ") + what + " '" + path + "' (" + std::strerror(errno) + ")");
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
    ::close(fd);
    throw IOError(std::string(what) + " '" + path + "' is empty or unreadable");
  }
  const size_t n = static_cast<size_t>(st.st_size);
  void* m = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE, fd, 0);  // read in place: no copy of the whole file
  ::close(fd);
  if (m == MAP_FAILED)
    throw IOError(std::string("cannot map ") + what + " '" + path + "' (" + std::strerror(errno) + ")");
  Mapped r;
  r.data = static_cast<const uint8_t*>(m);
  r.size = n;
  r.keep = std::shared_ptr<const void>(m, [n](const void* p) { ::munmap(const_cast<void*>(p), n); });
  return r;
}

void release(const void* p, size_t n) noexcept {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  if (hi > lo) (void)::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

void write_file_atomic(const std::string& path,
                       const std::function<void(const std::function<void(const void*, size_t)>&)>& write) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw IOError("cannot create '" + tmp + "' (" + std::strerror(errno) + ")");
  try {
    write([&](const void* p, size_t n) {
      if (n && std::fwrite(p, 1, n, f) != n) throw IOError("cannot write '" + tmp + "' (" + std::strerror(errno) + ")");
    });
    const int rc = std::fclose(f);
    f = nullptr;
    if (rc != 0) throw IOError("cannot write '" + tmp + "' (" + std::strerror(errno) + ")");
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw IOError("cannot rename '" + tmp + "' to '" + path + "' (" + std::strerror(errno) + ")");
  } catch (...) {
    if (f) std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
}

}  // namespace b2lazy::byte_io
