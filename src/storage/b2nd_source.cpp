#include "storage/b2nd_source.hpp"
#include "core/saturating.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "b2lazy/error.hpp"
#include "core/strided_copy.hpp"
#include "runtime/block_window.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/thread_state.hpp"
#include "storage/b2nd_validate.hpp"
#include "storage/blosc2_util.hpp"
#include "storage/pinned_io.hpp"
#include "storage/store_io.hpp"

namespace b2lazy {

namespace {
// The most a read of part of a chunk holds decompressed at once. python-blosc2 stores a
// 4096 x 4096 float64 array in 64 MiB chunks; a column strip or a tile of one (an output
// chunk of a.T @ a, a K-panel) decompressed the chunk whole, or its item range from the
// first to the last item needed (most of it), into a buffer of that size per worker.
constexpr int64_t kPieceBytes = int64_t(4) << 20;
// The most compressed bytes one fill() of a remote source fetches ahead (in one batch).
constexpr int64_t kPrefetchBytes = int64_t(64) << 20;

Shape to_shape(const int64_t* v, int n) { return Shape(v, v + n); }
Shape to_shape(const int32_t* v, int n) { return Shape(v, v + n); }

// `len` bytes in a file with no name (memfd on Linux, an unlinked temporary file
// elsewhere), reachable as /proc/self/fd/N (/dev/fd/N) while this object lives.
class AnonymousFile {
 public:
  AnonymousFile(const void* data, int64_t len, const std::string& name) {
#ifdef __linux__
    fd_ = ::memfd_create("b2lazy-cframe", MFD_CLOEXEC);
#else
    if (FILE* t = std::tmpfile()) fd_ = ::dup(::fileno(t)), std::fclose(t);
#endif
    if (fd_ < 0) throw IOError("cannot hold '" + name + "' in memory: " + std::strerror(errno));
    const auto* p = static_cast<const char*>(data);
    for (int64_t done = 0; done < len;) {
      const ssize_t n = ::write(fd_, p + done, static_cast<size_t>(std::min<int64_t>(len - done, int64_t(1) << 30)));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = errno;
        ::close(fd_);
        throw IOError("cannot hold '" + name + "' in memory: " + std::strerror(err));
      }
      done += n;
    }
  }
  ~AnonymousFile() { ::close(fd_); }
  AnonymousFile(const AnonymousFile&) = delete;
  AnonymousFile& operator=(const AnonymousFile&) = delete;
#ifdef __linux__
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }
#else
  std::string path() const { return "/dev/fd/" + std::to_string(fd_); }
#endif

 private:
  int fd_ = -1;
};
}  // namespace

std::shared_ptr<B2ndSource> B2ndSource::adopt(b2nd_array_t* arr, const std::string& name) {
  DType t;
  try {
    t = dtype_from_b2nd(arr->dtype, arr->dtype_format, arr->sc->typesize, name);
  } catch (...) {
    b2nd_free(arr);
    throw;
  }
  return std::make_shared<B2ndSource>(arr, t, to_shape(arr->shape, arr->ndim), name);
}

std::shared_ptr<B2ndSource> B2ndSource::open(const std::string& urlpath, const std::string& name, int64_t offset) {
  PinnedOpen o = PinnedOpen::open(urlpath, offset);
  if (!o.arr)
    throw IOError("cannot open '" + (name.empty() ? urlpath : name) + "' as a b2nd array" +
                  (o.why.empty() ? " (missing, corrupted or not b2nd)" : ": " + o.why));
  auto src = adopt(o.arr, name.empty() ? urlpath : name);
  src->pinned_ = std::move(o.file);
  return src;
}

std::shared_ptr<B2ndSource> B2ndSource::open_in_store(const StorePtr& store) {
  StoreFrame::Opened o = StoreFrame::open(store);
  const std::string url = store->url_of("");
  if (!o.arr)
    throw IOError("cannot open '" + url + "' as a b2nd array" +
                  (o.why.empty() ? " (corrupted or not b2nd)" : ": " + o.why));
  auto src = adopt(o.arr, url);
  src->remote_ = std::move(o.frame);
  return src;
}

StorePtr B2ndSource::store() const { return remote_ ? remote_->store() : nullptr; }

namespace {
// The chunks fill() fetched for the source being read on this thread (B2ndSource::prefetch).
struct Prefetched {
  const B2ndSource* source;
  std::map<int64_t, StoreFrame::Fetched> chunks;
  Prefetched* outer;
};
thread_local Prefetched* prefetched = nullptr;
}  // namespace

