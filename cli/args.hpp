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
#include "b2lazy/byte_store.hpp"

namespace b2lazy::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  // `valued`: options that take a value (long names, and "-o"); `flags`: those that do not;
  // `repeated`: options taking a value that may be given more than once (values()).
  Args(const std::vector<std::string>& argv, const std::set<std::string>& valued, const std::set<std::string>& flags,
       const std::set<std::string>& repeated = {});
  const std::vector<std::string>& positional() const { return positional_; }
  std::optional<std::string> value(const std::string& name) const;
  bool flag(const std::string& name) const { return flags_.count(name) > 0; }
  // Every value of a repeated option, in order.
  std::vector<std::string> values(const std::string& name) const;
  // "100,200" -> {100, 200}; positive integers only.
  std::optional<Shape> shape(const std::string& name) const;
  std::optional<int64_t> integer(const std::string& name, int64_t lo, int64_t hi) const;

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
  std::map<std::string, std::vector<std::string>> repeated_;
};

// --storage-option KEY=VALUE (repeated) as StoreOptions: fsspec's names, nested ones
// dotted ("client_kwargs.endpoint_url=http://..."); "concurrency" and "max_retries" set
// those fields. Credentials not given come from the AWS_* environment and ~/.aws files.
StoreOptions storage_options(const Args& args);
// "1.5G", "512M", "100000" -> bytes.
size_t parse_bytes(const std::string& option, const std::string& text);
// "1.2 MiB"
std::string human_bytes(double bytes);

}  // namespace b2lazy::cli
