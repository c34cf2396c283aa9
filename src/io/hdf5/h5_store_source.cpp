// H5Source over a byte store. libhdf5 reads the metadata through our driver
// (h5_store_vfd.hpp: pages of the object, each fetched once) and says where each chunk
// lies: H5Dread_chunk with the driver recording its raw-data read instead of making it,
// the chunk index searched as libhdf5's own read searches it. The chunks' bytes are then
// fetched by the source — a fill's all in one read_many, or found in the plan's prefetch
// cache (store_reads lists them) — and decoded by the worker, as the local path's pread'd
// chunks are. Contiguous data: one range per read unit.
#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include "b2lazy/error.hpp"
#include "core/saturating.hpp"
#include "io/hdf5/h5_handles.hpp"
#include "io/hdf5/h5_library.hpp"
#include "io/hdf5/h5_source.hpp"
#include "io/hdf5/h5_store_vfd.hpp"
#include "io/store/object_pages.hpp"
#include "io/zarr/codecs.hpp"
#include "runtime/fetch_cache.hpp"
#include "runtime/thread_state.hpp"
#include "storage/blosc2_util.hpp"

namespace b2lazy {

namespace {

constexpr int64_t kFillFetchBytes = int64_t(64) << 20;  // the most one fill fetches at once
constexpr size_t kMaxPlaces = size_t(1) << 20;          // chunk places kept per source
constexpr int64_t kOpenTail = int64_t(64) << 10;        // the object's end read at open, with its size

// The units this thread's fill fetched, for read_unit to take.
struct Fetched {
  const H5Source* owner = nullptr;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<uint8_t>> reads;  // (id, start, n)
};
thread_local Fetched* fetched_now = nullptr;

}  // namespace

std::shared_ptr<H5Source> H5Source::open_in_store(const StorePtr& store, const std::string& dataset) {
  ensure_blosc2();
  auto pages = std::make_shared<ObjectPages>(store, "");
  const std::string url = pages->url();
  // The size and the file's end in one round (a stat beside a suffix read); the
  // superblock's page comes next, on libhdf5's first read.
  pages->warm_tail(kOpenTail);
  std::lock_guard<std::mutex> g(h5::library_lock());
  h5::keep_library_at_exit();
  h5::quiet_this_thread();
  auto h = std::make_unique<Handles>();
  HandlesMadeUnderLock unlock{h};
  h->file = h5::open_in_pages(pages, url);
  if (h->file < 0) throw IOError("cannot open '" + url + "' as an HDF5 file (damaged or not HDF5)" + h5::said());
  auto src = from_file(h, url, dataset, true);
  src->store_ = store;
  src->ranged_ = !src->chunked_ && src->data_offset_ >= 0 && src->compact_.empty() && src->ndim() > 0;
  return src;
}

H5Source::Place H5Source::place_of(int64_t id) const {
  const size_t isz = itemsize(dtype());
  const Shape& u = read_grid_.chunks();
  const int64_t n = prod(u), bytes_n = n * static_cast<int64_t>(isz);
  const Box box = read_grid_.chunk_box(id);
  if (!chunked_) {
    if (data_offset_ < 0 || !compact_.empty()) return {};
    int64_t first = 0;
    const Shape st = c_strides(shape());
    for (size_t d = 0; d < ndim(); ++d) first += box.start[d] * st[d];
    const int64_t have = std::min(n, prod(shape()) - first);
    return {data_offset_ + first * static_cast<int64_t>(isz), have * static_cast<int64_t>(isz), 0};
  }
  if (!decodes_) return {};
  std::lock_guard<std::mutex> g(h5::library_lock());
  h5::quiet_this_thread();
  if (auto it = places_.find(id); it != places_.end()) return it->second;
  std::vector<hsize_t> off(ndim());
  for (size_t d = 0; d < ndim(); ++d) off[d] = static_cast<hsize_t>(box.start[d]);
  const std::string where = name_ + " (chunk " + shape_str(read_grid_.chunk_coords(id)) + ")";
  Place p;
  hsize_t size = 0;
  h5::take_store_failure();
  const bool stored = H5Dget_chunk_storage_size(h_->dset, off.data(), &size) >= 0 && size > 0;
  h5::last_error();  // (clears the stack: not stored is no error, the fill value)
  if (std::string failed = h5::take_store_failure(); !failed.empty())  // (but an unreadable index is)
    throw IOError("'" + where + "': its chunk index cannot be read: " + failed);
  if (stored) {
    if (size > static_cast<hsize_t>(h5::max_stored(bytes_n)))
      throw IOError("'" + where + "': its chunk claims " + std::to_string(size) + " stored bytes, more than " +
                    std::to_string(h5::max_stored(bytes_n)) + " for " + std::to_string(bytes_n) +
                    " bytes of values (damaged)");
    std::vector<h5::RawRead> reads;
    uint32_t mask = 0;
    uint8_t unused = 0;  // (the read is recorded, not made: nothing is written here)
    herr_t rc = 0;
    h5::locate_raw_reads([&] { rc = H5Dread_chunk(h_->dset, H5P_DEFAULT, off.data(), &mask, &unused); }, reads);
    if (rc < 0) throw IOError("'" + where + "': its stored chunk cannot be found (" + h5::last_error() + ")");
    if (reads.size() != 1 || reads[0].length != static_cast<int64_t>(size))
      throw IOError("'" + where + "': libhdf5 read its chunk in " + std::to_string(reads.size()) +
                    " pieces, not as one range of " + std::to_string(size) + " bytes");
    p = {reads[0].offset, reads[0].length, mask};
  }
  if (places_.size() >= kMaxPlaces) places_.clear();
  places_[id] = p;
  return p;
}

H5Source::Place H5Source::place_of(const UnitRead& r) const {
  Place p = place_of(r.id);
  if (r.n < 0 || p.offset < 0) return p;
  // A run of a contiguous unit: its items that the dataset holds (the last unit's padding
  // is the fill value).
  const int64_t isz = static_cast<int64_t>(itemsize(dtype()));
  const int64_t held = std::clamp<int64_t>(p.size / isz - r.start, 0, r.n);
  return held == 0 ? Place{} : Place{p.offset + r.start * isz, held * isz, 0};
}

std::vector<uint8_t> H5Source::remote_bytes(const UnitRead& r, const Place& p, ThreadState& ts) const {
  if (Fetched* f = fetched_now; f && f->owner == this) {
    if (auto it = f->reads.find({r.id, r.start, r.n}); it != f->reads.end()) {
      std::vector<uint8_t> got = std::move(it->second);
      f->reads.erase(it);
      return got;
    }
  }
  auto parts = fetch_read(ts, {store_, "", {{p.offset, p.size}}});
  if (!parts) throw IOError("'" + name_ + "': the file disappeared from the store while it was read");
  if (parts->size() != 1 || static_cast<int64_t>((*parts)[0].size()) != p.size)
    throw IOError("'" + name_ + "': the store returned a short read of a chunk");
  return std::move((*parts)[0]);
}

void H5Source::fill_remote(const Region& region, void* out, ThreadState& ts) const {
  std::vector<UnitRead> units;
  planned_reads(region, ts, units);
  // Every unit's range at once (each unit once), up to kFillFetchBytes; the rest as read.
  std::vector<std::tuple<int64_t, int64_t, int64_t>> ids;
  std::vector<ByteStore::Request> requests;
  int64_t bytes = 0;
  for (const UnitRead& u : units) {
    const auto k = std::make_tuple(u.id, u.start, u.n);
    if (std::find(ids.begin(), ids.end(), k) != ids.end()) continue;
    const Place p = place_of(u);
    if (p.offset < 0 || p.size == 0) continue;
    if (!ids.empty() && sat_add(bytes, p.size) > kFillFetchBytes) break;
    bytes = sat_add(bytes, p.size);
    ids.push_back(k);
    requests.push_back({"", {{p.offset, p.size}}});
  }
  Fetched f;
  f.owner = this;
  if (!requests.empty()) {
    auto got = fetch_read_many(ts, store_, requests);
    if (got.size() != requests.size())
      throw IOError("'" + name_ + "': the store answered " + std::to_string(got.size()) + " of " +
                    std::to_string(requests.size()) + " requests");
    for (size_t k = 0; k < ids.size(); ++k) {
      if (!got[k]) throw IOError("'" + name_ + "': the file disappeared from the store while it was read");
      f.reads[ids[k]] = std::move((*got[k])[0]);
    }
  }
  struct Scope {
    Fetched* before;
    explicit Scope(Fetched* now) : before(fetched_now) { fetched_now = now; }
    ~Scope() { fetched_now = before; }
  } scope(&f);
  UnitSource::fill(region, out, ts);
}

void H5Source::store_reads(const Region& region, std::vector<StoreRead>& out) const {
  if (!store_ || region.size() == 0) return;
  std::vector<UnitRead> units;
  planned_reads(region, nullptr, units);
  for (const UnitRead& u : units) {
    const Place p = place_of(u);
    if (p.offset >= 0 && p.size > 0) out.push_back({store_, "", {{p.offset, p.size}}});
  }
}

void H5Source::read_unit_range(int64_t id, int64_t start, int64_t n, void* dst, ThreadState& ts) const {
  const size_t isz = itemsize(dtype());
  const UnitRead r{id, start, n};
  const Place p = place_of(r);
  const int64_t held = p.offset < 0 ? 0 : p.size / static_cast<int64_t>(isz);
  if (held > 0) {
    const std::vector<uint8_t> got = remote_bytes(r, p, ts);
    std::memcpy(dst, got.data(), got.size());
    if (big_endian_) zarr::byteswap(dst, held * zarr::parts_of(dtype()), isz / zarr::parts_of(dtype()));
  }
  fill_value(static_cast<char*>(dst) + held * static_cast<int64_t>(isz), n - held);
  if (dtype() == DType::Bool) {  // any byte other than 0 is True, as 1
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t k = 0; k < held; ++k) b[k] = b[k] != 0;
  }
  ts.decompressed[this][id]++;
  ts.decompressed_bytes[this] += n * static_cast<int64_t>(isz);
}

int64_t H5Source::store_read_bytes() const {
  if (!store_ || (chunked_ && !decodes_) || (!chunked_ && (data_offset_ < 0 || !compact_.empty()))) return 0;
  const int64_t raw = sat_mul(prod(read_grid_.chunks()), static_cast<int64_t>(itemsize(dtype())));
  return std::max<int64_t>(1, chunked_ ? std::min(raw, h5::max_stored(raw)) : raw);
}

}  // namespace b2lazy
