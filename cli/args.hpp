// A small command-line reader: positionals, `--name value`, `--name=value`, `-o value`,
// and flags. Misuse throws UsageError (exit status 2).
#pragma once
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "b2lazy/box.hpp"

namespace b2lazy::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  // `valued`: options that take a value (long names, and "-o"); `flags`: those that do not.
  Args(const std::vector<std::string>& argv, const std::set<std::string>& valued, const std::set<std::string>& flags);
  const std::vector<std::string>& positional() const { return positional_; }
  std::optional<std::string> value(const std::string& name) const;
  bool flag(const std::string& name) const { return flags_.count(name) > 0; }
  // "100,200" -> {100, 200}; positive integers only.
  std::optional<Shape> shape(const std::string& name) const;
  std::optional<int64_t> integer(const std::string& name, int64_t lo, int64_t hi) const;

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
};

// "1.5G", "512M", "100000" -> bytes.
size_t parse_bytes(const std::string& option, const std::string& text);
// "1.2 MiB"
std::string human_bytes(double bytes);

}  // namespace b2lazy::cli
