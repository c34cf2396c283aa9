// HDF5 filter pipelines decoded by b2lazy in the worker threads (a chunk's raw bytes are
// read with pread, outside libhdf5): deflate, shuffle, fletcher32 (checksum verified), zstd (32015), LZ4
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

// Can b2lazy decode every filter of this pipeline itself? (At most one compressor, so
// that the size of every step's output is known before it is decoded: a damaged header
// cannot make a step allocate more than the chunk's values plus a checksum.)
bool decodes(const std::vector<Filter>& pipeline);
// Node::decode_cost of a pipeline: Deflate, or filters libhdf5 decodes for b2lazy, are slow.
double decode_cost(const std::vector<Filter>& pipeline);

// The most bytes a stored chunk of `raw` bytes of values may take (a compressor's
// overhead on incompressible data, a Blosc2 frame's header): more is damage.
inline int64_t max_stored(int64_t raw) { return raw + raw / 2 + (int64_t(1) << 20); }

// Undoes the pipeline (the filters not skipped in `mask`: bit i set = filter i was not
// applied to this chunk) on the `n` stored bytes at `data`, the chunk into `dst`, which it
// must fill exactly (`dst_n` bytes); `itemsize` for shuffle. The last step writes into
// `dst` itself. IOError naming `where` on damaged data.
void decode(const std::vector<Filter>& pipeline, unsigned mask, size_t itemsize, const uint8_t* data, size_t n,
            void* dst, size_t dst_n, const std::string& where, ThreadState& ts);

}  // namespace h5
}  // namespace b2lazy