std::vector<StoreFrame::Want> B2ndSource::remote_wants(const Region& region, bool capped) const {
  const int64_t per_block = std::max<int64_t>(1, prod(blocks_));
  const int64_t per_chunk = extchunk_nitems() / per_block;
  std::map<int64_t, std::vector<int64_t>> touched;
  for_each_block(region, [&](int64_t id, const Box&, int64_t bid, const Shape&, const Shape&) {
    if (remote_->chunk_position(id) >= 0) touched[id].push_back(bid);
  });
  std::vector<StoreFrame::Want> wants;
  int64_t held = 0;
  for (auto& [id, bids] : touched) {
    std::sort(bids.begin(), bids.end());
    bids.erase(std::unique(bids.begin(), bids.end()), bids.end());
    // As read_in_pieces reads a remote source: the touched blocks, one by one.
    std::vector<int64_t> blocks = bids;
    const bool whole = static_cast<int64_t>(blocks.size()) == per_chunk;
    // At most kPrefetchBytes held (fill_bytes counts them): chunks past that are fetched
    // when read, one by one.
    held =
        sat_add(held, whole ? remote_->chunk_span(id)
                            : std::min(remote_->chunk_span(id),
                                       static_cast<int64_t>(blocks.size()) * arr_->sc->blocksize + 4 * per_chunk + 32));
    if (capped && held > kPrefetchBytes && !wants.empty()) break;
    wants.push_back({id, whole, whole ? std::vector<int64_t>{} : std::move(blocks)});
  }
  return wants;
}

void B2ndSource::store_reads(const Region& region, std::vector<StoreRead>& out) const {
  if (!remote_ || region.size() == 0 || ndim() == 0) return;
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  for (const StoreFrame::Want& w : remote_wants(region, false))
    out.push_back(remote_->first_read(w, extchunk_nitems() * isz));
}

int64_t B2ndSource::store_read_bytes() const { return remote_ ? remote_->mean_chunk_bytes() : 0; }

std::shared_ptr<void> B2ndSource::prefetch(const Region& region, ThreadState& ts) const {
  std::vector<StoreFrame::Want> wants = remote_wants(region);
  if (wants.empty()) return nullptr;
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  auto got = remote_->fetch(wants, extchunk_nitems() * isz, static_cast<int32_t>(isz), ts);
  auto* p = new Prefetched{this, {}, prefetched};
  for (size_t i = 0; i < wants.size(); ++i) p->chunks.emplace(wants[i].id, std::move(got[i]));
  prefetched = p;
  return std::shared_ptr<void>(p, [](void* q) {
    auto* pp = static_cast<Prefetched*>(q);
    prefetched = pp->outer;
    delete pp;
  });
}

const StoreFrame::Fetched& B2ndSource::remote_chunk(int64_t id, int64_t start, int64_t n, StoreFrame::Fetched& holder,
                                                    ThreadState& ts) const {
  const int64_t per_block = std::max<int64_t>(1, prod(blocks_));
  const bool whole = n == extchunk_nitems();
  const int64_t b0 = start / per_block, b1 = (start + n - 1) / per_block;
  for (Prefetched* p = prefetched; p; p = p->outer) {
    if (p->source != this) continue;
    auto it = p->chunks.find(id);
    if (it == p->chunks.end()) break;
    const StoreFrame::Fetched& f = it->second;
    bool has = f.whole;
    if (!has && !whole) {
      auto lo = std::lower_bound(f.blocks.begin(), f.blocks.end(), b0);
      has = lo != f.blocks.end() && f.blocks.end() - lo >= b1 - b0 + 1 && *lo == b0 && *(lo + (b1 - b0)) == b1;
    }
    if (has) return f;
    break;
  }
  StoreFrame::Want w{id, whole, {}};
  if (!whole)
    for (int64_t b = b0; b <= b1; ++b) w.blocks.push_back(b);
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  holder = std::move(remote_->fetch({w}, extchunk_nitems() * isz, static_cast<int32_t>(isz), ts)[0]);
  return holder;
}

std::shared_ptr<B2ndSource> B2ndSource::from_cframe(const void* data, int64_t len) {
  ensure_blosc2();
  static std::atomic<int> counter{0};
  const std::string name = "memory#" + std::to_string(counter++);
  if (len < 0) throw IOError("cannot open '" + name + "' as a b2nd array: a negative length");
  // C-Blosc2's in-memory frame reader (blosc2_schunk_from_buffer) trusts the frame: a
  // corrupt one can make it free garbage. The bytes go into an anonymous in-memory file,
  // read through the path that validates b2nd files (storage/pinned_io.hpp) and kept for
  // the source's life by its descriptor.
  AnonymousFile f(data, len, name);
  return open(f.path(), name);
}

