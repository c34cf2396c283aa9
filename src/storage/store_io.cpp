#include "storage/store_io.hpp"

#include <blosc2.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>
#include <new>

#include "b2lazy/error.hpp"
#include "runtime/fetch_cache.hpp"
#include "storage/b2nd_validate.hpp"
#include "storage/blosc2_util.hpp"
#include "storage/blosc_range.hpp"
#include "storage/pinned_io.hpp"

namespace b2lazy {

namespace {
constexpr uint8_t kStoreIoId = 225;  // C-Blosc2 keeps 160..255 for run-time backends
constexpr char kStoreIoName[] = "b2lazy-store";
constexpr int64_t kHeadRead = int64_t(64) << 10;   // the first read: a frame's header fits
constexpr int64_t kIndexLimit = int64_t(1) << 30;  // header or index + trailer beyond this: refused
constexpr int64_t kHdr = BLOSC_EXTENDED_HEADER_LENGTH;

int64_t big_endian(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | p[i];
  return static_cast<int64_t>(v);
}

std::vector<uint8_t> read_range(ByteStore& store, const std::string& url, int64_t at, int64_t len) {
  auto parts = store.read("", {ByteRange{at, len}});
  if (!parts || parts->size() != 1 || static_cast<int64_t>((*parts)[0].size()) != len)
    throw IOError("'" + url + "': disappeared or changed while it was read");
  return std::move((*parts)[0]);
}
}  // namespace

// The callbacks C-Blosc2 calls while it opens a frame of a store (and for anything it
// reads later on its own: a copy of the frame).
struct StoreIO {
  static void* open(const char*, const char* mode, void* params) {
    if (!params || !mode || mode[0] != 'r' || std::strchr(mode, '+')) return nullptr;  // read only
    return params;
  }
  static int close(void*) { return 0; }
  static int64_t size(void* stream) { return static_cast<StoreFrame*>(stream)->size_; }
  static int64_t read(void** ptr, int64_t size, int64_t nitems, int64_t position, void* stream) {
    if (!ptr || !*ptr || size <= 0 || nitems < 0 || position < 0 || nitems > INT64_MAX / size) return 0;
    auto& f = *static_cast<StoreFrame*>(stream);
    int64_t want = size * nitems;
    if (position >= f.size_) return 0;
    want = std::min(want, f.size_ - position);
    auto* out = static_cast<uint8_t*>(*ptr);
    if (position + want <= static_cast<int64_t>(f.head_.size())) {
      std::memcpy(out, f.head_.data() + position, static_cast<size_t>(want));
    } else if (!f.tail_.empty() && position >= f.tail_at_) {
      std::memcpy(out, f.tail_.data() + (position - f.tail_at_), static_cast<size_t>(want));
    } else {
      try {
        const auto bytes = read_range(*f.store_, f.url_, position, want);
        std::memcpy(out, bytes.data(), static_cast<size_t>(want));
      } catch (const std::exception&) {
        return 0;  // C-Blosc2 fails the read; the caller names the URL
      }
    }
    // A chunk's header among the frame's chunks: checked before C-Blosc2 allocates for it.
    ChunkFetch* fetch = ChunkFetch::armed();
    if (fetch && want == kHdr && position >= f.header_len_ && position < f.chunks_end_ &&
        !fetch->accept(out, f.chunks_end_ - position))
      return 0;
    return want / size;
  }
  static int64_t write(const void*, int64_t, int64_t, int64_t, void*) { return 0; }
  static int truncate(void*, int64_t) { return -1; }
  static int destroy(void*) { return 0; }  // the StoreFrame belongs to its sources
};

namespace {
void register_store_io() {
  static std::once_flag once;
  std::call_once(once, [] {
    ensure_blosc2();
    blosc2_io_cb cb{};
    cb.id = kStoreIoId;
    cb.name = const_cast<char*>(kStoreIoName);
    cb.is_allocation_necessary = true;
    cb.open = StoreIO::open;
    cb.close = StoreIO::close;
    cb.size = StoreIO::size;
    cb.write = StoreIO::write;
    cb.read = StoreIO::read;
    cb.truncate = StoreIO::truncate;
    cb.destroy = StoreIO::destroy;
    check_blosc2(blosc2_register_io_cb(&cb), "registering b2lazy's store I/O backend");
  });
}
}  // namespace

StoreFrame::~StoreFrame() {
  if (placeholder_fd_ >= 0) ::close(placeholder_fd_);
}

StoreFrame::Opened StoreFrame::open(const StorePtr& store) {
  register_store_io();
  Opened r;
  auto f = std::make_shared<StoreFrame>();
  f->store_ = store;
  f->url_ = store->url_of("");
  const auto info = store->stat("");
  if (!info) throw IOError("no such object: '" + f->url_ + "'");
  f->size_ = info->size;
  auto not_b2nd = [&](const std::string& why) {
    r.why = why;
    return r;
  };
  if (f->size_ < 64) return not_b2nd("too short for a Blosc2 frame (" + std::to_string(f->size_) + " bytes)");
  f->head_ = read_range(*store, f->url_, 0, std::min(f->size_, kHeadRead));
  // The frame's header: msgpack int32 header length at byte 11 (marker 0xd2 at 10), int64
  // cbytes of the chunks at byte 39 (marker 0xd3 at 38), both big-endian.
  const uint8_t* h = f->head_.data();
  if (h[10] != 0xd2 || h[38] != 0xd3) return not_b2nd("no Blosc2 frame header");
  const int64_t header_len = big_endian(h + 11, 4), cbytes = big_endian(h + 39, 8);
  if (header_len < 64 || cbytes < 0 || header_len > f->size_ || cbytes > f->size_ - header_len)
    return not_b2nd("its frame header claims " + std::to_string(header_len) + " + " + std::to_string(cbytes) +
                    " bytes of " + std::to_string(f->size_) + " stored (truncated or corrupted)");
  if (header_len > kIndexLimit || f->size_ - (header_len + cbytes) > kIndexLimit)
    return not_b2nd("a frame header or chunk index over 1 GiB");
  f->header_len_ = header_len;
  f->chunks_end_ = header_len + cbytes;
  if (static_cast<int64_t>(f->head_.size()) < header_len) f->head_ = read_range(*store, f->url_, 0, header_len);
  f->tail_at_ = f->chunks_end_;
  if (f->tail_at_ < static_cast<int64_t>(f->head_.size())) {  // all of it read already
    f->tail_.assign(f->head_.begin() + f->tail_at_, f->head_.end());
    if (static_cast<int64_t>(f->head_.size()) < f->size_) {
      auto rest = read_range(*store, f->url_, static_cast<int64_t>(f->head_.size()),
                             f->size_ - static_cast<int64_t>(f->head_.size()));
      f->tail_.insert(f->tail_.end(), rest.begin(), rest.end());
    }
  } else {
    f->tail_ = read_range(*store, f->url_, f->tail_at_, f->size_ - f->tail_at_);
  }
  f->placeholder_fd_ = ::memfd_create("b2lazy-remote-frame", MFD_CLOEXEC);
  if (f->placeholder_fd_ < 0 || ::ftruncate(f->placeholder_fd_, f->size_) != 0)
    throw IOError("'" + f->url_ + "': cannot make a placeholder file: " + std::strerror(errno));
  const std::string placeholder = "/proc/self/fd/" + std::to_string(f->placeholder_fd_);
  blosc2_io io{kStoreIoId, kStoreIoName, f.get()};
  blosc2_schunk* sc = nullptr;
  {
    ChunkFetch fetch;  // the headers read at open
    sc = blosc2_schunk_open_udio(placeholder.c_str(), &io);
    if (!sc && !fetch.problem().empty()) r.why = "a chunk " + fetch.problem();
  }
  if (!sc) {
    if (r.why.empty()) r.why = "C-Blosc2 cannot open it as a frame";
    return r;
  }
  const int64_t nchunks = sc->nchunks;
  f->blocksize_ = sc->blocksize;
  r.arr = b2nd_from_checked_schunk(sc, r.why);
  if (!r.arr) return r;
  // The chunk-offsets index: a Blosc2 chunk of nchunks int64 at the start of the tail.
  int32_t nbytes = 0, icbytes = 0, bs = 0;
  if (f->tail_.size() < static_cast<size_t>(kHdr) ||
      blosc2_cbuffer_sizes(f->tail_.data(), &nbytes, &icbytes, &bs) < 0 ||
      icbytes > static_cast<int64_t>(f->tail_.size()) || nbytes != nchunks * 8) {
    b2nd_free(r.arr);
    r.arr = nullptr;
    return not_b2nd("its chunk index is damaged");
  }
  f->offsets_.resize(static_cast<size_t>(nchunks));
  if (nchunks > 0 && blosc2_decompress(f->tail_.data(), icbytes, f->offsets_.data(), nbytes) != nbytes) {
    b2nd_free(r.arr);
    r.arr = nullptr;
    return not_b2nd("its chunk index does not decompress");
  }
  for (int64_t o : f->offsets_) {
    if (o >= cbytes) {
      b2nd_free(r.arr);
      r.arr = nullptr;
      return not_b2nd("a chunk offset beyond its chunks (" + std::to_string(o) + " of " + std::to_string(cbytes) + ")");
    }
    if (o >= 0) f->sorted_.push_back(o);
  }
  std::sort(f->sorted_.begin(), f->sorted_.end());
  f->sorted_.erase(std::unique(f->sorted_.begin(), f->sorted_.end()), f->sorted_.end());
  r.frame = std::move(f);
  return r;
}

int64_t StoreFrame::chunk_position(int64_t id) const {
  const int64_t o = offsets_.at(static_cast<size_t>(id));
  return o < 0 ? -1 : header_len_ + o;
}

int64_t StoreFrame::chunk_span(int64_t id) const {
  const int64_t o = offsets_.at(static_cast<size_t>(id));
  auto it = std::upper_bound(sorted_.begin(), sorted_.end(), o);
  return (it == sorted_.end() ? chunks_end_ - header_len_ : *it) - o;
}

StoreRead StoreFrame::first_read(const Want& w, int64_t expected_bytes) const {
  const int64_t pos = chunk_position(w.id), span = chunk_span(w.id);
  if (pos < 0) throw Error("internal: a special chunk fetched from the store");
  int64_t len = span;
  if (!w.whole) {
    const int64_t nblocks = blocksize_ > 0 ? (expected_bytes + blocksize_ - 1) / blocksize_ : 0;
    len = std::min(span, kHdr + 4 * nblocks);
  }
  return {store_, "", {ByteRange{pos, len}}};
}

int64_t StoreFrame::mean_chunk_bytes() const {
  return sorted_.empty() ? 0 : std::max<int64_t>(1, (chunks_end_ - header_len_) / static_cast<int64_t>(sorted_.size()));
}

std::vector<StoreFrame::Fetched> StoreFrame::fetch(const std::vector<Want>& wants, int64_t expected_bytes,
                                                   int32_t typesize, ThreadState& ts) const {
  std::vector<Fetched> out(wants.size());
  auto chunk_error = [&](int64_t id, const std::string& what) {
    return IOError("'" + url_ + "': chunk " + std::to_string(id) + " " + what);
  };
  // A first read's bytes: the chunk's header checked against what it must hold; its sizes.
  struct Sizes {
    int32_t nbytes = 0, cbytes = 0, blocksize = 0;
  };
  auto checked = [&](const std::optional<ByteStore::Parts>& got, int64_t id) {
    if (!got || got->size() != 1) throw IOError("'" + url_ + "': disappeared while it was read");
    const std::vector<uint8_t>& b = (*got)[0];
    const std::string problem = stored_chunk_problem(b.data(), expected_bytes, typesize, chunk_span(id));
    if (!problem.empty()) throw chunk_error(id, problem);
    Sizes z;
    blosc2_cbuffer_sizes(b.data(), &z.nbytes, &z.cbytes, &z.blocksize);
    return z;
  };
  // First batch: whole chunks, or a chunk's header and its block table. A whole chunk the
  // fetch cache holds (fetched ahead) is read whole from there and shared, not copied.
  std::vector<ByteStore::Request> first;
  std::vector<size_t> first_of;  // the wants the first batch reads
  for (size_t i = 0; i < wants.size(); ++i) {
    const Want& w = wants[i];
    StoreRead whole = first_read({w.id, true, {}}, expected_bytes);
    const bool in_cache = fetch_holds(ts, whole);
    StoreRead r = in_cache ? std::move(whole) : first_read(w, expected_bytes);
    if (r.ranges[0].length < kHdr)
      throw chunk_error(w.id, "is truncated (" + std::to_string(r.ranges[0].length) + " bytes stored)");
    if (in_cache) {
      const auto v = fetch_shared(ts, r);
      const Sizes z = checked(*v, w.id);
      const std::vector<uint8_t>& b = (**v)[0];
      if (z.cbytes > static_cast<int64_t>(b.size())) throw chunk_error(w.id, "is truncated");
      out[i].shared = v;
      out[i].at = b.data();
      out[i].size = static_cast<size_t>(z.cbytes);
      continue;
    }
    first.push_back({std::move(r.key), std::move(r.ranges)});
    first_of.push_back(i);
  }
  auto got = fetch_read_many(ts, store_, first);
  // Second batch: the blocks (or the rest of a chunk that is read whole after all).
  std::vector<ByteStore::Request> second;
  std::vector<size_t> second_of;
  std::vector<std::unique_ptr<BlockExtents>> extents(wants.size());
  std::vector<std::optional<ByteStore::Parts>> headers(wants.size());  // (the first reads, by want)
  for (size_t k = 0; k < first_of.size(); ++k) {
    const size_t i = first_of[k];
    const Want& w = wants[i];
    const Sizes z = checked(got[k], w.id);
    headers[i] = std::move(got[k]);
    std::vector<uint8_t>& b = (*headers[i])[0];
    const int32_t nbytes = z.nbytes, cbytes = z.cbytes, blocksize = z.blocksize;
    const uint8_t flags = b[BLOSC2_CHUNK_FLAGS], flags2 = b[BLOSC2_CHUNK_BLOSC2_FLAGS];
    const bool plain = ((flags2 >> 4) & BLOSC2_SPECIAL_MASK) == 0 && !(flags & BLOSC_MEMCPYED) &&
                       !(flags2 & BLOSC2_USEDICT) && !(b[BLOSC2_CHUNK_BLOSC2_FLAGS2] & BLOSC2_VL_BLOCKS);
    const int64_t nblocks = blocksize > 0 ? (nbytes + blocksize - 1) / blocksize : 0;
    if (cbytes <= static_cast<int64_t>(b.size())) {  // all of it is here
      b.resize(static_cast<size_t>(cbytes));
      out[i].bytes = std::move(b);
      continue;
    }
    if (w.whole || !plain || static_cast<int64_t>(b.size()) < kHdr + 4 * nblocks) {
      second.push_back({"", {ByteRange{chunk_position(w.id), cbytes}}});
    } else {
      extents[i] = std::make_unique<BlockExtents>(b.data() + kHdr, nblocks, kHdr, cbytes,
                                                  url_ + " (chunk " + std::to_string(w.id) + ")");
      ByteStore::Request r{"", {}};
      for (int64_t blk : w.blocks) {
        if (blk < 0 || blk >= nblocks) throw chunk_error(w.id, "has no block " + std::to_string(blk));
        const auto [s0, s1] = extents[i]->extent(blk);
        r.ranges.push_back({chunk_position(w.id) + s0, s1 - s0});
      }
      second.push_back(std::move(r));
    }
    second_of.push_back(i);
  }
  if (second.empty()) return out;
  auto more = fetch_read_many(ts, store_, second);
  for (size_t k = 0; k < second.size(); ++k) {
    const size_t i = second_of[k];
    if (!more[k]) throw IOError("'" + url_ + "': disappeared while it was read");
    ByteStore::Parts& parts = *more[k];
    if (!extents[i]) {
      out[i].bytes = std::move(parts.at(0));
      continue;
    }
    const Want& w = wants[i];
    out[i].whole = false;
    out[i].blocks = w.blocks;
    out[i].bytes.resize(static_cast<size_t>(extents[i]->packed_size(w.blocks)));
    size_t part = 0;
    extents[i]->pack((*headers[i])[0].data(), w.blocks,
                     [&](int64_t, uint8_t* dst) {
                       const auto& p = parts.at(part++);
                       std::memcpy(dst, p.data(), p.size());
                     },
                     out[i].bytes.data());
  }
  return out;
}

}  // namespace b2lazy
