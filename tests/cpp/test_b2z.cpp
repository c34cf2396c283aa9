// The .b2z driver's member table (io/b2z): names of any length a zip holds are read with
// their length (a 4096+ byte name once overflowed a stack buffer), listed and opened; of
// members with the same name the last is read, as python-blosc2 reads it; what is not a
// regular file is refused without blocking.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zip.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<uint8_t>;

// The frame of a b2nd file holding arange(n) * k.
Bytes frame(const fs::path& dir, int64_t n, double k) {
  const fs::path p = dir / "frame.b2nd";
  ComputeOptions o;
  o.urlpath = p.string();
  (arange(0, static_cast<double>(n)) * k).compute(o);
  std::ifstream f(p, std::ios::binary);
  Bytes b{std::istreambuf_iterator<char>(f), {}};
  fs::remove(p);
  return b;
}

// A zip of stored members, in this order.
void write_zip(const fs::path& path, const std::vector<std::pair<std::string, Bytes>>& members) {
  zipFile z = zipOpen64(path.c_str(), APPEND_STATUS_CREATE);
  ASSERT_NE(z, nullptr);
  for (const auto& [name, data] : members) {
    zip_fileinfo info{};
    ASSERT_EQ(zipOpenNewFileInZip64(z, name.c_str(), &info, nullptr, 0, nullptr, 0, nullptr, 0, 0, 1), ZIP_OK);
    ASSERT_EQ(zipWriteInFileInZip(z, data.data(), static_cast<unsigned>(data.size())), ZIP_OK);
    ASSERT_EQ(zipCloseFileInZip(z), ZIP_OK);
  }
  ASSERT_EQ(zipClose(z, nullptr), ZIP_OK);
}

double sum_of(const Array& a) {
  std::vector<double> v(static_cast<size_t>(a.size()));
  a.to_buffer(v.data());
  double s = 0;
  for (double x : v) s += x;
  return s;
}

}  // namespace

TEST(B2z, LongNamesListedAndOpened) {
  const fs::path dir = test::temp_dir("b2z_long");
  for (size_t n : {255, 256, 300, 4095, 4096, 4097, 5000, 65000}) {
    const std::string name(n, 'k');
    const fs::path zip = dir / "s.b2z";
    write_zip(zip, {{name + ".b2nd", frame(dir, 10, 1)}, {"y.b2nd", frame(dir, 4, 2)}});
    EXPECT_EQ(sum_of(open(zip.string() + "#/" + name)), 45) << n;
    EXPECT_EQ(sum_of(open(zip.string() + "#/y")), 12) << n;
    try {
      open(zip.string());
      ADD_FAILURE() << "two arrays, none named";
    } catch (const IOError& e) {
      EXPECT_NE(std::string(e.what()).find("holds 2 arrays (/" + name.substr(0, 99)), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}

TEST(B2z, DuplicateNamesReadTheLast) {
  const fs::path dir = test::temp_dir("b2z_dup");
  const fs::path zip = dir / "d.b2z";
  write_zip(zip, {{"x.b2nd", frame(dir, 64, 1)}, {"x.b2nd", frame(dir, 64, 0)}});
  EXPECT_EQ(sum_of(open(zip.string() + "#/x")), 0);
  EXPECT_EQ(sum_of(open(zip.string())), 0);  // one key
  fs::remove_all(dir);
}

TEST(B2z, NotARegularFileRefused) {
  const fs::path dir = test::temp_dir("b2z_fifo");
  const fs::path fifo = dir / "f.b2z";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_directory(dir / "d.b2z");
  for (const fs::path& p : {fifo, dir / "d.b2z"}) {
    try {
      open(p.string() + "#/x");
      ADD_FAILURE() << p;
    } catch (const IOError& e) {
      EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    }
  }
  fs::remove_all(dir);
}
