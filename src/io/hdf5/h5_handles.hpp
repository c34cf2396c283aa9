// H5Source's libhdf5 identifiers (h5_source.cpp, h5_store_source.cpp): closed under the lock.
#pragma once
#include <hdf5.h>

#include <memory>

#include "io/hdf5/h5_library.hpp"
#include "io/hdf5/h5_source.hpp"

namespace b2lazy {

struct H5Source::Handles {
  hid_t file = -1, dset = -1, mem_type = -1;
  ~Handles() {
    h5::H5Lock g;
    if (mem_type >= 0) H5Tclose(mem_type);
    if (dset >= 0) H5Dclose(dset);
    if (file >= 0) H5Fclose(file);
  }
};

// Handles being made under the library lock, released on failure: ~Handles takes the
// lock itself, so the caller's is let go around their release.
struct HandlesMadeUnderLock {
  std::unique_ptr<H5Source::Handles>& h;
  ~HandlesMadeUnderLock() {
    if (!h) return;
    h5::library_lock().unlock();
    h.reset();
    h5::library_lock().lock();
  }
};

}  // namespace b2lazy
