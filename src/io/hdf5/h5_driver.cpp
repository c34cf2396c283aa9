// The HDF5 driver (b2lazy/driver.hpp): datasets of HDF5 files, "f.h5#/group/x" (or
// "hdf5:f.h5#/group/x"; no key: the file's only dataset), read by H5Source. Read-only.
#include <hdf5.h>

#include "b2lazy/driver.hpp"
#include "io/hdf5/h5_source.hpp"

namespace b2lazy {

namespace {
std::pair<std::string, std::string> split_key(const std::string& url) {
  const size_t hash = url.rfind('#');
  if (hash == std::string::npos) return {url, ""};
  return {url.substr(0, hash), url.substr(hash + 1)};
}
bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}
}  // namespace

Driver hdf5_driver() {
  Driver d;
  d.name = "hdf5";
  d.schemes = {"hdf5"};
  d.suffixes = {".h5", ".hdf5", ".he5"};
  // "f.h5#/x": the suffix is the file's, before the dataset.
  d.recognizes = [](const std::string& url) {
    const std::string path = split_key(url).first;
    for (const char* s : {".h5", ".hdf5", ".he5"})
      if (ends_with(path, s)) return true;
    return false;
  };
  d.open = [](const std::string& url) -> NodePtr {
    auto [path, key] = split_key(url);
    return H5Source::open(path, key);
  };
  return d;
}

}  // namespace b2lazy