B2ndSource::B2ndSource(b2nd_array_t* arr, DType dtype, Shape shape, std::string name)
    : Node(dtype, std::move(shape)), arr_(arr), name_(std::move(name)) {
  int n = arr->ndim;
  grid_ = ChunkGrid(this->shape(), to_shape(arr->chunkshape, n));
  blocks_ = to_shape(arr->blockshape, n);
  extchunk_ = to_shape(arr->extchunkshape, n);
  // Blocks of extent 1 along leading axes, split along one axis and whole along the
  // rest are laid out in the chunk's C order: ranges can be read without reordering.
  size_t p = 0;
  while (p < blocks_.size() && blocks_[p] == 1) ++p;
  c_order_blocks_ = true;
  for (size_t d = p + 1; d < blocks_.size(); ++d) c_order_blocks_ = c_order_blocks_ && blocks_[d] == extchunk_[d];
}

B2ndSource::~B2ndSource() { b2nd_free(arr_); }

std::optional<Blosc2Object> B2ndSource::persisted_object() const { return blosc2_object(arr_->sc); }

void B2ndSource::check_unchanged() const {
  if (pinned_ && !pinned_->unchanged()) throw IOError("'" + name_ + "': changed on disk since it was opened");
}

std::string B2ndSource::describe() const {
  return "b2nd '" + name_ + "' " + shape_str(shape()) + " " + dtype_name(dtype()) +
         " chunks=" + shape_str(grid_.chunks()) + " blocks=" + shape_str(blocks_);
}

void B2ndSource::read_items(int64_t id, int64_t start, int64_t n, void* dst, ThreadState& ts, bool counted) const {
  uint8_t* chunk = nullptr;
  bool needs_free = false;
  int cbytes;
  const bool whole = n == extchunk_nitems();
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  std::string bad_header;       // what the chunk's stored header claims wrongly (pinned_io.hpp)
  StoreFrame::Fetched fetched;  // a remote chunk (store_io.hpp)
  if (remote_ && remote_->chunk_position(id) >= 0) {
    const StoreFrame::Fetched& c = remote_chunk(id, start, n, fetched, ts);
    if (c.length() > static_cast<size_t>(INT32_MAX))
      throw IOError("'" + name_ + "': chunk " + std::to_string(id) + " over 2 GiB");
    chunk = const_cast<uint8_t*>(c.data());
    cbytes = static_cast<int>(c.length());
  } else {
    // For part of a chunk on disk, a lazy chunk (header and block offsets) lets the
    // decompressor read just the blocks it needs from the file, not the whole chunk.
    std::lock_guard<std::mutex> g(mu_);
    ChunkFetch fetch(extchunk_nitems() * isz, static_cast<int32_t>(isz));
    cbytes = whole ? blosc2_schunk_get_chunk(arr_->sc, id, &chunk, &needs_free)
                   : blosc2_schunk_get_lazychunk(arr_->sc, id, &chunk, &needs_free);
    bad_header = fetch.problem();
  }
  std::unique_ptr<uint8_t, void (*)(void*)> owned(needs_free ? chunk : nullptr, &std::free);
  if (cbytes < 0) {
    check_unchanged();
    if (!bad_header.empty()) throw IOError("'" + name_ + "': chunk " + std::to_string(id) + " " + bad_header);
    throw IOError("'" + name_ + "': cannot read chunk " + std::to_string(id));
  }
  try {
    read_checked(id, chunk, cbytes, start, n, dst, ts);
  } catch (const IOError&) {
    check_unchanged();  // a file modified in place is reported as such
    throw;
  }
  owned.reset();
  check_unchanged();  // after the read: what was read is what was opened
  if (dtype() == DType::Bool) {
    // A damaged file's bool byte other than 0/1 reads as True (NumPy's truth), so that
    // kernels that rely on 0/1 (sums, bitwise ops) agree with NumPy on it.
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n; ++i) b[i] = b[i] != 0;
  }
  if (counted) ts.decompressed[this][id]++;
  // What was decompressed: the chunk, or every block the range touches, whole (a block is
  // the codec's unit: a range of part of one decompresses all of it).
  ts.decompressed_bytes[this] += whole ? n * isz : touched_blocks(start, n) * prod(blocks_) * isz;
}

int64_t B2ndSource::touched_blocks(int64_t start, int64_t n) const {
  const int64_t per_block = std::max<int64_t>(1, prod(blocks_));
  return n <= 0 ? 0 : (start + n - 1) / per_block - start / per_block + 1;
}

