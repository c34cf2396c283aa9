// The rules for compute()'s output path: what may be replaced, where the temporary goes,
// and how a finished result takes the old array's place.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace b2lazy {

enum class OutputKind { Nothing, ArrayFile, ArrayDirectory };

// What a format may replace: an array of its own kind, nothing else. Each writing driver
// has one (b2nd's: b2nd_replace_rule(); Zarr's in io/zarr/).
struct ReplaceRule {
  std::string format;  // "b2nd", "Zarr": for messages
  // Is `path` (a regular file, or a directory when `dir`) an array of this format? May
  // throw IOError when what is there cannot be read.
  std::function<bool(const std::string& path, bool dir)> holds_array;
  // The entry of a directory array removed first, so that its readers see at once that it
  // is gone ("chunks.b2frame", "zarr.json").
  std::vector<std::string> index;
};
const ReplaceRule& b2nd_replace_rule();

// `path` without trailing slashes ("/" stays "/").
std::string strip_trailing_slashes(const std::string& path);

// What is at `path` (trailing slashes already stripped): nothing, or an array of `rule`'s
// format that compute() may replace (b2nd: a file C-Blosc2 opens as b2nd, or a sparse
// directory with chunks.b2frame that opens as b2nd). Anything else — a plain file, a
// directory that is not such an array, ".", "..", "/", a symbolic link, a missing or
// non-directory parent — throws IOError naming the path and what is there. Nothing is
// created or changed.
OutputKind classify_output(const std::string& path, const ReplaceRule& rule = b2nd_replace_rule());

// The temporary a result is written into: a directory reserved with mkdir beside the
// target, named ".NAME.tmp-PID-RANDOM" (within NAME_MAX), the array inside it at
// array_path(). The constructor first removes temporaries of the same target left by
// processes that are no longer running; the destructor removes the temporary unless
// commit() succeeded.
class OutputTemp {
 public:
  explicit OutputTemp(const std::string& final_path, const ReplaceRule& rule = b2nd_replace_rule());
  ~OutputTemp();
  OutputTemp(const OutputTemp&) = delete;
  OutputTemp& operator=(const OutputTemp&) = delete;

  const std::string& array_path() const { return array_; }
  // Moves the complete array into place. What is at the final path is checked again and
  // replaced only if it is an array of the rule's format: by an exchange of the two names (or rename(2)
  // into a free name), after which the old array is removed. The old array is never
  // removed before the new one is in place. `exchange` false takes the way of filesystems
  // without renameat2's flags (for tests).
  void commit(bool exchange = true);

 private:
  std::string final_, dir_, array_;
  const ReplaceRule& rule_;
};

// The name stem of temporaries for target file name `name` (the name itself, or a
// prefix of it and a hash when a temporary's name would exceed NAME_MAX).
std::string temp_stem(const std::string& name);

}  // namespace b2lazy
