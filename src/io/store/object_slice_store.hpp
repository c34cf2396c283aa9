// A read-only store whose one object (key "") is bytes [offset, offset + length) of an
// object of another store: a .b2z member's b2nd frame, read where it lies in the zip by the
// code that reads b2nd files of stores (StoreFrame), so its chunks are fetched and
// prefetched as a b2nd file's. Reads the object's pages hold already (a zip's directory,
// a member's first bytes read with its entry) are answered from them, without a request.
#pragma once
#include <memory>
#include <string>

#include "b2lazy/byte_store.hpp"
#include "io/store/object_pages.hpp"

namespace b2lazy {

// `name`: the slice's URL in messages and for the arrays read ("https://h/s.b2z#/x").
// `pages`: the whole object's pages (its store and key are read).
StorePtr make_object_slice_store(std::shared_ptr<ObjectPages> pages, int64_t offset, int64_t length, std::string name);

}  // namespace b2lazy
