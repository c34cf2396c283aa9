// Output path rules (storage/output_path.hpp) and sources pinned to what they opened
// (storage/pinned_io.hpp). The Python suite (tests/python/reliability/
// test_rel_output_paths.py) checks the same rules through compute() and the command.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "b2lazy/b2lazy.hpp"
#include "storage/output_path.hpp"

using namespace b2lazy;
namespace fs = std::filesystem;

namespace {
fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("b2lazy_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::set<std::string> names_in(const fs::path& d) {
  std::set<std::string> s;
  for (auto& e : fs::directory_iterator(d)) s.insert(e.path().filename().string());
  return s;
}

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

Array write(const Array& x, const fs::path& path, std::optional<bool> contiguous = {}) {
  ComputeOptions o;
  o.urlpath = path.string();
  o.contiguous = contiguous;
  o.chunks = {4};
  o.blocks = {2};
  return x.compute(o);
}

// A pid that ran and has been reaped, so no process has it (barring reuse right away).
pid_t dead_pid() {
  pid_t p = ::fork();
  if (p == 0) ::_exit(0);
  ::waitpid(p, nullptr, 0);
  return p;
}

void expect_refused(const fs::path& path, const std::string& what) {
  try {
    classify_output(path.string());
    ADD_FAILURE() << path << " was not refused";
  } catch (const IOError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'" + path.string() + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}
}  // namespace

TEST(OutputPath, TempStemStaysWithinNameMax) {
  EXPECT_EQ(temp_stem("x.b2nd"), "x.b2nd");
  const std::string long_a = std::string(250, 'a'), long_b = std::string(249, 'a') + "b";
  const std::string sa = temp_stem(long_a), sb = temp_stem(long_b);
  EXPECT_NE(sa, sb);  // a hash of the whole name keeps long names apart
  const std::string temp = "." + sa + ".tmp-4294967295-ffffffff";
  EXPECT_LE(temp.size(), 255u);
  // A cut never falls inside a UTF-8 character.
  std::string accents;
  while (accents.size() < 250) accents += "\xc3\xa9";  // é
  const std::string s = temp_stem(accents);
  const size_t tilde = s.rfind('~');
  ASSERT_NE(tilde, std::string::npos);
  EXPECT_EQ(tilde % 2, 0u);
}

TEST(OutputPath, ClassifiesWhatIsThere) {
  fs::path d = temp_dir("classify");
  EXPECT_EQ(classify_output((d / "new.b2nd").string()), OutputKind::Nothing);
  write(arange(0, 10, 1, DType::F64), d / "f.b2nd");
  write(arange(0, 10, 1, DType::F64), d / "sparse", false);
  EXPECT_EQ(classify_output((d / "f.b2nd").string()), OutputKind::ArrayFile);
  EXPECT_EQ(classify_output((d / "sparse").string()), OutputKind::ArrayDirectory);

  write_text(d / "t.txt", "text");
  expect_refused(d / "t.txt", "a file that is not a b2nd array");
  fs::create_directory(d / "plain");
  expect_refused(d / "plain", "a directory that is not a b2nd array");
  fs::create_directory(d / "fake");
  write_text(d / "fake" / "chunks.b2frame", "not a frame");
  expect_refused(d / "fake", "a directory that is not a b2nd array");
  fs::create_symlink(d / "f.b2nd", d / "link.b2nd");
  expect_refused(d / "link.b2nd", "a symbolic link");
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0600), 0);
  expect_refused(d / "fifo", "special file");  // and does not wait for a writer
  expect_refused(d / "missing" / "x.b2nd", "does not exist");
  expect_refused(d / "t.txt" / "x.b2nd", "is not a directory");
  for (const char* p : {".", "..", "/"}) expect_refused(p, "names a directory");
  expect_refused(d / "plain" / ".", "names a directory");
  EXPECT_EQ(strip_trailing_slashes("a//"), "a");
  EXPECT_EQ(strip_trailing_slashes("/"), "/");
  EXPECT_EQ(read_text(d / "t.txt"), "text");
  fs::remove_all(d);
}

TEST(OutputPath, RemovesOnlyStaleTemporariesOfTheTarget) {
  fs::path d = temp_dir("stale");
  const std::string dead = std::to_string(dead_pid()), alive = std::to_string(::getppid());
  fs::create_directory(d / (".x.b2nd.tmp-" + dead + "-0a1b2c3d"));  // a dead run's temporary
  write_text(d / (".x.b2nd.tmp-" + dead + "-0a1b2c3d") / "array", "partial");
  write_text(d / (".x.b2nd.tmp-" + dead + "-7"), "older versions' file form");
  const std::set<std::string> kept = {
      ".x.b2nd.tmp-" + alive + "-0a1b2c3d",  // its process still runs
      ".y.b2nd.tmp-" + dead + "-0a1b2c3d",   // another target's
      ".x.b2nd.tmp-" + dead + "-notours",    // not our pattern
      ".x.b2nd.tmp-" + dead + "-link",       // a link is never touched
      "x.b2nd.tmp-" + dead + "-1",           // not hidden: not ours
  };
  for (const auto& n : kept) {
    if (n.find("link") != std::string::npos) fs::create_symlink(d / "nowhere", d / n);
    else write_text(d / n, "keep");
  }
  {
    OutputTemp t((d / "x.b2nd").string());
    EXPECT_TRUE(fs::is_directory(fs::path(t.array_path()).parent_path()));
    auto now = names_in(d);
    EXPECT_EQ(now.size(), kept.size() + 1);
    for (const auto& n : kept) EXPECT_TRUE(now.count(n)) << n;
  }
  EXPECT_EQ(names_in(d), kept);  // the destructor removed our own temporary
  fs::remove_all(d);
}

