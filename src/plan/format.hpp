// Sizes as explain() prints them.
#pragma once
#include <cstdio>
#include <string>

namespace b2lazy {

inline std::string format_bytes(double bytes) {
  char buf[32];
  if (bytes >= 1024.0 * 1048576) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1048576));
  else if (bytes >= 1048576) std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576);
  else std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024);
  return buf;
}
inline std::string format_bytes(int64_t bytes) { return format_bytes(static_cast<double>(bytes)); }

}  // namespace b2lazy