void B2ndSource::read_checked(int64_t id, const uint8_t* chunk, int32_t cbytes, int64_t start, int64_t n, void* dst,
                              ThreadState& ts) const {
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  // Every chunk of a b2nd array holds its padded chunk shape: one that holds fewer bytes
  // would leave part of `dst` as it was (stale memory) where C-Blosc2 reports success.
  check_chunk_header(chunk, cbytes, extchunk_nitems() * isz, static_cast<int32_t>(isz), name_, id);
  if (chunk_is_uninit(chunk, cbytes)) {
    std::memset(dst, 0, static_cast<size_t>(n * isz));  // C-Blosc2 would leave dst as it was
  } else if (n == extchunk_nitems()) {
    auto* dctx = ts.dctx_for(this, arr_->sc, arr_->sc->typesize, ctx_uid_);
    int rc = blosc2_decompress_ctx(dctx, chunk, cbytes, dst, static_cast<int32_t>(n * isz));
    check_decompressed(rc, n * isz, name_, id);
  } else {
    // One getitem per block: C-Blosc2 3.3.5 returns wrong values for a range that spans
    // several blocks when one of them is all zeros (a run-length "special" block).
    auto* dctx = ts.dctx_for(this, arr_->sc, arr_->sc->typesize, ctx_uid_);
    const int64_t per_block = prod(blocks_);
    for (int64_t i = start; i < start + n;) {
      const int64_t e = std::min(start + n, (i / per_block + 1) * per_block);
      int rc = blosc2_getitem_ctx(dctx, chunk, cbytes, static_cast<int>(i), static_cast<int>(e - i),
                                  static_cast<char*>(dst) + (i - start) * isz, static_cast<int32_t>((e - i) * isz));
      check_decompressed(rc, (e - i) * isz, name_, id);
      i = e;
    }
  }
}

void B2ndSource::read_chunk(int64_t id, void* dst, ThreadState& ts) const {
  read_items(id, 0, extchunk_nitems(), dst, ts);
}

// Copy the part of `region` inside chunk box `cbox` — indices [i_lo[d], i_hi[d]) of the
// region along each axis — from the decompressed block-major chunk to its place in `out`.
void B2ndSource::gather_from_chunk(const char* chunk, int64_t base, const Box& cbox, const Region& region,
                                   const Shape& i_lo, const Shape& i_hi, char* out) const {
  const size_t nd = ndim(), isz = itemsize(dtype());
  Shape out_strides = byte_strides(region.count, isz);
  Shape bstrides = byte_strides(blocks_, isz);
  Shape bgrid(nd);
  for (size_t d = 0; d < nd; ++d) bgrid[d] = extchunk_[d] / blocks_[d];
  const int64_t block_bytes = prod(blocks_) * static_cast<int64_t>(isz);

  // Per axis: the chunk's i-range, split by blocks.
  std::vector<std::vector<AxisSegment>> segs(nd);
  for (size_t d = 0; d < nd; ++d) {
    const int64_t i0 = i_lo[d], st = region.step[d];
    split_axis(region.start[d] + i0 * st - cbox.start[d], st, i_hi[d] - i0, blocks_[d], segs[d]);
    for (auto& g : segs[d]) {
      g.i_lo += i0;
      g.i_hi += i0;
    }
  }
  // Odometer over the blocks touched.
  std::vector<size_t> k(nd, 0);
  Shape count(nd), sstr(nd);
  for (size_t d = 0; d < nd; ++d) sstr[d] = bstrides[d] * region.step[d];
  while (true) {
    int64_t bid = 0, off = -base;  // (byte offset of the first item into `chunk`)
    char* dst = out;
    for (size_t d = 0; d < nd; ++d) {
      const AxisSegment& g = segs[d][k[d]];
      bid = bid * bgrid[d] + g.cell;
      int64_t pos = region.start[d] + g.i_lo * region.step[d] - cbox.start[d];
      off += (pos - g.cell * blocks_[d]) * bstrides[d];
      dst += g.i_lo * out_strides[d];
      count[d] = g.i_hi - g.i_lo;
    }
    const char* src = chunk + (off + bid * block_bytes);
    copy_strided(nd, count.data(), src, sstr.data(), dst, out_strides.data(), isz);
    if (!next_segment(k, segs)) break;
  }
}

bool B2ndSource::reads_chunk_whole() const {
  const int64_t whole = extchunk_nitems();
  return whole <= kPieceBytes / static_cast<int64_t>(itemsize(dtype())) || prod(blocks_) >= whole;
}

