// HDF5 datasets whose values are not in their own file's chunks or contiguous block:
// external storage (raw bytes in other files, read here with pread) and virtual datasets
// (VDS: regions of other datasets, read through libhdf5). Both are checked when the
// dataset is opened, so that nothing missing reads as zeros or as the fill value.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace b2lazy::h5 {

// A run of an external dataset's bytes: [start, start + size) of its C order lies in the
// file `path` at `file_offset`.
struct ExternalPart {
  std::string path;
  int64_t file_offset = 0, start = 0, size = 0;
};

// The external files of dataset `name` (in the file at `file`, whose creation property
// list is `dcpl`) that hold its `nbytes` bytes. Relative names are taken relative to the
// HDF5 file's directory (not the working directory, as libhdf5 would), so a file and its
// external data move together. IOError naming the dataset and the external file when one
// is missing, not a regular file, or shorter than the data it should hold. Under the lock.
std::vector<ExternalPart> external_parts(hid_t dcpl, const std::string& file, int64_t nbytes, const std::string& name);

// Bytes [start, start + n) of an external dataset's C order into `dst`. IOError naming
// `where` and the external file when it cannot be read whole.
void read_external(const std::vector<ExternalPart>& parts, int64_t start, size_t n, void* dst,
                   const std::string& where);

// Checks that every source of the virtual dataset `name` (in the open file `file`, at
// `path`; creation properties `dcpl`) is there: the file opens as HDF5, found where
// libhdf5 looks (the VDS file's directory, then the working directory, after
// HDF5_VDS_PREFIX), holds the dataset, and the dataset covers the region mapped from it.
// libhdf5 would read what is missing as the fill value. Sources that are virtual datasets
// themselves are checked in turn (up to a few levels); sources with external storage and
// printf-style source names (unlimited mappings) are refused. Under the lock.
void check_virtual(hid_t dcpl, hid_t file, const std::string& path, const std::string& name, int depth = 0);

}  // namespace b2lazy::h5