TEST(OutputPath, ResultReadsItsOwnArrayAfterTheFileIsReplaced) {
  fs::path d = temp_dir("pinned");
  Array x = arange(0, 10, 1, DType::F64);
  Array first = write(x, d / "r.b2nd");
  Array opened = open((d / "r.b2nd").string());
  Array second = write(x * 10, d / "r.b2nd");  // replaces the file under both
  EXPECT_EQ(first.to_vector()[9], 9.0);
  EXPECT_EQ(opened.to_vector()[9], 9.0);
  EXPECT_EQ(second.to_vector()[9], 90.0);
  EXPECT_EQ(open((d / "r.b2nd").string()).to_vector()[9], 90.0);
  EXPECT_EQ(storage_info(first).shape, Shape{10});
  EXPECT_EQ(storage_info(first).urlpath, (d / "r.b2nd").string());
  EXPECT_THROW(storage_info(x), ValueError);
  EXPECT_EQ(names_in(d), std::set<std::string>{"r.b2nd"});
  fs::remove_all(d);
}

TEST(OutputPath, FileModifiedInPlaceIsAnError) {
  fs::path d = temp_dir("inplace");
  write(arange(0, 10, 1, DType::F64), d / "r.b2nd");
  Array opened = open((d / "r.b2nd").string());
  fs::path other = d / "other.b2nd";
  write(arange(0, 10, 1, DType::F64) * 3, other);
  // New bytes written into the opened file (not renamed over it). Timestamps have a clock
  // tick's resolution: rewrite until size or mtime shows the change, as any later write would.
  struct stat before, after;
  ASSERT_EQ(::stat((d / "r.b2nd").c_str(), &before), 0);
  const std::string bytes = read_text(other);
  do {
    std::ofstream f(d / "r.b2nd", std::ios::binary | std::ios::in | std::ios::out);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    ASSERT_EQ(::stat((d / "r.b2nd").c_str(), &after), 0);
  } while (after.st_size == before.st_size && after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
           after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
  try {
    opened.to_vector();
    ADD_FAILURE() << "no error";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("changed on disk since it was opened"), std::string::npos) << e.what();
  }
  fs::remove_all(d);
}

// The ways commit() takes, with and without renameat2's exchange: the result is in place,
// the old array gone, nothing else left; something else put at the path meanwhile is kept.
TEST(OutputPath, CommitReplacesOnlyB2ndArrays) {
  fs::path d = temp_dir("commit");
  const fs::path target = d / "out";
  for (bool exchange : {true, false}) {
    for (const char* old_form : {"none", "file", "dir"}) {
      for (bool new_file : {true, false}) {
        fs::remove_all(target);
        if (std::string(old_form) != "none")
          write(arange(0, 10, 1, DType::F64), target, std::string(old_form) == "file");
        write(arange(0, 10, 1, DType::F64) * 5, d / "new", new_file);
        {
          OutputTemp t(target.string());
          fs::rename(d / "new", t.array_path());
          t.commit(exchange);
        }
        SCOPED_TRACE(std::string(old_form) + (new_file ? " <- file" : " <- dir") + (exchange ? "" : ", no exchange"));
        EXPECT_EQ(fs::is_directory(target), !new_file);
        EXPECT_EQ(open(target.string()).to_vector()[9], 45.0);
        EXPECT_EQ(names_in(d), std::set<std::string>{"out"});
      }
    }
    // A text file put at the path during the evaluation is refused and kept.
    fs::remove_all(target);
    write(arange(0, 10, 1, DType::F64), d / "new");
    {
      OutputTemp t(target.string());
      fs::rename(d / "new", t.array_path());
      write_text(target, "notes");
      EXPECT_THROW(t.commit(exchange), IOError);
    }
    EXPECT_EQ(read_text(target), "notes");
    EXPECT_EQ(names_in(d), std::set<std::string>{"out"});
  }
  fs::remove_all(d);
}

// Failed opens through the pinned backend free what they allocated (LeakSanitizer in CI),
// and close their descriptors.
TEST(OutputPath, FailedOpensReleaseEverything) {
  fs::path d = temp_dir("failedopen");
  write(arange(0, 1000, 1, DType::F64), d / "good.b2nd");
  const std::string good = read_text(d / "good.b2nd");
  write_text(d / "empty", "");
  write_text(d / "text", std::string(500, 'x'));
  write_text(d / "half.b2nd", good.substr(0, good.size() / 2));
  write_text(d / "head.b2nd", good.substr(0, 40));
  fs::create_directory(d / "dir");
  write_text(d / "dir" / "chunks.b2frame", good.substr(0, good.size() / 2));
  const auto fds = [] { return std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator{}); };
  const auto before = fds();
  for (const char* name : {"empty", "text", "half.b2nd", "head.b2nd", "dir"})
    EXPECT_THROW(open((d / name).string()), IOError) << name;
  EXPECT_EQ(fds(), before);
  fs::remove_all(d);
}