int64_t B2ndSource::fill_bytes(const Region& region, const MemoryModel& /*m*/) const {
  // As fill() and read_in_pieces(): nothing for one C-order range of one chunk (read in
  // place), else a buffer of one piece, plus a compressed chunk read whole from disk when
  // the piece is the whole chunk.
  if (region.size() == 0 || size() == 0) return 0;
  const int64_t local = fill_bytes_local(region);
  if (!remote_) return local;
  // Over a store, fill() also holds what it fetched ahead: the chunks its bounds span,
  // compressed, at most kPrefetchBytes.
  int64_t spanned = 1;
  for (size_t d = 0; d < ndim(); ++d) {
    const int64_t lo = std::min(region.start[d], region.last(d)), hi = std::max(region.start[d], region.last(d));
    const int64_t c = std::max<int64_t>(1, grid_.chunks()[d]);
    spanned = sat_mul(spanned, std::min(hi / c - lo / c + 1, region.count[d]));
  }
  const int64_t compressed = arr_->sc->cbytes / std::max<int64_t>(1, arr_->sc->nchunks);
  return sat_add(local, std::min(kPrefetchBytes + compressed, sat_mul(spanned, compressed)));
}

int64_t B2ndSource::fill_bytes_local(const Region& region) const {
  const size_t nd = ndim();
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  const int64_t nchunks = std::max<int64_t>(1, arr_->sc->nchunks);
  const int64_t compressed = arr_->sc->cbytes / nchunks;  // an average chunk, read whole from disk
  const int64_t whole = extchunk_nitems();
  const int64_t piece = std::max<int64_t>(1, kPieceBytes / isz);
  if (nd == 0 || !c_order_blocks_) {
    if (reads_chunk_whole()) return sat_add(sat_mul(whole, isz), compressed);
    return sat_mul(prod(blocks_), isz);  // block by block
  }
  const Box rb = region.bounds();
  const Shape st = c_strides(extchunk_);
  bool one_chunk = true;  // (without listing the chunks touched: a region may touch many)
  Shape neg(nd);
  for (size_t d = 0; d < nd; ++d) {
    const int64_t c = grid_.chunks()[d];
    one_chunk = one_chunk && rb.start[d] / c == (rb.stop[d] - 1) / c;
    neg[d] = -(rb.start[d] / c * c);
  }
  if (one_chunk && region.unit_steps() &&
      is_contiguous_range(rb.shift(neg), extchunk_))  // fill()'s fast path: in place
    return rb.size() == whole ? compressed : 0;
  // C-order blocks: each chunk's range from the first to the last item needed, at most the
  // region's extent (or a chunk's) along each axis, read in pieces of at most `piece`.
  int64_t span = 1;
  for (size_t d = 0; d < nd; ++d)
    span = sat_add(span, sat_mul(std::min(rb.stop[d] - rb.start[d], grid_.chunks()[d]) - 1, st[d]));
  span = std::min(span, whole);
  // (read_blocks, for a region sparse in its span, holds one block)
  const int64_t block = prod(blocks_);
  if (span > piece) return sat_mul(std::max(piece, block), isz);
  return sat_add(sat_mul(std::max(span, std::min(block, whole)), isz), span == whole ? compressed : 0);
}

void B2ndSource::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const size_t nd = ndim(), isz = itemsize(dtype());
  ScratchScope scope(ts.scratch);
  if (nd == 0) {
    char* buf = static_cast<char*>(scope.alloc(extchunk_nitems() * isz));
    read_chunk(0, buf, ts);
    std::memcpy(out, buf, isz);
    return;
  }
  // Over a store: every chunk the region needs fetched at once (many ranges in flight).
  const std::shared_ptr<void> fetched = remote_ ? prefetch(region, ts) : nullptr;
  if (BlockWindow* w = ts.eval ? ts.eval->window(this) : nullptr)
    return fill_windowed(region, static_cast<char*>(out), ts, *w);
  // Fast path: a unit-step request inside one chunk that is one contiguous range of the
  // chunk's C order, when blocks keep that order: decompress just those items, in place.
  Box rb = region.bounds();
  if (c_order_blocks_ && region.unit_steps()) {
    auto ids = grid_.chunks_touching(rb);
    if (ids.size() == 1) {
      Box cb = grid_.chunk_box(ids[0]);
      Shape neg(nd);
      for (size_t d = 0; d < nd; ++d) neg[d] = -cb.start[d];
      Box rel = rb.shift(neg);
      if (is_contiguous_range(rel, extchunk_)) {
        Shape st = c_strides(extchunk_);
        int64_t first = 0;
        for (size_t d = 0; d < nd; ++d) first += rel.start[d] * st[d];
        read_items(ids[0], first, rel.size(), out, ts);
        return;
      }
    }
  }
  const AxisSegments per_axis = split_region(region, grid_.chunks());
  std::vector<size_t> k(nd, 0);
  Shape coords(nd), i_lo(nd), i_hi(nd);
  while (true) {
    for (size_t d = 0; d < nd; ++d) {
      const AxisSegment& g = per_axis[d][k[d]];
      coords[d] = g.cell;
      i_lo[d] = g.i_lo;
      i_hi[d] = g.i_hi;
    }
    const int64_t id = grid_.chunk_id(coords);
    read_in_pieces(id, grid_.chunk_box(id), region, i_lo, i_hi, static_cast<char*>(out), ts);
    if (!next_segment(k, per_axis)) break;
  }
}

