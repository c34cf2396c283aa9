// H5Source's libhdf5 identifiers (h5_source.cpp, h5_store_source.cpp): closed under the lock.
#pragma once
#include <hdf5.h>

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

}  // namespace b2lazy
