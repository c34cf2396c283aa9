// HDF5 filter pipelines decoded by b2lazy in the worker threads (a chunk's raw bytes are
// read with pread, outside libhdf5): deflate, shuffle, fletcher32, zstd (32015), LZ4
// (32004), Blosc (32001) and Blosc2 (32026) — the filters h5py and hdf5plugin write.
// Others go through libhdf5 (H5Dread, serialized).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace b2lazy {

class ThreadState;

namespace h5 {

struct Filter {
  int id = 0;
  std::vector<unsigned> cd;  // the filter's client data values
  std::string name;
};

// Can b2lazy decode every filter of this pipeline itself?
bool decodes(const std::vector<Filter>& pipeline);

// Undoes the pipeline (the filters not skipped in `mask`: bit i set = filter i was not
// applied to this chunk) on the `n` stored bytes at `data`, the chunk into `dst`, which it
// must fill exactly (`dst_n` bytes); `itemsize` for shuffle. The last step writes into
// `dst` itself. IOError naming `where` on damaged data.
void decode(const std::vector<Filter>& pipeline, unsigned mask, size_t itemsize, const uint8_t* data, size_t n,
            void* dst, size_t dst_n, const std::string& where, ThreadState& ts);

}  // namespace h5
}  // namespace b2lazy
