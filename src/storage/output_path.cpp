#include "storage/output_path.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "b2lazy/error.hpp"
#include "storage/pinned_io.hpp"

namespace fs = std::filesystem;

namespace b2lazy {

namespace {
enum class There { Nothing, ArrayFile, ArrayDirectory, Link, File, Directory, Special, Unreadable };

// What is at `path` itself (a link is not followed), as `rule` sees it; `why` says why it
// is Unreadable.
There what_is_there(const std::string& path, const ReplaceRule& rule, std::string* why = nullptr) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return There::Nothing;
    if (why) *why = std::string("cannot use this path (") + std::strerror(errno) + ")";
    return There::Unreadable;
  }
  if (S_ISLNK(st.st_mode)) return There::Link;
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return There::Special;
  const bool dir = S_ISDIR(st.st_mode);
  try {
    if (rule.holds_array(path, dir)) return dir ? There::ArrayDirectory : There::ArrayFile;
  } catch (const IOError& e) {
    if (why)
      *why =
          std::string("cannot read what is there (") + e.what() + "); b2lazy replaces only " + rule.format + " arrays";
    return There::Unreadable;
  }
  return dir ? There::Directory : There::File;
}

struct Parts {
  std::string dir;     // the parent directory, for system calls ("." for a bare name)
  std::string prefix;  // what goes before a sibling's name ("" for a bare name)
  std::string name;    // the last component
};

Parts split(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", "", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(0, slash + 1), path.substr(slash + 1)};
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw IOError("cannot write output '" + path + "': " + why);
}

// A zombie answers kill(pid, 0) but will never remove its temporary.
bool process_running(long pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');
  return !(paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z');
}

// Removes an array taken out of its place: for a directory, its index first, so that a
// reader still holding it sees at once that it changed.
void remove_array(const std::string& path, const ReplaceRule& rule) {
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(path, ec)))
    for (const std::string& index : rule.index) ::unlink((path + "/" + index).c_str());
  fs::remove_all(path, ec);
}

// Removes ".STEM.tmp-PID-TAG" entries of `parts.dir` (files or directories, never links)
// whose process PID is no longer running. TAG is hexadecimal (older versions used a
// decimal counter, which matches too).
void remove_stale_temporaries(const Parts& parts, const std::string& stem) {
  DIR* d = ::opendir(parts.dir.c_str());
  if (!d) return;
  const std::string head = "." + stem + ".tmp-";
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() <= head.size() || n.compare(0, head.size(), head) != 0) continue;
    size_t i = head.size(), j = i;
    while (j < n.size() && j - i < 10 && n[j] >= '0' && n[j] <= '9') ++j;
    if (j == i || j + 1 >= n.size() || n[j] != '-') continue;
    if (n.find_first_not_of("0123456789abcdef", j + 1) != std::string::npos) continue;
    const long pid = std::stol(n.substr(i, j - i));
    if (pid <= 0 || pid == ::getpid() || process_running(pid)) continue;
    const std::string path = parts.prefix + n;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      std::error_code ec;
      fs::remove_all(path, ec);
    } else if (S_ISREG(st.st_mode)) {
      ::unlink(path.c_str());
    }
  }
  ::closedir(d);
}

bool unsupported(int err) { return err == EINVAL || err == ENOSYS || err == ENOTSUP; }

// renameat2(2), or the failure of a filesystem without its flags when `flags_allowed` is false.
int rename2(const std::string& from, const std::string& to, unsigned flags, bool flags_allowed) {
  if (!flags_allowed) {
    errno = EINVAL;
    return -1;
  }
  return ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), flags);
}
}  // namespace

std::string strip_trailing_slashes(const std::string& path) {
  size_t n = path.size();
  while (n > 1 && path[n - 1] == '/') --n;
  return path.substr(0, n);
}

const ReplaceRule& b2nd_replace_rule() {
  static const ReplaceRule rule{
      "b2nd",
      [](const std::string& path, bool dir) {
        if (dir) {  // a sparse directory has its index
          struct stat index;
          if (::lstat((path + "/chunks.b2frame").c_str(), &index) != 0 || !S_ISREG(index.st_mode)) return false;
        }
        return opens_as_b2nd(path);
      },
      {"chunks.b2frame"}};
  return rule;
}

