// The file a libFuzzer target's input is written to: one per fuzzing process, rewritten for
// each input and removed at exit. `suffix` is kept at the end of its name (".b2z": readers
// that look at it).
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

inline const std::string& write_fuzz_input(const uint8_t* data, size_t size, const char* suffix = "") {
  static const std::string path = [suffix] {
    const char* dir = std::getenv("TMPDIR");
    std::string templ = std::string(dir && *dir ? dir : "/tmp") + "/b2lazy-fuzz-XXXXXX" + suffix;
    const int fd = mkstemps(templ.data(), static_cast<int>(std::strlen(suffix)));
    if (fd < 0) std::abort();
    close(fd);
    static std::string removed_at_exit = templ;
    std::atexit([] { std::remove(removed_at_exit.c_str()); });
    return templ;
  }();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}
