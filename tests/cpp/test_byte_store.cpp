// The byte-store interface on local files: ranges read exactly, missing objects, listing,
// atomic writes, the scheme registry.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "b2lazy/array.hpp"
#include "b2lazy/byte_store.hpp"
#include "b2lazy/driver.hpp"
#include "b2lazy/error.hpp"
#include "test_util.hpp"

namespace b2lazy {
namespace {

std::vector<uint8_t> bytes_upto(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + 3);
  return v;
}

TEST(ByteStore, LocalReadsRangesExactly) {
  const auto dir = test::temp_dir("store_ranges");
  auto store = open_store(dir.string());
  const auto data = bytes_upto(1000);
  store->write("a/b/c.bin", data.data(), data.size());
  auto parts = store->read("a/b/c.bin", {{0, 10}, {990, 10}, {500, -1}, {1000, 0}});
  ASSERT_TRUE(parts);
  EXPECT_EQ((*parts)[0], std::vector<uint8_t>(data.begin(), data.begin() + 10));
  EXPECT_EQ((*parts)[1], std::vector<uint8_t>(data.begin() + 990, data.end()));
  EXPECT_EQ((*parts)[2], std::vector<uint8_t>(data.begin() + 500, data.end()));
  EXPECT_TRUE((*parts)[3].empty());
  EXPECT_EQ(store->read_all("a/b/c.bin"), data);
  EXPECT_FALSE(store->read("a/b/missing.bin", {{0, 1}}));
  EXPECT_THROW(store->read("a/b/c.bin", {{995, 10}}), IOError);  // past the end: an error, never zeros
  const auto info = store->stat("a/b/c.bin");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->size, 1000);
  EXPECT_FALSE(store->stat("nothing"));
  EXPECT_GE(store->counters().bytes, 1000 + 10 + 10 + 500);
}

TEST(ByteStore, LocalListsByPrefixAndRemoves) {
  const auto dir = test::temp_dir("store_list");
  auto store = open_store("file://" + dir.string());
  const uint8_t x = 1;
  for (const char* k : {"z/zarr.json", "z/c/0/0", "z/c/0/1", "zz/zarr.json", "other"}) store->write(k, &x, 1);
  std::vector<std::string> keys;
  for (const auto& o : store->list("z/")) keys.push_back(o.key);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"z/c/0/0", "z/c/0/1", "z/zarr.json"}));
  EXPECT_EQ(store->list("z").size(), 4u);  // a prefix, not a directory: zz/ too
  store->remove("z/c/0/0");
  store->remove("z/c/0/0");  // missing: not an error
  EXPECT_EQ(store->list("z/c/").size(), 1u);
  // Nothing left under a temporary name.
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

TEST(ByteStore, SchemesAreRegistered) {
  EXPECT_FALSE(is_remote_url("/data/x.zarr"));
  EXPECT_FALSE(is_remote_url("file:///data/x.zarr"));
  try {
    open_store("nosuchscheme://bucket/x");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("nosuchscheme"), std::string::npos) << e.what();
  }
  register_store("memtest",
                 [](const std::string& url, const StoreOptions&) { return open_store("/tmp/" + url.substr(10)); });
  EXPECT_TRUE(is_remote_url("memtest://x"));
  EXPECT_EQ(open_store("memtest://x")->root(), "/tmp/x");
}

}  // namespace
}  // namespace b2lazy

namespace b2lazy {
namespace {

// A remote URL resolves to its store and the driver its suffix names; a format without
// store support says so instead of reading the URL as a local path.
TEST(ByteStore, RemoteUrlsResolveToAStoreAndADriver) {
  const auto dir = test::temp_dir("store_resolve");
  register_store("resolvetest", [dir](const std::string& url, const StoreOptions&) {
    return open_store((dir / url.substr(std::string("resolvetest://").size())).string());
  });
  Driver d;
  d.name = "storetestformat";
  d.suffixes = {".stf"};
  d.open = [](const std::string&) -> NodePtr { throw IOError("local"); };
  d.open_in_store = [](const StorePtr& s) -> NodePtr { throw IOError("in store " + s->root()); };
  register_driver(d);
  const Resolved r = resolve_url("resolvetest://bucket/x.stf", false);
  ASSERT_TRUE(r.store);
  EXPECT_EQ(r.driver->name, "storetestformat");
  EXPECT_EQ(r.store->root(), (dir / "bucket/x.stf").string());
  try {
    open("resolvetest://bucket/x.stf");
    FAIL();
  } catch (const IOError& e) {
    EXPECT_EQ(std::string(e.what()), "in store " + (dir / "bucket/x.stf").string());
  }
  EXPECT_THROW(resolve_url("resolvetest://bucket/x.unknownsuffix", false), IOError);  // nothing recognizes it
}

}  // namespace
}  // namespace b2lazy
