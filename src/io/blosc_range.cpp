#include "io/blosc_range.hpp"

#include <blosc2.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "b2lazy/error.hpp"
#include "exec/scratch.hpp"

namespace b2lazy {

namespace {

// Blosc's chunk format, version 2 (C-Blosc 1, which Zarr's numcodecs writes): a 16-byte
// header (versions, flags, typesize, then little-endian int32 nbytes, blocksize, cbytes),
// an int32 start per block, the blocks. Later versions have a 32-byte header and may have
// no block starts (special chunks): those are read whole.
constexpr size_t kHeader = 16;
constexpr uint8_t kMemcpyed = 0x2, kExtendedHeader = 0x5;

uint32_t get32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}
void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

void pread_all(const BloscRangeRead& in, int64_t at, int64_t len, void* dst) {
  if (at < 0 || len < 0 || at > in.size || len > in.size - at)
    throw IOError("'" + in.where + "': Blosc: a block lies outside the buffer (a damaged file)");
  auto* p = static_cast<uint8_t*>(dst);
  for (int64_t done = 0; done < len;) {
    const ssize_t r = ::pread(in.fd, p + done, static_cast<size_t>(len - done), in.offset + at + done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw IOError("'" + in.where + "': cannot read (" + std::strerror(errno) + ")");
    if (r == 0) throw IOError("'" + in.where + "': shorter than expected (changed while read?)");
    done += r;
  }
}

[[noreturn]] void damaged(const BloscRangeRead& in, const std::string& what) {
  throw IOError("'" + in.where + "': Blosc: " + what);
}

// Items [start, start + n) of the Blosc buffer `chunk` (`cbytes` long), one getitem per
// block (C-Blosc2 3.3.5 returns wrong values for a range across several blocks when one
// of them is a run-length "special" block, as for b2nd chunks).
void getitems(const BloscRangeRead& in, const uint8_t* chunk, int32_t cbytes, int64_t start, int64_t n,
              int64_t block_items, void* dst, ThreadState& ts) {
  static const char key = 0;  // this reader's own decompression context per worker
  blosc2_context* dctx = ts.dctx_for(&key, nullptr, 1);
  for (int64_t i = start; i < start + n;) {
    const int64_t e = std::min(start + n, (i / block_items + 1) * block_items);
    const int64_t want = (e - i) * static_cast<int64_t>(in.itemsize);
    const int rc = blosc2_getitem_ctx(dctx, chunk, cbytes, static_cast<int>(i), static_cast<int>(e - i),
                                      static_cast<char*>(dst) + (i - start) * static_cast<int64_t>(in.itemsize),
                                      static_cast<int32_t>(want));
    if (rc != want) damaged(in, "cannot decompress" + std::string(rc < 0 ? std::string(" (") + print_error(rc) + ")" : ""));
    i = e;
  }
}

}  // namespace

BlockExtents::BlockExtents(const uint8_t* table, int64_t nblocks, int64_t header_len, int64_t cbytes,
                           const std::string& where)
    : header_len_(header_len), cbytes_(cbytes) {
  starts_.resize(static_cast<size_t>(nblocks));
  const int64_t end = table_end();
  for (int64_t b = 0; b < nblocks; ++b) {
    const int64_t s = get32(table + 4 * b);
    if (s < end || s >= cbytes)
      throw IOError("'" + where + "': Blosc: block " + std::to_string(b) + " starts outside the buffer");
    starts_[static_cast<size_t>(b)] = s;
  }
  sorted_ = starts_;
  std::sort(sorted_.begin(), sorted_.end());
}

std::pair<int64_t, int64_t> BlockExtents::extent(int64_t b) const {
  const int64_t s = starts_.at(static_cast<size_t>(b));
  auto it = std::upper_bound(sorted_.begin(), sorted_.end(), s);
  return {s, it == sorted_.end() ? cbytes_ : *it};
}

int64_t BlockExtents::packed_size(const std::vector<int64_t>& blocks) const {
  int64_t n = table_end();
  for (int64_t b : blocks) n += extent(b).second - extent(b).first;
  return n;
}

void BlockExtents::pack(const uint8_t* header, const std::vector<int64_t>& blocks,
                        const std::function<void(int64_t b, uint8_t* dst)>& copy, uint8_t* out) const {
  const int64_t table = table_end();
  std::memcpy(out, header, static_cast<size_t>(header_len_));
  put32(out + 12, static_cast<uint32_t>(packed_size(blocks)));
  for (size_t b = 0; b < starts_.size(); ++b) put32(out + header_len_ + 4 * b, static_cast<uint32_t>(table));  // (never read)
  int64_t at = table;
  for (int64_t b : blocks) {
    copy(b, out + at);
    put32(out + header_len_ + 4 * b, static_cast<uint32_t>(at));
    at += extent(b).second - extent(b).first;
  }
}

int64_t read_blosc_range(const BloscRangeRead& in, int64_t start, int64_t n, void* dst, ThreadState& ts) {
  if (n <= 0) return 0;
  const int64_t isz = static_cast<int64_t>(in.itemsize);
  uint8_t h[kHeader];
  if (in.size < static_cast<int64_t>(kHeader)) damaged(in, "not a Blosc buffer (too short)");
  pread_all(in, 0, kHeader, h);
  const int64_t nbytes = get32(h + 4), blocksize = get32(h + 8), cbytes = get32(h + 12);
  if (nbytes != in.expected_bytes)
    damaged(in, "holds " + std::to_string(nbytes) + " bytes, expected " + std::to_string(in.expected_bytes));
  if (cbytes > in.size || cbytes < static_cast<int64_t>(kHeader))
    damaged(in, "truncated: " + std::to_string(in.size) + " of " + std::to_string(cbytes) + " bytes");
  if (start < 0 || (start + n) * isz > nbytes) damaged(in, "a range beyond the chunk");
  if (h[2] & kMemcpyed && h[0] <= 2) {  // stored as it is after the header
    pread_all(in, static_cast<int64_t>(kHeader) + start * isz, n * isz, dst);
    return n * isz;
  }
  ScratchScope scope(ts.scratch);
  const int64_t block_items = blocksize / isz;
  if (h[0] > 2 || (h[2] & kExtendedHeader) == kExtendedHeader || blocksize <= 0 || blocksize % isz != 0) {
    // A later format (or an odd block size): the whole buffer, then the items asked for.
    auto* chunk = scope.alloc_n<uint8_t>(static_cast<size_t>(cbytes));
    pread_all(in, 0, cbytes, chunk);
    if (block_items <= 0) damaged(in, "a block smaller than an item");
    getitems(in, chunk, static_cast<int32_t>(cbytes), start, n, block_items, dst, ts);
    return std::min(nbytes, ((start + n - 1) / block_items - start / block_items + 1) * blocksize);
  }
  // The header, the block starts, then the blocks touched, packed after them: a smaller
  // Blosc buffer whose untouched blocks are never read.
  const int64_t nblocks = (nbytes + blocksize - 1) / blocksize, table = static_cast<int64_t>(kHeader) + 4 * nblocks;
  if (table > cbytes) damaged(in, "truncated block table");
  std::vector<uint8_t> starts_raw(static_cast<size_t>(4 * nblocks));
  pread_all(in, kHeader, 4 * nblocks, starts_raw.data());
  const BlockExtents extents(starts_raw.data(), nblocks, kHeader, cbytes, in.where);
  const int64_t b0 = start / block_items, b1 = (start + n - 1) / block_items;
  std::vector<int64_t> blocks;
  for (int64_t b = b0; b <= b1; ++b) blocks.push_back(b);
  const int64_t packed = extents.packed_size(blocks);
  auto* chunk = scope.alloc_n<uint8_t>(static_cast<size_t>(packed));
  extents.pack(h, blocks, [&](int64_t b, uint8_t* dst) {
    const auto [s0, s1] = extents.extent(b);
    pread_all(in, s0, s1 - s0, dst);
  }, chunk);
  getitems(in, chunk, static_cast<int32_t>(packed), start, n, block_items, dst, ts);
  return std::min(nbytes - b0 * blocksize, (b1 - b0 + 1) * blocksize);
}

}  // namespace b2lazy
