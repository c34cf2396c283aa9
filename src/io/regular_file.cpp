#include "io/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "b2lazy/error.hpp"

namespace b2lazy {

namespace {

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  return "a special file";
}

}  // namespace

int open_regular_file(int dirfd, const std::string& path, const std::string& name, struct stat* st_out) {
  int fd;
  do fd = ::openat(dirfd, path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return -1;
    struct stat st;  // a socket cannot be opened at all: say what it is
    if (::fstatat(dirfd, path.c_str(), &st, 0) == 0 && !S_ISREG(st.st_mode))
      throw IOError("'" + name + "' is " + kind_of(st.st_mode) + ", not a regular file");
    throw IOError("'" + name + "': cannot open (" + std::strerror(err) + ")");
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw IOError("'" + name + "': cannot stat (" + std::strerror(err) + ")");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw IOError("'" + name + "' is " + kind_of(st.st_mode) + ", not a regular file");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (st_out) *st_out = st;
  return fd;
}

void check_regular_file(const std::string& path, const std::string& name) {
  const int fd = open_regular_file(AT_FDCWD, path, name);
  if (fd >= 0) ::close(fd);
}

}  // namespace b2lazy
