// The HDF5 driver (b2lazy/driver.hpp): datasets of HDF5 files, "f.h5#/group/x" (or
// "hdf5:f.h5#/group/x", also for files without an HDF5 suffix; no key: the file's only
// dataset; netCDF-4 "f.nc#/group/x"), read by H5Source. Read-only; also over byte stores
// ("https://h/f.h5#/group/x", "s3://b/f.nc#/t": h5_store_vfd.hpp).
#include <filesystem>
#include <system_error>

#include "b2lazy/driver.hpp"
#include "io/hdf5/h5_source.hpp"
#include "io/member_url.hpp"

namespace b2lazy {

namespace {
// netCDF-4 files are HDF5 files (a netCDF-3 ".nc" is not: the open says so).
const std::vector<std::string> kSuffixes = {".h5", ".hdf5", ".he5", ".nc", ".nc4"};
}  // namespace

Driver hdf5_driver() {
  Driver d;
  d.name = "hdf5";
  d.schemes = {"hdf5"};
  d.suffixes = kSuffixes;
  // "f.h5#/x": the suffix is the file's, before the dataset.
  d.recognizes = [](const std::string& url) { return !split_member(url, kSuffixes).second.empty(); };
  d.open = [](const std::string& url) -> NodePtr {
    auto [path, key] = split_member(url, kSuffixes);
    // "hdf5:run.cdf#/x": a file named without an HDF5 suffix (netCDF-4 files often are)
    // holds its dataset after the last '#', when what precedes it is a file.
    std::error_code ec;
    if (const size_t hash = url.rfind('#'); key.empty() && hash != std::string::npos && hash > 0 &&
                                            !std::filesystem::is_regular_file(url, ec) &&
                                            std::filesystem::is_regular_file(url.substr(0, hash), ec))
      path = url.substr(0, hash), key = url.substr(hash + 1);
    return H5Source::open(path, key);
  };
  // Over a store (read-only): "https://h/f.h5" (its only dataset), "s3://b/f.nc#/t".
  d.open_in_store = [](const StorePtr& store) -> NodePtr { return H5Source::open_in_store(store, ""); };
  d.open_member_in_store = [](const StorePtr& store, const std::string& member) -> NodePtr {
    return H5Source::open_in_store(store, member);
  };
  // An object starting with HDF5's signature (a file with a user block is named by its suffix).
  d.recognizes_in_store = [](const StorePtr& store) {
    try {
      const auto head = store->read("", {{0, 8}});
      return head && (*head)[0] == std::vector<uint8_t>{0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    } catch (const std::exception&) {
      return false;
    }
  };
  return d;
}

}  // namespace b2lazy