OutputKind classify_output(const std::string& path, const ReplaceRule& rule) {
  const Parts parts = split(path);
  if (path == "/" || parts.name == "." || parts.name == "..")
    refuse(path, "it names a directory itself, not an array in it");
  struct stat st;
  if (::stat(parts.dir.c_str(), &st) != 0) {
    if (errno == ENOENT) refuse(path, "directory '" + parts.dir + "' does not exist");
    refuse(path, "cannot reach directory '" + parts.dir + "' (" + std::strerror(errno) + ")");
  }
  if (!S_ISDIR(st.st_mode)) refuse(path, "'" + parts.dir + "' is not a directory");
  std::string why;
  const std::string& f = rule.format;
  switch (what_is_there(path, rule, &why)) {
    case There::Nothing: return OutputKind::Nothing;
    case There::ArrayFile: return OutputKind::ArrayFile;
    case There::ArrayDirectory: return OutputKind::ArrayDirectory;
    case There::Link: refuse(path, "a symbolic link is there (b2lazy does not write through links)");
    case There::File:
      refuse(path, "a file that is not a " + f + " array is there (b2lazy replaces only " + f + " arrays)");
    case There::Directory:
      refuse(path, "a directory that is not a " + f + " array is there (b2lazy replaces only " + f + " arrays)");
    case There::Special: refuse(path, "a special file (FIFO, socket or device) is there");
    case There::Unreadable: refuse(path, why);
  }
  return OutputKind::Nothing;
}

std::string temp_stem(const std::string& name) {
  // The stem shares NAME_MAX with ".", ".tmp-", a pid (at most 10 digits), "-" and 8 hex digits.
  constexpr size_t kMax = NAME_MAX - 1 - 5 - 10 - 1 - 8;
  if (name.size() <= kMax) return name;
  uint32_t h = 2166136261u;  // FNV-1a: temporaries of two long names sharing a prefix differ
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", h);
  size_t cut = kMax - 9;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return name.substr(0, cut) + "~" + hex;
}

OutputTemp::OutputTemp(const std::string& final_path, const ReplaceRule& rule) : final_(final_path), rule_(rule) {
  const Parts parts = split(final_);
  const std::string stem = temp_stem(parts.name);
  remove_stale_temporaries(parts, stem);
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    char tag[9];
    std::snprintf(tag, sizeof tag, "%08x", static_cast<unsigned>(rd()));
    std::string d = parts.prefix + "." + stem + ".tmp-" + std::to_string(::getpid()) + "-" + tag;
    if (::mkdir(d.c_str(), 0700) == 0) {
      dir_ = d;
      array_ = d + "/array";
      return;
    }
    if (errno != EEXIST)
      refuse(final_, std::string("cannot create a temporary beside it (") + std::strerror(errno) + ")");
  }
  refuse(final_, "cannot reserve a temporary name beside it");
}

OutputTemp::~OutputTemp() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void OutputTemp::commit(bool exchange) {
  auto fail = [this](int err) {
    refuse(final_, std::string("cannot move the result into place (") + std::strerror(err) + ")");
  };
  for (int attempt = 0;; ++attempt) {
    const bool retry = attempt < 4;
    const OutputKind kind = classify_output(final_, rule_);  // what is there may have changed since the start
    if (kind == OutputKind::Nothing) {
      if (rename2(array_, final_, RENAME_NOREPLACE, exchange) == 0) break;
      if (unsupported(errno) && ::rename(array_.c_str(), final_.c_str()) == 0) break;
      if ((errno == EEXIST || errno == ENOTEMPTY) && retry) continue;  // something appeared: look again
      fail(errno);
    }
    // The exchange keeps the path always holding a complete array, and what it took out
    // can be checked before it is removed.
    if (rename2(array_, final_, RENAME_EXCHANGE, exchange) == 0) {
      const There old = what_is_there(array_, rule_);
      if (old != There::ArrayFile && old != There::ArrayDirectory) {
        rename2(array_, final_, RENAME_EXCHANGE, true);
        refuse(final_, "something that is not a " + rule_.format +
                           " array was put there during the evaluation; it is left as is");
      }
      remove_array(array_, rule_);
      break;
    }
    if (errno == ENOENT && retry) continue;  // the old array went away meanwhile
    if (!unsupported(errno)) fail(errno);
    // No exchange on this filesystem. A file over a file: rename(2) replaces it atomically.
    struct stat st;
    if (kind == OutputKind::ArrayFile && ::lstat(array_.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (::rename(array_.c_str(), final_.c_str()) == 0) break;
      fail(errno);
    }
    // A directory, or a change of form: the old array goes aside into our temporary first.
    const std::string aside = dir_ + "/old";
    if (::rename(final_.c_str(), aside.c_str()) != 0) {
      if (errno == ENOENT && retry) continue;
      fail(errno);
    }
    const There old = what_is_there(aside, rule_);
    if (old != There::ArrayFile && old != There::ArrayDirectory) {
      ::rename(aside.c_str(), final_.c_str());
      refuse(final_, "something that is not a " + rule_.format +
                         " array was put there during the evaluation; it is left as is");
    }
    if (::rename(array_.c_str(), final_.c_str()) != 0) {
      const int err = errno;
      ::rename(aside.c_str(), final_.c_str());
      fail(err);
    }
    remove_array(aside, rule_);
    break;
  }
}

}  // namespace b2lazy