template <class F> void B2ndSource::for_each_block(const Region& region, F f) const {
  const size_t nd = ndim();
  const AxisSegments per_axis = split_region(region, grid_.chunks());
  AxisSegments segs(nd);
  Shape bgrid(nd), coords(nd), i_lo(nd), lo(nd), hi(nd);
  for (size_t d = 0; d < nd; ++d) bgrid[d] = extchunk_[d] / blocks_[d];
  std::vector<size_t> kc(nd, 0);
  do {
    for (size_t d = 0; d < nd; ++d) coords[d] = per_axis[d][kc[d]].cell;
    const int64_t id = grid_.chunk_id(coords);
    const Box cbox = grid_.chunk_box(id);
    for (size_t d = 0; d < nd; ++d) {
      const AxisSegment& g = per_axis[d][kc[d]];
      i_lo[d] = g.i_lo;
      split_axis(region.start[d] + g.i_lo * region.step[d] - cbox.start[d], region.step[d], g.i_hi - g.i_lo, blocks_[d],
                 segs[d]);
    }
    std::vector<size_t> kb(nd, 0);
    do {
      int64_t bid = 0;
      for (size_t d = 0; d < nd; ++d) {
        const AxisSegment& g = segs[d][kb[d]];
        bid = bid * bgrid[d] + g.cell;
        lo[d] = i_lo[d] + g.i_lo, hi[d] = i_lo[d] + g.i_hi;
      }
      f(id, cbox, bid, lo, hi);
    } while (next_segment(kb, segs));
  } while (next_segment(kc, per_axis));
}

int64_t B2ndSource::window_block_bytes() const {
  return ndim() == 0 || size() == 0 ? 0 : sat_mul(prod(blocks_), static_cast<int64_t>(itemsize(dtype())));
}

void B2ndSource::blocks_touched(const Region& region, std::vector<int64_t>& ids) const {
  if (region.size() == 0 || window_block_bytes() == 0) return;
  const int64_t per_chunk = extchunk_nitems() / std::max<int64_t>(1, prod(blocks_));
  for_each_block(region, [&](int64_t id, const Box&, int64_t bid, const Shape&, const Shape&) {
    ids.push_back(id * per_chunk + bid);
  });
}

void B2ndSource::fill_windowed(const Region& region, char* out, ThreadState& ts, BlockWindow& window) const {
  const int64_t per_block = prod(blocks_);
  const int64_t per_chunk = extchunk_nitems() / std::max<int64_t>(1, per_block);
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  // Workers pulling neighbouring regions (row bands of the same block row) start at
  // different blocks, each its share of the way round: each then decompresses its own
  // blocks and reads the other's kept, rather than waiting on the same block in turn.
  int64_t n = 0;
  for_each_block(region, [&](int64_t, const Box&, int64_t, const Shape&, const Shape&) { ++n; });
  const int nw = std::max(1, ts.eval->workers());
  const int64_t first = ts.worker > 0 ? n * (ts.worker % nw) / nw : 0;
  int64_t last = -1;  // a chunk counts one decompression per pull that makes a block of it
  auto visit = [&](int64_t from, int64_t to) {
    int64_t i = 0;
    for_each_block(region, [&](int64_t id, const Box& cbox, int64_t bid, const Shape& lo, const Shape& hi) {
      if (i++ < from || i > to) return;
      ts.eval->check_cancel();
      const BlockWindow::Block b = window.get(id * per_chunk + bid, [&](void* dst) {
        read_items(id, bid * per_block, per_block, dst, ts, id != last);
        last = id;
      });
      gather_from_chunk(b.get(), bid * per_block * isz, cbox, region, lo, hi, out);
    });
  };
  visit(first, n);
  visit(0, first);
}

