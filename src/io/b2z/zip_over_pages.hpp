// minizip reading a zip that is an object of a store, through its ObjectPages: the zip's
// tail (end of central directory, the directory itself when it fits) is one suffix read,
// a bigger directory is read ahead (1, 2, then 4 MiB at a time), and a member's local
// header with the first and last pages of its data in one batch. So the zip is parsed by the same library
// and code as a local .b2z, and a hostile zip fails as it does locally.
#pragma once
#include <memory>
#include <string>

#include "io/store/object_pages.hpp"

namespace b2lazy {

class ZipOverPages {
 public:
  // The zip of `pages`; IOError naming its URL when it is no zip, or cannot be read.
  explicit ZipOverPages(std::shared_ptr<ObjectPages> pages);
  ~ZipOverPages();
  ZipOverPages(const ZipOverPages&) = delete;
  ZipOverPages& operator=(const ZipOverPages&) = delete;

  void* handle() const { return zip_; }  // minizip's unzFile
  // Before minizip opens a member whose data is `data_bytes` long: the next read missing
  // the pages (its local header) fetches with them the member's first `ahead` bytes and
  // the last pages of its data, where a b2nd frame keeps its chunk index.
  void expect_member(int64_t data_bytes, int64_t ahead);
  // What failed reading the store last ("" when nothing): minizip only says it failed.
  std::string store_error() const;

  struct Stream;

 private:
  std::shared_ptr<ObjectPages> pages_;
  std::unique_ptr<Stream> stream_;
  void* zip_ = nullptr;
};

}  // namespace b2lazy
