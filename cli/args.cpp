#include "args.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>

#include "b2lazy/checked.hpp"
#include "b2lazy/error.hpp"

namespace b2lazy::cli {

Args::Args(const std::vector<std::string>& argv, const std::set<std::string>& valued,
           const std::set<std::string>& flags, const std::set<std::string>& repeated) {
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string a = argv[i];
    if (a.size() < 2 || a[0] != '-' || (a[1] != '-' && !std::isalpha(static_cast<unsigned char>(a[1])))) {
      positional_.push_back(a);  // also "-1" or "-" as values of a positional
      continue;
    }
    std::string name = a, val;
    bool has_val = false;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = a.substr(0, eq);
      val = a.substr(eq + 1);
      has_val = true;
    }
    if (flags.count(name)) {
      if (has_val) throw UsageError("option " + name + " takes no value");
      flags_.insert(name);
    } else if (repeated.count(name)) {
      if (!has_val) {
        if (i + 1 >= argv.size()) throw UsageError("option " + name + " needs a value");
        val = argv[++i];
      }
      repeated_[name].push_back(val);
    } else if (valued.count(name)) {
      if (!has_val) {
        if (i + 1 >= argv.size()) throw UsageError("option " + name + " needs a value");
        val = argv[++i];
      }
      if (values_.count(name)) throw UsageError("option " + name + " given twice");
      values_[name] = val;
    } else {
      throw UsageError("unknown option " + name);
    }
  }
}

StoreOptions storage_options(const Args& args) {
  StoreOptions o;
  for (const std::string& kv : args.values("--storage-option")) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(
          "--storage-option takes KEY=VALUE (fsspec's names: anon=true, "
          "client_kwargs.endpoint_url=http://host:port), got '" +
          kv.substr(0, kv.find('=')) + "'");
    const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (key == "concurrency" || key == "max_retries") {
      char* end = nullptr;
      const long n = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end || n < 1 || n > 4096)
        throw UsageError("--storage-option " + key + " wants an integer from 1 to 4096, got '" + value + "'");
      (key == "concurrency" ? o.concurrency : o.max_retries) = static_cast<int>(n);
    } else {
      o.values[key] = value == "True" ? "true" : value == "False" ? "false" : value;
    }
  }
  return o;
}

std::vector<std::string> Args::values(const std::string& name) const {
  auto it = repeated_.find(name);
  return it == repeated_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<std::string> Args::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> Args::integer(const std::string& name, int64_t lo, int64_t hi) const {
  auto v = value(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || *end || errno == ERANGE || x < lo || x > hi)
    throw UsageError("option " + name + " wants an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                     ", got '" + *v + "'");
  return x;
}

std::optional<Shape> Args::shape(const std::string& name) const {
  auto v = value(name);
  if (!v) return std::nullopt;
  Shape s;
  size_t p = 0;
  while (p <= v->size()) {
    size_t q = v->find(',', p);
    if (q == std::string::npos) q = v->size();
    std::string part = v->substr(p, q - p);
    char* end = nullptr;
    errno = 0;
    long long x = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end || x <= 0)
      throw UsageError("option " + name + " wants positive integers separated by commas (e.g. 1000,1000), got '" + *v +
                       "'");
    if (errno == ERANGE)
      throw UsageError("option " + name + ": " + part + " is beyond the largest integer, 2**63-1 (got '" + *v + "')");
    s.push_back(x);
    p = q + 1;
  }
  try {
    checked_prod(s, "option " + name);
  } catch (const ValueError& e) {
    throw UsageError(e.what());
  }
  return s;
}

size_t parse_bytes(const std::string& option, const std::string& text) {
  char* end = nullptr;
  double x = std::strtod(text.c_str(), &end);
  std::string unit = end ? end : "";
  double mult = unit.empty() || unit == "B"    ? 1
                : unit == "K" || unit == "KiB" ? 1024.0
                : unit == "M" || unit == "MiB" ? 1048576.0
                : unit == "G" || unit == "GiB" ? 1073741824.0
                                               : -1;
  if (text.empty() || mult < 0 || !(x > 0) || !std::isfinite(x))
    throw UsageError("option " + option + " wants a size such as 512M or 2G, got '" + text + "'");
  if (!(x * mult < 0x1p63))  // (a cast of a larger double to an integer is undefined)
    throw UsageError("option " + option + " wants a size below 8 EiB (2**63 bytes), got '" + text + "'");
  return std::max<size_t>(1, static_cast<size_t>(x * mult));
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

}  // namespace b2lazy::cli
