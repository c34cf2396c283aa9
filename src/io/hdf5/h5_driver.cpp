// The HDF5 driver (b2lazy/driver.hpp): datasets of HDF5 files, "f.h5#/group/x" (or
// "hdf5:f.h5#/group/x"; no key: the file's only dataset; netCDF-4 "f.nc#/group/x"), read by
// H5Source. Read-only.
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
    return H5Source::open(path, key);
  };
  return d;
}

}  // namespace b2lazy
