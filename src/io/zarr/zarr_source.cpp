#include "io/zarr/zarr_source.hpp"

#include <algorithm>
#include <cstring>

#include "b2lazy/checked.hpp"
#include "b2lazy/driver.hpp"
#include "b2lazy/error.hpp"
#include "core/saturating.hpp"
#include "runtime/block_window.hpp"
#include "runtime/evaluation.hpp"
#include "runtime/thread_state.hpp"
#include "storage/blosc2_util.hpp"

namespace b2lazy {

namespace {

constexpr int64_t kMaxChunkBytes = (int64_t(1) << 31) - 1;  // a read unit, decoded
constexpr size_t kKeptStoredBytes = size_t(16) << 20;       // read_unit's buffer kept per worker

std::shared_ptr<ZarrSource> make_source(zarr::Metadata m, std::unique_ptr<zarr::KeyReader> keys,
                                        const std::string& name) {
  try {
    return std::make_shared<ZarrSource>(std::move(m), std::move(keys), name);
  } catch (const ValueError& e) {  // sizes beyond int64 (Node's check): the file is at fault
    throw IOError("'" + name + "': " + e.what());
  }
}

}  // namespace

namespace zarr {

void ReadLayout::check_stored_size(const std::string& key, int64_t size) const {
  if (size > most_stored)
    throw IOError("'" + where(key) + "': " + std::to_string(size) + " bytes, more than a chunk " +
                  shape_str(meta->chunks) + " of " + dtype_name(meta->dtype) + " is stored in through its codecs (" +
                  std::to_string(most_stored) + "): a damaged chunk");
}

void ReadLayout::check_index(const std::vector<uint64_t>& v, int64_t size, const std::string& key) const {
  const Sharding& s = *meta->codecs.sharding;
  for (size_t k = 0; 2 * k + 1 < v.size(); ++k) {
    const uint64_t off = v[2 * k], len = v[2 * k + 1];
    if (off == kMissing && len == kMissing) continue;
    if (size >= 0 && (off > static_cast<uint64_t>(size) || len > static_cast<uint64_t>(size) - off))
      throw IOError("'" + where(key) + "': shard index: inner chunk " + std::to_string(k) + " at " +
                    std::to_string(off) + " (+" + std::to_string(len) + ") lies outside the file's " +
                    std::to_string(size) + " bytes");
    if (off > uint64_t(INT64_MAX) || len > static_cast<uint64_t>(most_inner))
      throw IOError("'" + where(key) + "': shard index: inner chunk " + std::to_string(k) + " is stored in " +
                    std::to_string(len) + " bytes, more than an inner chunk " + shape_str(s.inner) + " of " +
                    dtype_name(meta->dtype) + " takes through its codecs (" + std::to_string(most_inner) + ")");
  }
}

int64_t ReadLayout::inner_chunks_in(int64_t shard) const {
  int64_t n = 1;
  for (size_t d = meta->shape.size(); d-- > 0;) {
    const int64_t shards = ceil_div(meta->shape[d], meta->chunks[d]);
    if (shards <= 0) return 0;
    const int64_t start = shard % shards * meta->chunks[d];
    shard /= shards;
    n *= ceil_div(std::min(meta->chunks[d], meta->shape[d] - start), unit[d]);
  }
  return n;
}

}  // namespace zarr

std::shared_ptr<ZarrSource> ZarrSource::open(const std::string& path, const std::string& name_in) {
  const std::string name = name_in.empty() ? path : name_in;
  zarr::Metadata m;
  auto keys = zarr::open_local_keys(path, name, m);
  return make_source(std::move(m), std::move(keys), name);
}

std::shared_ptr<ZarrSource> ZarrSource::open(const StorePtr& store, const std::string& member) {
  zarr::Metadata m;
  auto keys = zarr::open_store_keys(store, member, m);
  return make_source(std::move(m), std::move(keys), store->url_of(member));
}

ZarrSource::ZarrSource(zarr::Metadata meta, std::unique_ptr<zarr::KeyReader> keys, std::string name)
    : UnitSource(meta.dtype, meta.shape), meta_(std::move(meta)), name_(std::move(name)), keys_(std::move(keys)) {
  ensure_blosc2();  // (blosc chunks are decoded by C-Blosc2)
  const std::string file = name_ + "/" + (meta_.version == 3 ? "zarr.json" : ".zarray");
  grid_ = ChunkGrid(shape(), meta_.chunks);
  Shape unit = meta_.chunks;
  const auto& sh = meta_.codecs.sharding;
  if (sh) {
    if (sh->inner.size() != ndim())
      throw IOError("'" + file + "': sharding chunk_shape " + shape_str(sh->inner) + " has not " +
                    std::to_string(ndim()) + " axes");
    lay_.per_shard.resize(ndim());
    // The shard (after any transpose) holds whole inner chunks.
    for (size_t k = 0; k < ndim(); ++k) {
      const int64_t outer = meta_.chunks[meta_.codecs.order.empty() ? k : meta_.codecs.order[k]];
      if (outer % sh->inner[k] != 0)
        throw IOError("'" + file + "': shard shape " + shape_str(meta_.chunks) +
                      " is not a multiple of the inner chunks " + shape_str(sh->inner));
    }
    int64_t n = 1;  // the index (16 bytes per inner chunk) is read whole
    for (size_t d = 0; d < ndim(); ++d) n = sat_mul(n, meta_.chunks[d] / sh->inner[d]);
    if (n > (int64_t(1) << 26))
      throw IOError("'" + file + "': shards " + shape_str(meta_.chunks) + " of inner chunks " + shape_str(sh->inner) +
                    " hold " + std::to_string(n) + " inner chunks: the index is too large to read");
    partial_shards_ = meta_.codecs.order.empty() && meta_.codecs.bytes_codecs.empty();
    if (partial_shards_) {
      unit = sh->inner;
      for (size_t d = 0; d < ndim(); ++d) lay_.per_shard[d] = meta_.chunks[d] / sh->inner[d];
      lay_.most_inner =
          static_cast<int64_t>(std::min<size_t>(zarr::max_stored(sh->codecs, sh->inner, dtype()), INT64_MAX));
    }
  }
  if (sat_mul(prod(unit), static_cast<int64_t>(itemsize(dtype()))) > kMaxChunkBytes)
    throw IOError("'" + file + "': chunks " + shape_str(unit) + " of " + dtype_name(dtype()) + " exceed 2 GiB");
  read_grid_ = ChunkGrid(shape(), unit);
  lay_.meta = &meta_;
  lay_.name = name_;
  lay_.unit = unit;
  lay_.most_stored =
      static_cast<int64_t>(std::min<size_t>(zarr::max_stored(meta_.codecs, meta_.chunks, dtype()), INT64_MAX));
  keys_->attach(&lay_);
  // A unit stored as one Blosc buffer of its C order (a chunk, or a partial shard's inner
  // chunk) is read by block.
  const zarr::Pipeline& p = partial_shards_ ? meta_.codecs.sharding->codecs : meta_.codecs;
  blosc_runs_ = ndim() > 0 && !p.sharding && p.order.empty() && (!p.big_endian || itemsize(dtype()) == 1) &&
                p.bytes_codecs.size() == 1 && p.bytes_codecs[0].kind == zarr::BytesCodec::Kind::Blosc &&
                (partial_shards_ || !meta_.codecs.sharding);
}

std::vector<zarr::KeyRead> ZarrSource::key_reads(const Region& region, BlockWindow* window) const {
  std::vector<UnitRead> units;
  planned_reads(region, window, units);
  std::vector<zarr::KeyRead> r;
  r.reserve(units.size());
  for (const UnitRead& u : units) {
    zarr::KeyRead k = key_of(u.id);
    if (u.n >= 0) k.kind = zarr::KeyRead::Kind::Run, k.start = u.start, k.n = u.n;
    r.push_back(std::move(k));
  }
  return r;
}

void ZarrSource::fill(const Region& region, void* out, ThreadState& ts) const {
  auto reads = [&] { return key_reads(region, ts.eval ? ts.eval->window(this) : nullptr); };
  keys_->around_fill(
      reads, [&] { UnitSource::fill(region, out, ts); }, ts);
}

void ZarrSource::store_reads(const Region& region, std::vector<StoreRead>& out) const {
  if (keys_->fetches_ahead()) keys_->store_reads(key_reads(region, nullptr), out);
}

int64_t ZarrSource::store_read_bytes() const {
  if (!keys_->fetches_ahead()) return 0;
  return std::max<int64_t>(
      1, std::min(lay_.most_stored, sat_mul(prod(lay_.unit), static_cast<int64_t>(itemsize(dtype())))));
}

zarr::KeyRead ZarrSource::key_of(int64_t id) const {
  zarr::KeyRead r;
  const Shape coords = read_grid_.chunk_coords(id);
  if (!partial_shards_) {
    r.key = meta_.key(coords);
    return r;
  }
  const size_t nd = ndim();
  Shape shard(nd);
  int64_t i = 0;
  for (size_t d = 0; d < nd; ++d) {
    shard[d] = coords[d] / lay_.per_shard[d];
    i = i * lay_.per_shard[d] + coords[d] % lay_.per_shard[d];
  }
  r.kind = zarr::KeyRead::Kind::Inner;
  r.key = meta_.key(shard);
  r.shard = grid_.chunk_id(shard);
  r.inner = i;
  return r;
}

void ZarrSource::read_unit_range(int64_t id, int64_t start, int64_t n, void* dst, ThreadState& ts) const {
  const size_t isz = itemsize(dtype());
  int64_t decoded = 0;
  zarr::KeyRead r = key_of(id);
  r.kind = zarr::KeyRead::Kind::Run, r.start = start, r.n = n;
  if (!keys_->run(r, dst, decoded, ts)) {  // the fill value
    auto* d = static_cast<uint8_t*>(dst);
    for (int64_t k = 0; k < n; ++k) std::memcpy(d + k * static_cast<int64_t>(isz), meta_.fill, isz);
    return;
  }
  if (dtype() == DType::Bool) {  // any byte other than 0 is True (NumPy's truth), as 1
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t k = 0; k < n; ++k) b[k] = b[k] != 0;
  }
  ts.decompressed[this][id]++;
  ts.decompressed_bytes[this] += decoded;
}

