// The driver registry (b2lazy/driver.hpp): URLs resolved by scheme, suffix and content,
// and a format added from outside the library by one register_driver() call, read by
// open() and written by compute().
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <mutex>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
namespace fs = std::filesystem;

namespace {

// An array whose element i (flat, C order) is i, stored "nowhere": what a driver opens.
class CountingSource : public Node {
 public:
  explicit CountingSource(Shape s) : Node(DType::F64, std::move(s)) {}
  std::string kind() const override { return "counting"; }
  void fill(const Region& r, void* out, ThreadState&) const override {
    const Shape st = c_strides(shape());
    auto* o = static_cast<double*>(out);
    Shape idx(ndim(), 0);
    for (int64_t k = 0; k < r.size(); ++k) {
      int64_t flat = 0;
      for (size_t d = 0; d < ndim(); ++d) flat += (r.start[d] + idx[d] * r.step[d]) * st[d];
      o[k] = static_cast<double>(flat);
      for (size_t d = ndim(); d-- > 0;) {
        if (++idx[d] < r.count[d]) break;
        idx[d] = 0;
      }
    }
  }
};

// Keeps what compute() writes in memory; finish() returns it as a NumPy-like buffer.
struct MemorySink : Sink {
  MemorySink(const SinkSpec& s)
      : grid_(s.shape, s.chunks), data_(std::make_shared<std::vector<double>>(prod(s.shape))) {}
  const ChunkGrid& grid() const override { return grid_; }
  void write_chunk(int64_t id, const void* data, ThreadState&) override {
    const Box b = grid_.chunk_box(id);
    const Shape st = c_strides(grid_.shape());
    const auto* in = static_cast<const double*>(data);
    const Shape bs = b.shape();
    Shape idx(bs.size(), 0);
    for (int64_t k = 0; k < b.size(); ++k) {
      int64_t flat = 0;
      for (size_t d = 0; d < bs.size(); ++d) flat += (b.start[d] + idx[d]) * st[d];
      (*data_)[flat] = in[k];
      for (size_t d = bs.size(); d-- > 0;) {
        if (++idx[d] < bs[d]) break;
        idx[d] = 0;
      }
    }
    std::lock_guard<std::mutex> g(mu_);
    ++chunks_;
  }
  NodePtr finish() override {
    written_chunks = chunks_;
    return from_buffer(data_->data(), DType::F64, grid_.shape(), {}, data_).node();
  }
  int64_t bytes_written() const override { return 0; }
  ChunkGrid grid_;
  std::shared_ptr<std::vector<double>> data_;
  std::mutex mu_;
  int64_t chunks_ = 0;
  static inline int64_t written_chunks = 0;
};

Driver counting_driver() {
  Driver d;
  d.name = "counting";
  d.schemes = {"counting"};
  d.suffixes = {".cnt"};
  d.open = [](const std::string& path) -> NodePtr {
    return std::make_shared<CountingSource>(Shape{static_cast<int64_t>(path.size()), 3});
  };
  d.create = [](const SinkSpec& s) -> std::unique_ptr<Sink> { return std::make_unique<MemorySink>(s); };
  return d;
}

}  // namespace

TEST(DriverRegistry, ResolvesSchemesSuffixesAndTheDefault) {
  EXPECT_EQ(resolve_url("x.b2nd", false).driver->name, "b2nd");
  EXPECT_EQ(resolve_url("X.B2ND/", true).driver->name, "b2nd");
  EXPECT_EQ(resolve_url("b2nd:some/where", false).path, "some/where");
  EXPECT_EQ(resolve_url("b2nd:///abs/x", false).path, "/abs/x");
  const Resolved f = resolve_url("file:///tmp/y.b2nd", false);
  EXPECT_EQ(f.driver->name, "b2nd");
  EXPECT_EQ(f.path, "/tmp/y.b2nd");
  // Not a scheme of ours and no "://": a path with a colon in it.
  EXPECT_EQ(resolve_url("c:data", false).path, "c:data");
  // Nothing there and no suffix: the default format.
  EXPECT_EQ(resolve_url("/nonexistent/dir/array", false).driver->name, "b2nd");
  try {
    resolve_url("nosuch://bucket/a.zarr", false);  // (s3, gs, http(s) are the libcurl stores)
    ADD_FAILURE() << "an unknown scheme was accepted";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown URL scheme 'nosuch'"), std::string::npos) << e.what();
  }
  const auto names = driver_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "b2nd"), names.end());
}

TEST(DriverRegistry, AFormatRegisteredFromOutsideIsReadAndWritten) {
  register_driver(counting_driver());
  Array a = open("counting:abcd");  // four rows, by the driver's open()
  EXPECT_EQ(a.shape(), (Shape{4, 3}));
  EXPECT_EQ(a.to_vector()[11], 11.0);
  EXPECT_EQ(open("whatever.cnt").shape(), (Shape{12, 3}));  // by suffix: the whole path
  ComputeOptions o;
  o.urlpath = "out.cnt";
  o.chunks = {2, 3};
  Array r = (a * 2).compute(o);
  EXPECT_EQ(MemorySink::written_chunks, 2);
  const auto v = r.to_vector();
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], 2.0 * static_cast<double>(i));
  // Registering the same name again replaces it.
  Driver again = counting_driver();
  again.create = nullptr;
  register_driver(again);
  try {
    (a * 2).compute(o);
    ADD_FAILURE() << "a read-only format was written";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("does not write"), std::string::npos) << e.what();
  }
}

TEST(DriverRegistry, B2ndRefusesZarrOnlyOptions) {
  ComputeOptions o;
  o.urlpath = (test::temp_dir("registry_b2nd") / "x.b2nd").string();
  o.shards = {4};
  EXPECT_THROW(arange(0, 10).compute(o), ValueError);
  o.shards.clear();
  o.cparams.compressor = "zstd";
  EXPECT_THROW(arange(0, 10).compute(o), ValueError);
}
