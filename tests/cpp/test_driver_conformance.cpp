// The shared driver suite (issue #13, item 6), C++ half: every driver that writes passes
// it through compute(urlpath) and open(url) — every dtype with edge chunks, strided
// partial reads, a region of only absent chunks, the result compute() returns, an output
// replaced only when it is an array of the same format, and bad paths named in errors.
// The Python half (tests/python/formats/test_driver_conformance.py) adds each format's
// own library as the oracle.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "b2lazy/b2lazy.hpp"
#include "io/builtin_drivers.hpp"
#include "test_util.hpp"

using namespace b2lazy;
namespace fs = std::filesystem;

namespace {

// A driver's suite case (Driver::suite_cases): the output path is DIR/NAME + suffix; Zarr
// with `sharded`: shards of 2 x 2 ... chunks.
using DriverCase = Driver::SuiteCase;

// Every case the shipped drivers declare beside themselves.
std::vector<DriverCase> suite_cases() {
  std::vector<DriverCase> out;
  for (const Driver& d : builtin_drivers()) out.insert(out.end(), d.suite_cases.begin(), d.suite_cases.end());
  return out;
}

class DriverConformance : public ::testing::TestWithParam<DriverCase> {
 protected:
  std::string url(const fs::path& dir, const std::string& stem) const {
    return (dir / stem).string() + GetParam().suffix;
  }
  Array write(const Array& x, const std::string& to, Shape chunks) const {
    ComputeOptions o;
    o.urlpath = to;
    if (GetParam().sharded)
      for (int64_t c : chunks) o.shards.push_back(2 * c);
    o.chunks = std::move(chunks);
    return x.compute(o);
  }
};

// Paths as messages name them (without trailing slashes).
std::string bare(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_P(DriverConformance, EveryDtypeWithEdgeChunks) {
  const fs::path d = test::temp_dir("conf_dtypes_" + GetParam().name);
  for (int t = 0; t < kNumDTypes; ++t) {
    const DType dt = static_cast<DType>(t);
    Array x = (arange(0, 13 * 7 * 3, 1, DType::I64, {13, 7, 3}) % 97).astype(dt);
    const std::string u = url(d, dtype_name(dt));
    Array r = write(x, u, {4, 4, 2});
    Array back = open(u);
    EXPECT_EQ(back.dtype(), dt) << u;
    EXPECT_EQ(back.shape(), x.shape());
    EXPECT_EQ(back.to_vector(), x.to_vector()) << u;
    EXPECT_EQ(r.to_vector(), x.to_vector()) << u;  // the array compute() returned
    StorageInfo info = storage_info(back);
    EXPECT_EQ(info.format, resolve_url(u, false).driver->name);
    EXPECT_EQ(info.shape, x.shape());
  }
}

TEST_P(DriverConformance, StridedPartialReads) {
  const fs::path d = test::temp_dir("conf_partial_" + GetParam().name);
  Array x = arange(0, 50 * 37, 1, DType::F64, {50, 37});
  const std::string u = url(d, "x");
  write(x, u, {8, 8});
  Array a = open(u);
  std::vector<std::vector<Index>> keys = {{Index::slice(3, 40, 3), Index::slice(1, 36, 5)},
                                          {Index::slice({}, {}, -7), Index::at(36)},
                                          {Index::at(49), Index::slice(30, 37)},
                                          {Index::slice(9, 15), Index::slice(9, 15)}};
  for (const auto& k : keys) EXPECT_EQ(a[k].to_vector(), x[k].to_vector());
  // One chunk's part decompresses that chunk (or inner chunk) only.
  Array part = a[keys[3]];
  ComputeOptions mem;  // in memory
  Array r = (part + 0.0).compute(mem);
  EXPECT_EQ(r.stats()->chunks_decompressed_total, 1);
}

TEST_P(DriverConformance, AbsentChunksAndReplacement) {
  const fs::path d = test::temp_dir("conf_absent_" + GetParam().name);
  const std::string u = url(d, "z");
  Array zero = zeros({40, 40});
  write(zero, u, {10, 10});
  const std::vector<Index> key = {Index::slice(5, 35), Index::slice(12, 13)};
  EXPECT_EQ(open(u)[key].to_vector(), std::vector<double>(30, 0.0));
  // Written again, with other values: the array at the path is replaced.
  write(ones({40, 40}), u, {20, 20});
  EXPECT_EQ(open(u).to_vector(), std::vector<double>(1600, 1.0));
  // Something that is not an array of this format there: refused, left as it is.
  const std::string other = url(d, "other");
  fs::create_directories(other);
  std::ofstream(fs::path(other) / "mine.txt") << "keep";
  const std::string m = message_of([&] { write(zero, other, {10, 10}); });
  EXPECT_NE(m.find(bare(other)), std::string::npos) << m;
  EXPECT_TRUE(fs::exists(fs::path(other) / "mine.txt"));
}

TEST_P(DriverConformance, BadPathsAreNamed) {
  const fs::path d = test::temp_dir("conf_bad_" + GetParam().name);
  const std::string missing = url(d, "missing");
  std::string m = message_of([&] { open(missing); });
  EXPECT_NE(m.find("missing"), std::string::npos) << m;
  const std::string nodir = (d / "no" / "such").string() + GetParam().suffix;
  m = message_of([&] { write(zeros({3}), nodir, {2}); });
  EXPECT_NE(m.find(bare(nodir)), std::string::npos) << m;
}

// A driver that writes and declares no case (nor why) fails here.
TEST(DriverConformanceCoverage, EveryDriverThatWritesHasACase) {
  for (const Driver& d : builtin_drivers()) {
    if (d.create) {
      EXPECT_TRUE(!d.suite_cases.empty() || !d.suite_exempt.empty()) << d.name << " has no suite case";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Drivers, DriverConformance, ::testing::ValuesIn(suite_cases()),
                         [](const auto& info) { return info.param.name; });
