// Blosc chunks in the original (Blosc1) format, which Zarr's "blosc" codec means and
// numcodecs (so zarr-python) reads. C-Blosc2 reads that format but writes its own newer
// header, except through its global compressor under a process-wide lock and an
// environment variable; this writes the Blosc1 layout directly, per worker thread.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace b2lazy::zarr {

// Compressors Blosc1 chunks may use that b2lazy writes (through liblz4, zlib, libzstd).
bool blosc1_writes(const std::string& cname);

// Appends to `out` the Blosc1 chunk of `n` bytes of `typesize`-byte items, the bytes
// C-Blosc 1.x writes with one thread (numcodecs, so zarr-python and Dask, where the
// compressor libraries' versions agree): its block size, one stream per item byte when it
// splits, each block byte-shuffled when `shuffle`.
void blosc1_compress(const uint8_t* src, size_t n, size_t typesize, const std::string& cname, int clevel, bool shuffle,
                     std::vector<uint8_t>& out);

}  // namespace b2lazy::zarr
