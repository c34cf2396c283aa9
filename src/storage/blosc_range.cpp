#include "storage/blosc_range.hpp"

#include <blosc2.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "b2lazy/error.hpp"
#include "runtime/scratch.hpp"

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

// Items [start, start + n) of the Blosc buffer `chunk` (`cbytes` long), one getitem per
// block (C-Blosc2 3.3.5 returns wrong values for a range across several blocks when one
// of them is a run-length "special" block, as for b2nd chunks).
void getitems(const BloscRangePlan& plan, const uint8_t* chunk, int32_t cbytes, int64_t start, int64_t n,
              int64_t block_items, size_t isz, void* dst, ThreadState& ts) {
  static const char key = 0;  // this reader's own decompression context per worker
  blosc2_context* dctx = ts.dctx_for(&key, nullptr, 1);
  for (int64_t i = start; i < start + n;) {
    const int64_t e = std::min(start + n, (i / block_items + 1) * block_items);
    const int64_t want = (e - i) * static_cast<int64_t>(isz);
    const int rc = blosc2_getitem_ctx(dctx, chunk, cbytes, static_cast<int>(i), static_cast<int>(e - i),
                                      static_cast<char*>(dst) + (i - start) * static_cast<int64_t>(isz),
                                      static_cast<int32_t>(want));
    if (rc != want)
      throw IOError("'" + plan.where() + "': Blosc: cannot decompress" +
                    std::string(rc < 0 ? std::string(" (") + print_error(rc) + ")" : ""));
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
  for (size_t b = 0; b < starts_.size(); ++b)
    put32(out + header_len_ + 4 * b, static_cast<uint32_t>(table));  // (never read)
  int64_t at = table;
  for (int64_t b : blocks) {
    copy(b, out + at);
    put32(out + header_len_ + 4 * b, static_cast<uint32_t>(at));
    at += extent(b).second - extent(b).first;
  }
}

BloscRangePlan::BloscRangePlan(int64_t size, int64_t expected_bytes, size_t itemsize, std::string where, int64_t start,
                               int64_t n, void* direct, Alloc alloc)
    : size_(size),
      expected_(expected_bytes),
      start_(start),
      n_(n),
      isz_(itemsize),
      where_(std::move(where)),
      direct_(direct),
      alloc_(std::move(alloc)) {
  if (n_ <= 0) {
    step_ = Step::Done;
    return;
  }
  if (size_ >= 0 && size_ < static_cast<int64_t>(kHeader)) damaged("not a Blosc buffer (too short)");
  want(0, kHeader, header_);
}

uint8_t* BloscRangePlan::buffer(size_t n) {
  if (alloc_) return alloc_(n);
  owned_.emplace_back(n);
  return owned_.back().data();
}

void BloscRangePlan::damaged(const std::string& what) const { throw IOError("'" + where_ + "': Blosc: " + what); }

void BloscRangePlan::want(int64_t at, int64_t len, uint8_t* dst) {
  const int64_t end = cbytes_ > 0 ? cbytes_ : size_;  // (the buffer's end, once known)
  if (at < 0 || len < 0 || (end >= 0 && (at > end || len > end - at)))
    damaged("a block lies outside the buffer (a damaged file)");
  wants_.push_back({at, len, dst});
}

void BloscRangePlan::advance() {
  wants_.clear();
  switch (step_) {
    case Step::Header: after_header(); break;
    case Step::Table: after_table(); break;
    default: step_ = Step::Done;
  }
}

void BloscRangePlan::after_header() {
  const uint8_t* h = header_;
  nbytes_ = get32(h + 4), blocksize_ = get32(h + 8);
  const int64_t cbytes = get32(h + 12);
  const int64_t isz = static_cast<int64_t>(isz_);
  if (nbytes_ != expected_)
    damaged("holds " + std::to_string(nbytes_) + " bytes, expected " + std::to_string(expected_));
  if ((size_ >= 0 && cbytes > size_) || cbytes < static_cast<int64_t>(kHeader))
    damaged("truncated: " + std::to_string(size_) + " of " + std::to_string(cbytes) + " bytes");
  cbytes_ = cbytes;
  if (start_ < 0 || (start_ + n_) * isz > nbytes_) damaged("a range beyond the chunk");
  if (h[2] & kMemcpyed && h[0] <= 2) {  // stored as it is after the header
    read_ = step_ = Step::Run;
    data_ = direct_ ? static_cast<uint8_t*>(direct_) : buffer(static_cast<size_t>(n_ * isz));
    want(static_cast<int64_t>(kHeader) + start_ * isz, n_ * isz, data_);
    return;
  }
  block_items_ = blocksize_ / isz;
  if (h[0] > 2 || (h[2] & kExtendedHeader) == kExtendedHeader || blocksize_ <= 0 || blocksize_ % isz != 0) {
    // A later format (or an odd block size): the whole buffer, then the items asked for.
    if (block_items_ <= 0) damaged("a block smaller than an item");
    read_ = step_ = Step::Whole;
    data_ = buffer(static_cast<size_t>(cbytes_));
    want(0, cbytes_, data_);
    return;
  }
  nblocks_ = (nbytes_ + blocksize_ - 1) / blocksize_;
  if (static_cast<int64_t>(kHeader) + 4 * nblocks_ > cbytes_) damaged("truncated block table");
  step_ = Step::Table;
  table_ = buffer(static_cast<size_t>(4 * nblocks_));
  want(kHeader, 4 * nblocks_, table_);
}

void BloscRangePlan::after_table() {
  // The header, the block starts, then the blocks touched, packed after them: a smaller
  // Blosc buffer whose untouched blocks are never read.
  const BlockExtents extents(table_, nblocks_, kHeader, cbytes_, where_);
  b0_ = start_ / block_items_, b1_ = (start_ + n_ - 1) / block_items_;
  std::vector<int64_t> blocks;
  for (int64_t b = b0_; b <= b1_; ++b) blocks.push_back(b);
  packed_ = extents.packed_size(blocks);
  data_ = buffer(static_cast<size_t>(packed_));
  extents.pack(
      header_, blocks,
      [&](int64_t b, uint8_t* dst) {
        const auto [s0, s1] = extents.extent(b);
        // Blocks stored one after another are one read (packed one after another too).
        if (!wants_.empty() && wants_.back().at + wants_.back().len == s0) wants_.back().len += s1 - s0;
        else want(s0, s1 - s0, dst);
      },
      data_);
  read_ = step_ = Step::Blocks;
}

int64_t BloscRangePlan::decode(void* dst, ThreadState& ts) {
  if (n_ <= 0) return 0;
  if (step_ != Step::Done || !wants_.empty()) throw std::logic_error("BloscRangePlan::decode before its reads");
  const int64_t isz = static_cast<int64_t>(isz_);
  switch (read_) {
    case Step::Run:
      if (dst != data_) std::memcpy(dst, data_, static_cast<size_t>(n_ * isz));
      return n_ * isz;
    case Step::Whole:
      getitems(*this, data_, static_cast<int32_t>(cbytes_), start_, n_, block_items_, isz_, dst, ts);
      return std::min(nbytes_, ((start_ + n_ - 1) / block_items_ - start_ / block_items_ + 1) * blocksize_);
    default:
      getitems(*this, data_, static_cast<int32_t>(packed_), start_, n_, block_items_, isz_, dst, ts);
      return std::min(nbytes_ - b0_ * blocksize_, (b1_ - b0_ + 1) * blocksize_);
  }
}

int64_t read_blosc_range(const BloscRangeRead& in, int64_t start, int64_t n, void* dst, ThreadState& ts) {
  if (n <= 0) return 0;
  ScratchScope scope(ts.scratch);
  BloscRangePlan plan(in.size, in.expected_bytes, in.itemsize, in.where, start, n, dst,
                      [&](size_t bytes) { return scope.alloc_n<uint8_t>(bytes); });
  while (!plan.wants().empty()) {
    for (const auto& w : plan.wants())
      for (int64_t done = 0; done < w.len;) {
        const ssize_t r = ::pread(in.fd, w.dst + done, static_cast<size_t>(w.len - done), in.offset + w.at + done);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) throw IOError("'" + in.where + "': cannot read (" + std::strerror(errno) + ")");
        if (r == 0) throw IOError("'" + in.where + "': shorter than expected (changed while read?)");
        done += r;
      }
    plan.advance();
  }
  return plan.decode(dst, ts);
}

}  // namespace b2lazy
