// libFuzzer target for the .b2z member table (io/b2z): each input is a zip, written to a
// file whose arrays are listed (b2z_array_keys) and opened (a few of them, read on a
// corner), from the file and through a byte store (minizip over ObjectPages, the member a
// slice of the zip object: the remote path), which must agree: what opens from the file
// reads the same bytes through the store when it opens there (the store path also checks
// that a member lies inside the zip). Only b2lazy::Error may come out; a crash, a
// sanitizer report (a name read past its buffer) or a leak fails the run.
//
//   ./fuzz_b2z_members CORPUS_DIR -max_total_time=60 -rss_limit_mb=2048
// Seeds: python tests/fuzz/zarr_seeds.py b2z CORPUS_DIR (zips python-blosc2 and zipfile wrote).
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "b2lazy/b2lazy.hpp"
#include "b2lazy/byte_store.hpp"
#include "b2lazy/driver.hpp"
#include "fuzz_input.hpp"
#include "io/b2z/b2z_members.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = write_fuzz_input(data, size, ".b2z");
  using namespace b2lazy;
  std::vector<std::string> keys;
  try {
    keys = b2z_array_keys(path);
  } catch (const Error&) {
    return 0;
  }
  keys.push_back("/absent");
  auto corner_of = [](const Array& a) -> std::vector<uint8_t> {
    std::vector<Index> corner(a.ndim(), Index::slice(0, 2));
    Array e = a[corner];
    std::vector<uint8_t> out(static_cast<size_t>(e.size()) * itemsize(e.dtype()));
    e.to_buffer(out.data());
    return out;
  };
  const StorePtr store = open_store(path);
  for (size_t i = 0; i < keys.size() && i < 4; ++i) {
    std::optional<std::vector<uint8_t>> local, stored;
    try {
      local = corner_of(open(path + "#" + keys[i]));
    } catch (const Error&) {}
    try {
      stored = corner_of(Array(open_in_store(store, "b2z", keys[i])));
    } catch (const Error&) {}
    if (local && stored && *local != *stored) std::abort();  // the two paths read other bytes
  }
  try {
    open(path);
  } catch (const Error&) {}
  return 0;
}