Shape ZarrSource::preferred_chunks() const {
  // The chunk grid's cells (shards) within the array, unless that is large: then the read unit.
  Shape c = meta_.chunks;
  for (size_t d = 0; d < ndim(); ++d) c[d] = std::max<int64_t>(1, std::min(c[d], shape()[d]));
  if (sat_mul(prod(c), static_cast<int64_t>(itemsize(dtype()))) > (int64_t(64) << 20)) return read_grid_.chunks();
  return c;
}

double ZarrSource::decode_cost() const {
  const auto deflate = [](const zarr::Pipeline& p) {
    for (const zarr::BytesCodec& c : p.bytes_codecs)
      if (c.kind == zarr::BytesCodec::Kind::Deflate) return true;
    return false;
  };
  const zarr::Pipeline& p = meta_.codecs;
  return deflate(p) || (p.sharding && deflate(p.sharding->codecs)) ? 3.0 : 1.0;
}

std::string ZarrSource::describe() const {
  return "zarr v" + std::to_string(meta_.version) + " '" + name_ + "' " + shape_str(shape()) + " " +
         dtype_name(dtype()) + " chunks=" + shape_str(read_grid_.chunks()) +
         (meta_.codecs.sharding ? " shards=" + shape_str(meta_.chunks) : "") + " codecs=" + meta_.codecs.describe();
}