std::pair<int64_t, int64_t> B2ndSource::item_span(const Box& cbox, const Region& region, const Shape& i_lo,
                                                  const Shape& i_hi) const {
  const Shape st = c_strides(extchunk_);
  int64_t lo = 0, hi = 0;
  for (size_t d = 0; d < ndim(); ++d) {
    const int64_t a = region.start[d] + i_lo[d] * region.step[d] - cbox.start[d];
    const int64_t b = region.start[d] + (i_hi[d] - 1) * region.step[d] - cbox.start[d];
    lo += std::min(a, b) * st[d], hi += std::max(a, b) * st[d];
  }
  return {lo, hi};
}

int64_t B2ndSource::blocks_touched_in(const Box& cbox, const Region& region, const Shape& i_lo,
                                      const Shape& i_hi) const {
  int64_t blocks = 1;
  std::vector<AxisSegment> segs;
  for (size_t d = 0; d < ndim(); ++d) {
    segs.clear();
    split_axis(region.start[d] + i_lo[d] * region.step[d] - cbox.start[d], region.step[d], i_hi[d] - i_lo[d],
               blocks_[d], segs);
    blocks = sat_mul(blocks, static_cast<int64_t>(segs.size()));
  }
  return blocks;
}

bool B2ndSource::sparse_in_span(const Box& cbox, const Region& region, const Shape& i_lo, const Shape& i_hi) const {
  if (!c_order_blocks_ || ndim() == 0) return false;
  const auto [first, last] = item_span(cbox, region, i_lo, i_hi);
  const int64_t spanned = touched_blocks(first, last + 1 - first);
  // (a quarter more than touched: a range read saves a copy per block, worth a few blocks)
  return spanned > 2 && blocks_touched_in(cbox, region, i_lo, i_hi) * 5 < spanned * 4;
}

void B2ndSource::read_blocks(int64_t id, const Box& cbox, const Region& region, const Shape& i_lo, const Shape& i_hi,
                             char* out, ThreadState& ts) const {
  const size_t nd = ndim();
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  const int64_t per_block = prod(blocks_);
  ScratchScope scope(ts.scratch);
  bool counted = true;  // (one decompression of the chunk in the stats)
  std::vector<std::vector<AxisSegment>> segs(nd);
  Shape bgrid(nd);
  for (size_t d = 0; d < nd; ++d) {
    bgrid[d] = extchunk_[d] / blocks_[d];
    split_axis(region.start[d] + i_lo[d] * region.step[d] - cbox.start[d], region.step[d], i_hi[d] - i_lo[d],
               blocks_[d], segs[d]);
  }
  char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(per_block * isz)));
  std::vector<size_t> k(nd, 0);
  Shape lo(nd), hi(nd);
  while (true) {
    int64_t bid = 0;
    for (size_t d = 0; d < nd; ++d) {
      const AxisSegment& g = segs[d][k[d]];
      bid = bid * bgrid[d] + g.cell;
      lo[d] = i_lo[d] + g.i_lo, hi[d] = i_lo[d] + g.i_hi;
    }
    read_items(id, bid * per_block, per_block, buf, ts, counted);
    counted = false;
    gather_from_chunk(buf, bid * per_block * isz, cbox, region, lo, hi, out);
    if (!next_segment(k, segs)) return;
  }
}

void B2ndSource::read_in_pieces(int64_t id, const Box& cbox, const Region& region, const Shape& i_lo, const Shape& i_hi,
                                char* out, ThreadState& ts) const {
  const size_t nd = ndim();
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  const int64_t whole = extchunk_nitems(), piece = std::max<int64_t>(1, kPieceBytes / isz);
  ScratchScope scope(ts.scratch);
  bool counted = true;  // a chunk read in pieces counts as one decompression of it
  // Over a store, C-order blocks too are read block by block: an item range from the first
  // to the last item needed would fetch the untouched blocks between (a strided region).
  if (!c_order_blocks_ || remote_) {
    if (reads_chunk_whole() && !remote_) {  // the chunk, whole
      char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(whole * isz)));
      read_chunk(id, buf, ts);
      gather_from_chunk(buf, 0, cbox, region, i_lo, i_hi, out);
      return;
    }
    return read_blocks(id, cbox, region, i_lo, i_hi, out, ts);
  }
  if (sparse_in_span(cbox, region, i_lo, i_hi)) return read_blocks(id, cbox, region, i_lo, i_hi, out, ts);
  // C-order blocks: the item range from the first to the last item needed, when it is at
  // most a piece; else the index ranges are cut along the first axis with more than one
  // index into runs whose ranges are at most a piece (recursing to the next axis when one
  // index is still too much), each read alone (blosc2_getitem touches only their blocks).
  const auto [first, last] = item_span(cbox, region, i_lo, i_hi);
  char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(std::min(last + 1 - first, piece) * isz)));
  const Shape st = c_strides(extchunk_);
  Shape lo = i_lo, hi = i_hi;
  auto read = [&] {
    const auto [a, b] = item_span(cbox, region, lo, hi);
    read_items(id, a, b + 1 - a, buf, ts, counted);
    counted = false;
    gather_from_chunk(buf, a * isz, cbox, region, lo, hi, out);
  };
  auto cut = [&](auto& self, size_t d) -> void {
    const auto [a, b] = item_span(cbox, region, lo, hi);
    if (b + 1 - a <= piece || d == nd) return read();
    const int64_t l0 = lo[d], h0 = hi[d];
    hi[d] = l0 + 1;
    const auto [ia, ib] = item_span(cbox, region, lo, hi);  // one index along d (axes before d have one)
    const int64_t inner = ib + 1 - ia, stride = std::abs(region.step[d]) * st[d];
    int64_t run = 1;  // indices along d per read: (run - 1) * stride + inner <= piece
    if (inner <= piece) run = stride > 0 ? (piece - inner) / stride + 1 : h0 - l0;
    for (int64_t s = l0; s < h0; s += run) {
      lo[d] = s, hi[d] = std::min(h0, s + run);
      if (hi[d] - lo[d] == 1 && inner > piece) self(self, d + 1);
      else read();
    }
    lo[d] = l0, hi[d] = h0;
  };
  cut(cut, 0);
}

