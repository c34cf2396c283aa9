// The b2z driver (b2lazy/driver.hpp): arrays inside python-blosc2's DictStore zips (".b2z").
// A .b2z holds each array as a b2nd frame in a member stored uncompressed ("x.b2nd" for key
// "/x", "g/y.b2nd" for "/g/y"), so an array is read where it lies: B2ndSource opens the
// frame at the member's offset. Small arrays python-blosc2 embeds in "embed.b2e" (one
// frame of msgpack-indexed copies) are not read here: the Python package takes those from
// python-blosc2 in memory. URLs: "store.b2z#/x" (or "b2z:store.b2z#/x"); read-only.
// Over a byte store ("https://h/s.b2z#/x", "s3://b/s.b2z#/g/y"): minizip reads the zip
// through its ObjectPages (io/b2z/zip_over_pages.hpp) and the member's frame is read as a
// b2nd file of a store, the slice of the zip object it occupies (io/store/object_slice_store.hpp).
//
// Members are found as python-blosc2 finds them: names read whole with their length (any
// length a zip holds), cut at a NUL as Python's zipfile does, and the last of members
// with the same name wins (python-blosc2 maps names to members in a dict).
#include <fcntl.h>
#include <unistd.h>
#include <unzip.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "b2lazy/driver.hpp"
#include "b2lazy/error.hpp"
#include "io/b2z/b2z_members.hpp"
#include "io/b2z/zip_over_pages.hpp"
#include "io/member_url.hpp"
#include "io/regular_file.hpp"
#include "io/store/object_pages.hpp"
#include "io/store/object_slice_store.hpp"
#include "storage/b2nd_source.hpp"

