// HDF5 files over a byte store (b2lazy/byte_store.hpp): a read-only libhdf5 virtual file
// driver (H5FD_class_t, libhdf5 1.10's layout) whose reads are served by ObjectPages, so
// the superblock, object headers, B-trees and heaps libhdf5 reads in small scattered
// pieces cost a few page-sized requests, each page fetched once. Debian's libhdf5 has no
// ROS3 driver usable for HTTPS with a private CA, nor for S3-compatible or other stores.
//
// Values do not go through the driver page by page: H5Source finds where each chunk lies
// (locate_raw_reads) and fetches the chunks itself, many at once. All of this is called
// under h5::library_lock().
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/store/object_pages.hpp"

namespace b2lazy::h5 {

// H5Fopen (read-only) of the HDF5 file `pages` reads; `url` names it in libhdf5's view and
// in messages. As H5Fopen: < 0 on failure, then last_error() holds why (a store's IOError
// message — the URL, the range — when a read failed).
hid_t open_in_pages(const std::shared_ptr<ObjectPages>& pages, const std::string& url);

// A raw-data read libhdf5 made through the driver: file offset and length.
struct RawRead {
  int64_t offset = 0, length = 0;
};

// Runs `call` (libhdf5 calls) with raw-data reads through the driver recorded into `out`
// and not made: their buffers are left as they are. H5Dread_chunk called so finds a
// chunk's place in the file as libhdf5's own read finds it (a search of the chunk index,
// read through pages), without fetching its bytes. Metadata reads are made as usual.
void locate_raw_reads(const std::function<void()>& call, std::vector<RawRead>& out);

// What the last store read through the driver that failed said (its IOError: the URL,
// the status), then forgotten; empty when none failed since the last call. libhdf5 may
// take a failed read of its chunk index for a chunk not stored: the caller asks here so
// that a store's failure is never read as the fill value.
std::string take_store_failure();

}  // namespace b2lazy::h5
