// The b2z driver (b2lazy/driver.hpp): arrays inside python-blosc2's DictStore zips (".b2z").
// A .b2z holds each array as a b2nd frame in a member stored uncompressed ("x.b2nd" for key
// "/x", "g/y.b2nd" for "/g/y"), so an array is read where it lies: B2ndSource opens the
// frame at the member's offset. Small arrays python-blosc2 embeds in "embed.b2e" (one
// frame of msgpack-indexed copies) are not read here: the Python package takes those from
// python-blosc2 in memory. URLs: "store.b2z#/x" (or "b2z:store.b2z#/x"); read-only.
#include <unzip.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "b2lazy/driver.hpp"
#include "b2lazy/error.hpp"
#include "io/member_url.hpp"
#include "storage/b2nd_source.hpp"

namespace b2lazy {

namespace {

struct ZipCloser {
  void operator()(void* z) const { unzClose(z); }
};
using Zip = std::unique_ptr<void, ZipCloser>;

const std::vector<std::string> kSuffixes = {".b2z"};

std::pair<std::string, std::string> split_key(const std::string& url) { return split_member(url, kSuffixes); }

// The members holding arrays, as keys ("/x" for "x.b2nd").
std::vector<std::string> array_keys(void* zip) {
  std::vector<std::string> keys;
  for (int rc = unzGoToFirstFile(zip); rc == UNZ_OK; rc = unzGoToNextFile(zip)) {
    char name[4096];
    if (unzGetCurrentFileInfo64(zip, nullptr, name, sizeof name, nullptr, 0, nullptr, 0) != UNZ_OK) continue;
    const std::string n = name;
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".b2nd") == 0) keys.push_back("/" + n.substr(0, n.size() - 5));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& k : v) s += (s.empty() ? "" : ", ") + k;
  return s.empty() ? "none" : s;
}

NodePtr open_member(const std::string& url) {
  auto [path, key] = split_key(url);
  Zip zip(unzOpen64(path.c_str()));
  if (!zip) throw IOError("cannot open '" + path + "' as a .b2z store (python-blosc2's DictStore zip): not a zip file, or missing");
  const std::vector<std::string> keys = array_keys(zip.get());
  if (key.empty()) {
    if (keys.size() != 1)
      throw IOError("'" + path + "' holds " + std::to_string(keys.size()) + " arrays (" + joined(keys) +
                    "): name one, as '" + path + "#/key' (b2lazy.open(path, key=...))");
    key = keys[0];
  }
  const std::string member = (key.front() == '/' ? key.substr(1) : key) + ".b2nd";
  if (unzLocateFile(zip.get(), member.c_str(), 1) != UNZ_OK)
    throw IOError("'" + path + "' has no array '" + key + "' stored as a member (arrays: " + joined(keys) +
                  "; small arrays python-blosc2 embeds in embed.b2e are read through python-blosc2)");
  unz_file_info64 info;
  if (unzGetCurrentFileInfo64(zip.get(), &info, nullptr, 0, nullptr, 0, nullptr, 0) != UNZ_OK ||
      unzOpenCurrentFile(zip.get()) != UNZ_OK)
    throw IOError("'" + path + "': cannot read the zip entry of '" + key + "'");
  const ZPOS64_T offset = unzGetCurrentFileZStreamPos64(zip.get());
  unzCloseCurrentFile(zip.get());
  if (info.compression_method != 0)
    throw IOError("'" + path + "': the array '" + key + "' is deflated in the zip, not stored: it is no frame where it lies");
  return B2ndSource::open(path, path + "#" + (key.front() == '/' ? key : "/" + key), static_cast<int64_t>(offset));
}

}  // namespace

Driver b2z_driver() {
  Driver d;
  d.name = "b2z";
  d.schemes = {"b2z"};
  d.suffixes = kSuffixes;
  // "store.b2z#/key": the suffix is the path's, before the key.
  d.recognizes = [](const std::string& url) { return !split_key(url).second.empty(); };
  d.open = open_member;
  return d;
}

}  // namespace b2lazy