namespace b2lazy {

namespace {

struct ZipCloser {
  void operator()(void* z) const { unzClose(z); }
};
using Zip = std::unique_ptr<void, ZipCloser>;

const std::vector<std::string> kSuffixes = {".b2z"};
constexpr int64_t kFrameHead = int64_t(64) << 10;  // what StoreFrame reads first of a frame

std::pair<std::string, std::string> split_key(const std::string& url) { return split_member(url, kSuffixes); }

// minizip reads the zip through a descriptor already checked to be a regular file (its
// own fopen of the path could block on a FIFO): `filename` is that descriptor.
voidpf open_descriptor(voidpf, const void* filename, int) {
  const int fd = ::fcntl(*static_cast<const int*>(filename), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  FILE* f = ::fdopen(fd, "rb");
  if (!f) ::close(fd);
  return f;
}

Zip open_zip(const std::string& path) {
  const int fd = open_regular_file(AT_FDCWD, path, path);
  if (fd < 0) throw IOError("cannot open '" + path + "' as a .b2z store: no such file");
  zlib_filefunc64_def io;
  fill_fopen64_filefunc(&io);
  io.zopen64_file = open_descriptor;
  Zip zip(unzOpen2_64(&fd, &io));
  ::close(fd);
  if (!zip) throw IOError("cannot open '" + path + "' as a .b2z store (python-blosc2's DictStore zip): not a zip file");
  return zip;
}

struct Member {
  unz64_file_pos pos;  // where its entry is in the zip
  bool stored;         // kept whole (a frame where it lies); python-blosc2 maps no other
};
using Members = std::map<std::string, Member>;

// The members named as arrays, by key ("/x" for "x.b2nd"; python-blosc2's key of a name
// already starting with '/' keeps that one).
Members array_members(void* zip, const std::string& path) {
  Members keys;
  int rc = unzGoToFirstFile(zip);
  for (; rc == UNZ_OK; rc = unzGoToNextFile(zip)) {
    unz_file_info64 info;
    if (unzGetCurrentFileInfo64(zip, &info, nullptr, 0, nullptr, 0, nullptr, 0) != UNZ_OK) break;
    std::string n(info.size_filename, '\0');  // (minizip adds no NUL when the buffer is just long enough)
    if (unzGetCurrentFileInfo64(zip, nullptr, n.data(), n.size(), nullptr, 0, nullptr, 0) != UNZ_OK) break;
    n.resize(std::min(n.size(), n.find('\0')));  // Python's zipfile ends a name at a NUL
    if (!has_suffix(n, ".b2nd") || n.size() == 5) continue;
    unz64_file_pos pos;
    if (unzGetFilePos64(zip, &pos) != UNZ_OK) break;
    keys[(n.front() == '/' ? "" : "/") + n.substr(0, n.size() - 5)] = {
        pos, info.compression_method == 0};  // the last of a name wins
  }
  if (rc != UNZ_END_OF_LIST_OF_FILE && rc != UNZ_OK)
    throw IOError("'" + path + "': a damaged zip (its member table cannot be read)");
  if (rc == UNZ_OK) throw IOError("'" + path + "': a damaged zip (a member's entry cannot be read)");
  return keys;
}

// A key in a message: a long one cut (a zip name may have 65535 bytes).
std::string shown(const std::string& key) {
  return key.size() > 120 ? key.substr(0, 100) + "...(" + std::to_string(key.size()) + " bytes)" : key;
}

// The keys of the arrays python-blosc2 maps: the stored members.
std::vector<std::string> stored_keys(const Members& m) {
  std::vector<std::string> keys;
  for (const auto& kv : m)
    if (kv.second.stored) keys.push_back(kv.first);
  return keys;
}

std::string joined(const std::vector<std::string>& keys) {
  std::string s;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i == 20) return s + ", ... (" + std::to_string(keys.size()) + " in all)";
    s += (s.empty() ? "" : ", ") + shown(keys[i]);
  }
  return s.empty() ? "none" : s;
}

// Where member `key` of the zip `name` lies: its data's offset and length. `zip` is at the
// first member; `before_open` is called with the member's entry just before minizip reads
// its local header. IOError naming the zip and the member when it is no array stored whole.
struct Placed {
  std::string key;
  int64_t offset, length;
};
Placed place_member(void* zip, const std::string& name, std::string key,
                    const std::function<void(const unz_file_info64&)>& before_open = {}) {
  const Members members = array_members(zip, name);
  const std::vector<std::string> keys = stored_keys(members);
  if (key.empty()) {
    if (keys.size() != 1)
      throw IOError("'" + name + "' holds " + std::to_string(keys.size()) + " arrays (" + joined(keys) +
                    "): name one, as '" + name + "#/key' (b2lazy.open(path, key=...))");
    key = keys.front();
  }
  if (key.front() != '/') key = "/" + key;
  auto it = members.find(key);
  if (it == members.end())
    throw IOError("'" + name + "' has no array '" + shown(key) + "' stored as a member (arrays: " + joined(keys) +
                  "; small arrays python-blosc2 embeds in embed.b2e are read through python-blosc2)");
  unz64_file_pos pos = it->second.pos;
  unz_file_info64 info;
  if (unzGoToFilePos64(zip, &pos) != UNZ_OK ||
      unzGetCurrentFileInfo64(zip, &info, nullptr, 0, nullptr, 0, nullptr, 0) != UNZ_OK)
    throw IOError("'" + name + "': cannot read the zip entry of '" + shown(key) + "'");
  if (info.compression_method != 0)
    throw IOError("'" + name + "': the array '" + shown(key) + "' is compressed in the zip (method " +
                  std::to_string(info.compression_method) + "), not stored: it is no frame where it lies");
  if (before_open) before_open(info);
  if (unzOpenCurrentFile(zip) != UNZ_OK)
    throw IOError("'" + name + "': cannot read the zip entry of '" + shown(key) + "'");
  const ZPOS64_T offset = unzGetCurrentFileZStreamPos64(zip);
  unzCloseCurrentFile(zip);
  if (info.compressed_size > static_cast<ZPOS64_T>(INT64_MAX) || offset > static_cast<ZPOS64_T>(INT64_MAX))
    throw IOError("'" + name + "': the zip entry of '" + shown(key) + "' claims an impossible size");
  return {key, static_cast<int64_t>(offset), static_cast<int64_t>(info.compressed_size)};
}

NodePtr open_member(const std::string& url) {
  auto [path, key] = split_key(url);
  Zip zip = open_zip(path);
  const Placed m = place_member(zip.get(), path, key);
  return B2ndSource::open(path, path + "#" + m.key, m.offset);
}

// Over a store: the zip read through its pages (minizip as for a local .b2z), then the
// member's frame as a b2nd file of a store: the slice of the zip object it occupies.
NodePtr open_member_in_store(const StorePtr& store, const std::string& member) {
  auto pages = std::make_shared<ObjectPages>(store, "");
  const std::string name = pages->url();
  ZipOverPages zip(pages);
  Placed m;
  try {
    m = place_member(zip.handle(), name, member, [&](const unz_file_info64& info) {
      zip.expect_member(static_cast<int64_t>(std::min<ZPOS64_T>(info.compressed_size, INT64_MAX / 4)), kFrameHead);
    });
  } catch (const IOError& e) {
    const std::string why = zip.store_error();  // a failed request says more than minizip
    if (!why.empty()) throw IOError(std::string(e.what()) + ": " + why);
    throw;
  }
  zip.expect_member(-1, 0);
  const std::string member_url = name + "#" + m.key;
  if (m.offset > pages->size() || m.length > pages->size() - m.offset)
    throw IOError("'" + member_url + "': its zip entry claims bytes [" + std::to_string(m.offset) + ", +" +
                  std::to_string(m.length) + ") of a " + std::to_string(pages->size()) +
                  "-byte zip (truncated or corrupted)");
  auto source = B2ndSource::open_in_store(make_object_slice_store(pages, m.offset, m.length, member_url));
  pages->forget_outside(m.offset, m.length);  // the directory's pages are not needed any more
  return source;
}

}  // namespace

std::vector<std::string> b2z_array_keys(const std::string& path) {
  Zip zip = open_zip(path);
  return stored_keys(array_members(zip.get(), path));
}

Driver b2z_driver() {
  Driver d;
  d.name = "b2z";
  d.schemes = {"b2z"};
  d.suffixes = kSuffixes;
  // "store.b2z#/key": the suffix is the path's, before the key.
  d.recognizes = [](const std::string& url) { return !split_key(url).second.empty(); };
  d.open = open_member;
  d.open_member_in_store = open_member_in_store;
  d.open_in_store = [](const StorePtr& store) { return open_member_in_store(store, ""); };  // its only array
  return d;
}

}  // namespace b2lazy
