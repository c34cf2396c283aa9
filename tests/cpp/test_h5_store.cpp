// HDF5 over a byte store (src/io/hdf5/h5_store_vfd.cpp, h5_store_source.cpp): a file
// written with libhdf5, read through a LocalStore wrapped to record every store call —
// the values as the local path reads them, the metadata through pages (few calls), the
// chunks of a region in one read_many of one range each, a truncated object an IOError
// naming it.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <fstream>
#include <mutex>

#include "b2lazy/array.hpp"
#include "b2lazy/byte_store.hpp"
#include "b2lazy/driver.hpp"
#include "b2lazy/error.hpp"
#include "io/hdf5/h5_library.hpp"
#include "test_util.hpp"

namespace b2lazy {
namespace {

class RecordingStore final : public ByteStore {
 public:
  explicit RecordingStore(StorePtr inner) : inner_(std::move(inner)) {}
  std::string root() const override { return inner_->root(); }
  std::optional<Parts> read(const std::string& key, const std::vector<ByteRange>& ranges) override {
    note(1, ranges.size());
    return inner_->read(key, ranges);
  }
  std::vector<std::optional<Parts>> read_many(const std::vector<Request>& requests) override {
    size_t n = 0;
    for (const auto& r : requests) n += r.ranges.size();
    note(1, n);
    return inner_->read_many(requests);
  }
  std::optional<ObjectInfo> stat(const std::string& key) override {
    note(1, 0);
    return inner_->stat(key);
  }
  std::vector<ObjectInfo> list(const std::string& prefix) override { return inner_->list(prefix); }
  void write(const std::string& key, const void* data, size_t n) override { inner_->write(key, data, n); }
  void remove(const std::string& key) override { inner_->remove(key); }
  StoreCounters counters() const override { return inner_->counters(); }

  std::mutex mu;
  int calls = 0;
  size_t ranges = 0;

 private:
  void note(int c, size_t r) {
    std::lock_guard<std::mutex> g(mu);
    calls += c;
    ranges += r;
  }
  StorePtr inner_;
};

// A file of a chunked, deflated float64 dataset "/g/x" (40 x 30, chunks 10 x 10) and a
// contiguous int32 "/c" (50).
std::string write_file(const std::string& name) {
  const std::string path = (test::temp_dir(name) / "f.h5").string();
  std::lock_guard<std::mutex> lock(h5::library_lock());
  h5::quiet_this_thread();
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t g = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[2] = {40, 30}, chunk[2] = {10, 10};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_deflate(dcpl, 4);
  const hid_t x = H5Dcreate2(g, "x", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  std::vector<double> v(40 * 30);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i) * 0.5;
  H5Dwrite(x, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  hsize_t n = 50;
  const hid_t s1 = H5Screate_simple(1, &n, nullptr);
  const hid_t c = H5Dcreate2(f, "c", H5T_STD_I32LE, s1, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<int32_t> w(50);
  for (int i = 0; i < 50; ++i) w[static_cast<size_t>(i)] = i * 3 - 7;
  H5Dwrite(c, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, w.data());
  H5Dclose(c), H5Sclose(s1), H5Dclose(x), H5Pclose(dcpl), H5Sclose(space), H5Gclose(g), H5Fclose(f);
  return path;
}

TEST(H5Store, ValuesAsTheLocalPathAndChunksInOneCall) {
  const std::string path = write_file("h5store_values");
  auto store = std::make_shared<RecordingStore>(open_store(path));
  Array remote(open_in_store(store, "hdf5", "/g/x"));
  const int opened = store->calls;
  EXPECT_LE(opened, 3);  // a stat and the file's tail together, the superblock's page (one small file: held)
  EXPECT_EQ(remote.to_vector(), open(path + "#/g/x").to_vector());
  const int whole = store->calls - opened;
  EXPECT_GE(whole, 1);
  // A region over 2 x 2 chunks: their places cached, one call of four ranges.
  const int before = store->calls;
  const size_t ranges = store->ranges;
  Array part = remote[{Index::slice(5, 15), Index::slice(5, 15)}];
  EXPECT_EQ(part.to_vector(), (open(path + "#/g/x")[{Index::slice(5, 15), Index::slice(5, 15)}]).to_vector());
  EXPECT_EQ(store->calls - before, 1);
  EXPECT_EQ(store->ranges - ranges, 4u);
  Array c(open_in_store(std::make_shared<RecordingStore>(open_store(path)), "hdf5", "/c"));
  EXPECT_EQ(c.to_vector(), open(path + "#/c").to_vector());
}

TEST(H5Store, TruncatedObjectIsAnIOErrorNamingIt) {
  const std::string path = write_file("h5store_trunc");
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = (test::temp_dir("h5store_trunc_cut") / "t.h5").string();
  std::ofstream(cut, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  try {
    Array a(open_in_store(open_store(cut), "hdf5", "/g/x"));
    a.to_vector();
    FAIL() << "a truncated file read";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find(cut), std::string::npos) << e.what();
  }
}

TEST(H5Store, NoSuchDatasetNamesTheDatasets) {
  const std::string path = write_file("h5store_names");
  try {
    open_in_store(open_store(path), "hdf5", "/nope");
    FAIL();
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("(datasets: /c, /g/x)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace b2lazy
