// Checks that a b2nd array's metadata and chunks are what its metalayer says, so that a
// corrupted or inconsistent file gives an error instead of garbage or stale memory.
//
// C-Blosc2 checks each field of the b2nd metalayer on its own, but not the metalayer against
// the frame (chunk size, number of chunks), and a chunk that decompresses to fewer bytes
// than asked is a success for it. These checks close both gaps.
#pragma once
#include <b2nd.h>
#include <blosc2.h>

#include <cstdint>
#include <string>

namespace b2lazy {

// What is inconsistent in super-chunk `sc` as a b2nd array — its metalayer is missing or
// malformed, shape/chunks/blocks are not sane, or the frame's typesize, chunk size, block
// size, number of chunks or total size disagree with them — or "" when it is consistent.
std::string b2nd_inconsistency(blosc2_schunk* sc);

// b2nd_from_schunk(sc) after b2nd_inconsistency(sc) found nothing. Takes ownership of `sc`:
// on failure it is freed, nullptr is returned and `why` says what is wrong.
// (b2nd_from_schunk leaks on a malformed metalayer; checking first keeps it off that path.)
b2nd_array_t* b2nd_from_checked_schunk(blosc2_schunk* sc, std::string& why);

// What is wrong with a chunk whose 32-byte Blosc2 header is `header`, as the start of a
// "holds"/"has" sentence ("" when nothing): it holds other than `expected_bytes`
// uncompressed bytes of items of `typesize` bytes. The caller names the array and chunk.
std::string header_disagreement(const uint8_t* header, int64_t expected_bytes, int32_t typesize);

// Before C-Blosc2 allocates what a stored chunk's header claims (storage/pinned_io.hpp):
// what is wrong with the 32-byte `header` of a chunk of which `available` bytes are stored
// (to the end of its file or of the frame's chunks), or "". It disagrees with the array
// (header_disagreement; skipped when `expected_bytes` < 0, i.e. unknown at open), claims
// more compressed bytes than are stored, claims more blocks than its bytes can index, or
// is a plain copy shorter than its uncompressed bytes. Phrased like header_disagreement.
std::string stored_chunk_problem(const uint8_t* header, int64_t expected_bytes, int32_t typesize, int64_t available);

// Before decompressing chunk `id` of `name` (a buffer of `len` bytes from
// blosc2_schunk_get_chunk / get_lazychunk): its header is readable and says it holds
// `expected_bytes` uncompressed bytes of items of `typesize` bytes (getitem counts items in
// the chunk's typesize). Throws IOError naming `name` and the chunk.
void check_chunk_header(const uint8_t* chunk, int32_t len, int64_t expected_bytes, int32_t typesize,
                        const std::string& name, int64_t id);
// After a decompression or getitem of chunk `id`: `rc` is the `expected_bytes` asked for.
void check_decompressed(int rc, int64_t expected_bytes, const std::string& name, int64_t id);
// Is the chunk a run of uninitialised values (C-Blosc2 leaves the destination as it was)?
bool chunk_is_uninit(const uint8_t* chunk, int32_t len);

}  // namespace b2lazy