int64_t B2ndSource::decompressed_bytes(const Region& region) const {
  // As fill(): per touched chunk, the item range from the first to the last item needed
  // when blocks keep the chunk's C order, else the whole (padded) chunk, or its touched
  // blocks when it is read block by block (over 4 MiB).
  if (region.size() == 0) return 0;
  const size_t nd = ndim();
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  if (nd == 0) return extchunk_nitems() * isz;
  // Many chunks (a plan's bounding box of a large array): estimated without listing them,
  // the chunks the region's bounds span, whole, or the region's items for range reads.
  int64_t spanned = 1;
  for (size_t d = 0; d < nd; ++d) {
    const int64_t lo = std::min(region.start[d], region.last(d)), hi = std::max(region.start[d], region.last(d));
    const int64_t c = std::max<int64_t>(1, grid_.chunks()[d]);
    spanned = sat_mul(spanned, std::min(hi / c - lo / c + 1, region.count[d]));
  }
  if (spanned > 4096)
    return c_order_blocks_ ? sat_mul(region.size(), isz) : sat_mul(spanned, sat_mul(extchunk_nitems(), isz));
  const AxisSegments per_axis = split_region(region, grid_.chunks());
  int64_t total = 0;
  std::vector<size_t> k(nd, 0);
  Shape coords(nd), i_lo(nd), i_hi(nd);
  while (true) {
    if (!c_order_blocks_ && reads_chunk_whole()) {
      total = sat_add(total, sat_mul(extchunk_nitems(), isz));
    } else {
      for (size_t d = 0; d < nd; ++d) {
        coords[d] = per_axis[d][k[d]].cell;
        i_lo[d] = per_axis[d][k[d]].i_lo, i_hi[d] = per_axis[d][k[d]].i_hi;
      }
      const Box cbox = grid_.chunk_box(grid_.chunk_id(coords));
      int64_t blocks = 0;  // read_in_pieces: the touched blocks one at a time, or item ranges
      if (!c_order_blocks_ || sparse_in_span(cbox, region, i_lo, i_hi)) {
        blocks = blocks_touched_in(cbox, region, i_lo, i_hi);
      } else {
        const auto [lo, hi] = item_span(cbox, region, i_lo, i_hi);
        blocks = touched_blocks(lo, hi + 1 - lo);
      }
      total = sat_add(total, sat_mul(blocks, sat_mul(prod(blocks_), isz)));
    }
    if (!next_segment(k, per_axis)) break;
  }
  return total;
}

std::vector<uint8_t> B2ndSource::to_cframe() const {
  uint8_t* cframe = nullptr;
  int64_t len = 0;
  bool needs_free = false;
  int rc;
  {
    std::lock_guard<std::mutex> g(mu_);
    rc = b2nd_to_cframe(arr_, &cframe, &len, &needs_free);
  }
  std::unique_ptr<uint8_t, decltype(&free)> owned(needs_free ? cframe : nullptr, &free);
  check_unchanged();  // a file changed under the copy explains its failure, or spoils its success
  check_blosc2(rc, "'" + name_ + "': to_cframe");
  return std::vector<uint8_t>(cframe, cframe + len);
}

}  // namespace b2lazy
