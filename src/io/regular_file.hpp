// Opening a data file without blocking: open() of a FIFO waits for a writer (and a
// device's may too) before any check could run, out of reach of SIGINT. So files are
// opened with O_NONBLOCK, checked with fstat to be regular files (symlinks to them are
// followed, as zarr-python does), then read with O_NONBLOCK cleared.
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <string>

namespace b2lazy {

// A read-only descriptor of regular file `path` (relative to directory `dirfd`, or to the
// working directory with AT_FDCWD); -1 when it does not exist. IOError naming `name` for
// anything else: a FIFO, device, socket or directory, or a failed open. `st`: the file's
// stat (as opened) is stored there.
int open_regular_file(int dirfd, const std::string& path, const std::string& name, struct stat* st = nullptr);

// The same check for a file another library opens by path (libhdf5, minizip): IOError
// naming `name` unless `path` is a regular file (or missing: that library says so).
void check_regular_file(const std::string& path, const std::string& name);

// What identifies a file's content without reading it: another inode (a file replaced by
// rename, as zarr-python writes), size or mtime (written in place) means other bytes.
// Not ctime: a rename of the file itself changes it. (As storage/pinned_io.cpp compares.)
struct FileStamp {
  dev_t dev = 0;
  ino_t ino = 0;
  int64_t size = -1;
  int64_t mtime_ns = 0;
  static FileStamp of(const struct stat& st) {
    return {st.st_dev, st.st_ino, static_cast<int64_t>(st.st_size),
            static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
  }
  bool operator==(const FileStamp&) const = default;
};

}  // namespace b2lazy
