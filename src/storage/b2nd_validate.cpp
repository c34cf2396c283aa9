#include "storage/b2nd_validate.hpp"

#include <cstdlib>
#include <memory>

#include "b2lazy/box.hpp"
#include "b2lazy/error.hpp"

namespace b2lazy {

namespace {

// a * b into `out`; false when it overflows int64.
bool mul(int64_t a, int64_t b, int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// The b2nd (or older caterva) metalayer of `sc`, parsed by C-Blosc2; "" or what is wrong.
struct Meta {
  int8_t ndim = 0;
  int64_t shape[B2ND_MAX_DIM] = {};
  int32_t chunks[B2ND_MAX_DIM] = {};
  int32_t blocks[B2ND_MAX_DIM] = {};
};

std::string read_meta(blosc2_schunk* sc, Meta& m) {
  uint8_t* raw = nullptr;
  int32_t len = 0;
  if (blosc2_meta_exists(sc, "b2nd") >= 0) {
    if (blosc2_meta_get(sc, "b2nd", &raw, &len) < 0) return "its b2nd metalayer cannot be read";
  } else if (blosc2_meta_exists(sc, "caterva") >= 0) {
    if (blosc2_meta_get(sc, "caterva", &raw, &len) < 0) return "its caterva metalayer cannot be read";
  } else {
    return "it has no b2nd metalayer";
  }
  std::unique_ptr<uint8_t, FreeDeleter> content(raw);
  if (!raw || len <= 0) return "its b2nd metalayer is empty";
  char* dtype = nullptr;
  int8_t dtype_format = 0;
  int rc = b2nd_deserialize_meta(raw, len, &m.ndim, m.shape, m.chunks, m.blocks, &dtype, &dtype_format);
  std::free(dtype);  // the dtype is checked against the typesize when the array is built
  if (rc < 0) return "its b2nd metalayer is malformed";
  if (m.ndim < 0 || m.ndim > B2ND_MAX_DIM)
    return "its b2nd metalayer has ndim " + std::to_string(m.ndim) + " (0.." + std::to_string(B2ND_MAX_DIM) + ")";
  return "";
}

}  // namespace

std::string b2nd_inconsistency(blosc2_schunk* sc) {
  if (!sc) return "it is not a Blosc2 frame";
  Meta m;
  std::string why = read_meta(sc, m);
  if (!why.empty()) return why;
  const Shape shape(m.shape, m.shape + m.ndim), chunks(m.chunks, m.chunks + m.ndim),
      blocks(m.blocks, m.blocks + m.ndim);
  const std::string geometry =
      "shape " + shape_str(shape) + ", chunks " + shape_str(chunks) + ", blocks " + shape_str(blocks);
  // Axis by axis: shape >= 0; a chunk extent of 0 only on an empty axis (python-blosc2
  // writes chunks (0,) for empty arrays); blocks inside chunks.
  int64_t nchunks = 1, ext_items = 1, block_items = 1;
  for (int d = 0; d < m.ndim; ++d) {
    const int64_t s = m.shape[d], c = m.chunks[d], b = m.blocks[d];
    if (s < 0 || c < 0 || b < 0) return "its metalayer has a negative extent: " + geometry;
    if (c == 0 && s != 0) return "its metalayer has a chunk extent of 0 on a non-empty axis: " + geometry;
    if (c > 0 && (b == 0 || b > c)) return "its metalayer has blocks that do not fit the chunks: " + geometry;
    const int64_t grid = c == 0 ? 0 : s / c + (s % c != 0);
    const int64_t ext = b == 0 ? c : (c + b - 1) / b * b;  // a chunk padded to whole blocks
    if (!mul(nchunks, grid, nchunks) || !mul(ext_items, ext, ext_items) || !mul(block_items, b, block_items))
      return "its metalayer's sizes overflow: " + geometry;
  }
  const int64_t typesize = sc->typesize;
  int64_t chunk_bytes = 0, block_bytes = 0, total_bytes = 0;
  if (typesize <= 0 || typesize > 255) return "its frame has typesize " + std::to_string(typesize);
  if (!mul(ext_items, typesize, chunk_bytes) || !mul(block_items, typesize, block_bytes) ||
      chunk_bytes > BLOSC2_MAX_BUFFERSIZE)
    return "its chunks of " + geometry + " exceed Blosc2's chunk size limit";
  if (sc->nchunks != nchunks)
    return "its frame holds " + std::to_string(sc->nchunks) + " chunks where the metalayer's " + geometry + " makes " +
           std::to_string(nchunks);
  if (nchunks == 0) return "";  // nothing to read; an empty array's frame may keep any sizes
  if (sc->chunksize != chunk_bytes)
    return "its frame's chunks hold " + std::to_string(sc->chunksize) + " bytes where the metalayer's " + geometry +
           " and typesize " + std::to_string(typesize) + " make " + std::to_string(chunk_bytes);
  if (sc->blocksize != block_bytes)
    return "its frame's blocks hold " + std::to_string(sc->blocksize) + " bytes where the metalayer's " + geometry +
           " and typesize " + std::to_string(typesize) + " make " + std::to_string(block_bytes);
  if (!mul(nchunks, chunk_bytes, total_bytes) || sc->nbytes != total_bytes)
    return "its frame holds " + std::to_string(sc->nbytes) + " uncompressed bytes where " + std::to_string(nchunks) +
           " chunks of " + std::to_string(chunk_bytes) + " make " + std::to_string(nchunks * chunk_bytes);
  return "";
}

b2nd_array_t* b2nd_from_checked_schunk(blosc2_schunk* sc, std::string& why) {
  why = b2nd_inconsistency(sc);
  b2nd_array_t* arr = nullptr;
  if (why.empty() && (b2nd_from_schunk(sc, &arr) < 0 || !arr)) {
    arr = nullptr;
    why = "C-Blosc2 does not accept its b2nd metalayer";
  }
  if (!arr && sc) blosc2_schunk_free(sc);
  return arr;
}

std::string header_disagreement(const uint8_t* header, int64_t expected_bytes, int32_t typesize) {
  int32_t nbytes = 0, cbytes = 0, blocksize = 0;
  if (blosc2_cbuffer_sizes(header, &nbytes, &cbytes, &blocksize) < 0) return "has no valid Blosc2 chunk header";
  if (nbytes != expected_bytes)
    return "holds " + std::to_string(nbytes) + " bytes where the array's chunks hold " +
           std::to_string(expected_bytes) + " (corrupted or inconsistent file)";
  if (header[BLOSC2_CHUNK_TYPESIZE] != typesize)
    return "has items of " + std::to_string(header[BLOSC2_CHUNK_TYPESIZE]) + " bytes where the array's are " +
           std::to_string(typesize) + " (corrupted or inconsistent file)";
  return "";
}

std::string stored_chunk_problem(const uint8_t* header, int64_t expected_bytes, int32_t typesize, int64_t available) {
  int32_t nbytes = 0, cbytes = 0, blocksize = 0;
  if (blosc2_cbuffer_sizes(header, &nbytes, &cbytes, &blocksize) < 0 || nbytes < 0 ||
      cbytes < BLOSC_EXTENDED_HEADER_LENGTH)
    return "has no valid Blosc2 chunk header (corrupted file)";
  if (expected_bytes >= 0) {
    std::string why = header_disagreement(header, expected_bytes, typesize);
    if (!why.empty()) return why;
  }
  if (cbytes > available)
    return "claims " + std::to_string(cbytes) + " compressed bytes, more than the " + std::to_string(available) +
           " stored from its start (corrupted file)";
  // Run-length specials are a header (and one value); C-Blosc2 reads nothing more of them.
  if (((header[BLOSC2_CHUNK_BLOSC2_FLAGS] >> 4) & BLOSC2_SPECIAL_MASK) != 0) return "";
  const int64_t n = nbytes, c = cbytes;
  if (header[BLOSC2_CHUNK_FLAGS] & BLOSC_MEMCPYED) {
    if (n + BLOSC_EXTENDED_HEADER_LENGTH > c)
      return "is stored uncompressed in " + std::to_string(c) + " bytes, too few for its " + std::to_string(n) +
             " bytes (corrupted file)";
    return "";
  }
  // Compressed blocks: their start offsets (int32 each) follow the header.
  const bool variable_blocks = (header[BLOSC2_CHUNK_BLOSC2_FLAGS2] & BLOSC2_VL_BLOCKS) != 0;
  if (blocksize <= 0) return "has a block size of " + std::to_string(blocksize) + " (corrupted file)";
  const int64_t nblocks = variable_blocks ? blocksize : n / blocksize + (n % blocksize != 0);
  if (nblocks * 4 > c - BLOSC_EXTENDED_HEADER_LENGTH)
    return "has " + std::to_string(nblocks) + " blocks, more than its " + std::to_string(c) +
           " bytes can index (corrupted file)";
  return "";
}

void check_chunk_header(const uint8_t* chunk, int32_t len, int64_t expected_bytes, int32_t typesize,
                        const std::string& name, int64_t id) {
  const std::string where = "'" + name + "': chunk " + std::to_string(id);
  if (!chunk || len < BLOSC_MIN_HEADER_LENGTH) throw IOError(where + " is corrupted (no valid Blosc2 chunk header)");
  int32_t nbytes = 0, cbytes = 0, blocksize = 0;
  if (blosc2_cbuffer_sizes(chunk, &nbytes, &cbytes, &blocksize) < 0)
    throw IOError(where + " is corrupted (no valid Blosc2 chunk header)");
  std::string why = header_disagreement(chunk, expected_bytes, typesize);
  if (!why.empty()) throw IOError(where + " " + why);
}

void check_decompressed(int rc, int64_t expected_bytes, const std::string& name, int64_t id) {
  const std::string where = "'" + name + "': chunk " + std::to_string(id);
  if (rc < 0) throw IOError(where + " is corrupted (" + print_error(rc) + ")");
  if (rc != expected_bytes)
    throw IOError(where + " decompressed to " + std::to_string(rc) + " bytes where " + std::to_string(expected_bytes) +
                  " were expected (corrupted file)");
}

bool chunk_is_uninit(const uint8_t* chunk, int32_t len) {
  // Blosc2's extended header (both shuffle bits set in the flags byte) holds the special
  // value kind in bits 4-6 of its last byte.
  if (len < BLOSC_EXTENDED_HEADER_LENGTH) return false;
  const uint8_t flags = chunk[BLOSC2_CHUNK_FLAGS];
  if ((flags & (BLOSC_DOSHUFFLE | BLOSC_DOBITSHUFFLE)) != (BLOSC_DOSHUFFLE | BLOSC_DOBITSHUFFLE)) return false;
  return ((chunk[BLOSC2_CHUNK_BLOSC2_FLAGS] >> 4) & BLOSC2_SPECIAL_MASK) == BLOSC2_SPECIAL_UNINIT;
}

}  // namespace b2lazy