void ZarrSource::read_unit(int64_t id, void* dst, ThreadState& ts) const {
  const size_t isz = itemsize(dtype());
  const Shape& ushape = read_grid_.chunks();
  const int64_t nitems = prod(ushape);
  // The stored bytes, in a buffer each worker keeps: one per unit would be allocated and
  // given back to the system by glibc (brk, page faults) unit after unit — at times twice
  // the time of a sum over 512 KiB inner chunks. Not kept when large.
  thread_local std::vector<uint8_t> bytes;
  struct Release {
    ~Release() {
      if (bytes.capacity() > kKeptStoredBytes) std::vector<uint8_t>().swap(bytes);
    }
  } release;
  const zarr::KeyRead r = key_of(id);
  bool found;
  if (partial_shards_) {
    found = keys_->inner(r.shard, r.key, r.inner, bytes, ts);
    if (found)
      zarr::decode(meta_.codecs.sharding->codecs, bytes.data(), bytes.size(), ushape, dtype(), dst,
                   lay_.where(r.key + " (inner chunk " + std::to_string(r.inner) + ")"), ts, meta_.fill);
  } else {
    found = keys_->chunk(r.key, bytes);
    if (found)
      zarr::decode(meta_.codecs, bytes.data(), bytes.size(), ushape, dtype(), dst, lay_.where(r.key), ts, meta_.fill);
  }
  if (!found) {
    auto* d = static_cast<uint8_t*>(dst);
    for (int64_t k = 0; k < nitems; ++k) std::memcpy(d + k * isz, meta_.fill, isz);
    return;
  }
  if (dtype() == DType::Bool) {  // any byte other than 0 is True (NumPy's truth), as 1
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t k = 0; k < nitems; ++k) b[k] = b[k] != 0;
  }
  ts.decompressed[this][id]++;
  ts.decompressed_bytes[this] += nitems * static_cast<int64_t>(isz);
}

bool ZarrSource::stored_info(StorageInfo& info) const {
  info.format = "zarr";
  info.urlpath = name_;
  info.shape = shape();
  info.chunks = read_grid_.chunks();
  info.blocks = meta_.codecs.sharding ? meta_.chunks : Shape{};
  info.dtype = dtype();
  info.codec = "zarr v" + std::to_string(meta_.version) + ": " + meta_.codecs.describe();
  info.filters = "";
  info.clevel = 0;
  for (const auto& b : meta_.codecs.bytes_codecs) info.clevel = std::max(info.clevel, b.level);
  info.nbytes = sat_mul(size(), static_cast<int64_t>(itemsize(dtype())));
  info.cbytes = keys_->stored_bytes();
  info.contiguous = false;
  return true;
}

}  // namespace b2lazy
