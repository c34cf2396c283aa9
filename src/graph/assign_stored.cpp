// x[key] = value written through to a stored b2nd array (b2lazy.open(path, mode="r+")):
// only the storage chunks the key touches are read, updated and rewritten, each so that a
// crash leaves it wholly old or new (storage/frame_update.hpp); a source opened before
// reports the file changed.
#include <blosc2.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>

#include "b2lazy/array.hpp"
#include "b2lazy/driver.hpp"
#include "b2lazy/error.hpp"
#include "core/strided_copy.hpp"
#include "graph/assign_builder.hpp"
#include "runtime/graph_queries.hpp"
#include "storage/blosc2_util.hpp"
#include "storage/frame_update.hpp"

namespace b2lazy {

namespace {

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return !a.empty() && !b.empty() && std::filesystem::equivalent(a, b, ec) && !ec;
}

// `a`, evaluated now when it reads the array stored at `urlpath` (x[1:] = x[:-1], x[x > 0]
// = 0: the old values, not the ones being written), else as it is.
Array before_writing(const Array& a, const std::string& urlpath, Context* ctx, size_t max_memory) {
  const bool reads = any_node(*a.node(), [&](const Node& n) {
    StorageInfo info;
    return n.stored_info(info) && same_file(info.urlpath, urlpath);
  });
  if (!reads) return a;
  ComputeOptions o;
  o.max_memory = max_memory;
  return a.compute(o, ctx);
}

StorageInfo updatable(const std::string& urlpath) {
  StorageInfo info = storage_info(urlpath);
  if (info.format != "b2nd")
    throw ValueError("x[key] = value: '" + urlpath + "' is a " + info.format +
                     " array; only b2nd arrays are updated in place (mode='r+')");
  return info;
}

// The storage chunks of `urlpath` within `bounds` that `touched` accepts: each read,
// passed to `update` (its box, its values dense in C order), and written back.
int64_t rewrite_chunks(const std::string& urlpath, const StorageInfo& info, const Box& bounds,
                       const std::function<bool(const Box&)>& touched,
                       const std::function<void(const Box&, char*)>& update) {
  if (bounds.size() == 0) return 0;
  ensure_blosc2();
  struct Opened {
    b2nd_array_t* arr = nullptr;
    ~Opened() {
      if (arr) b2nd_free(arr);
    }
  } f;
  const int rc0 = b2nd_open(urlpath.c_str(), &f.arr);
  check_blosc2(rc0 < 0 || f.arr ? rc0 : -1, "cannot open '" + urlpath + "' for writing");
  const size_t isz = itemsize(info.dtype);
  const ChunkGrid grid(info.shape, info.chunks);
  // Chunks replaced so that a crash leaves each wholly old or new (storage/frame_update).
  const std::unique_ptr<ChunkUpdate> replacing = ChunkUpdate::open(urlpath, grid.nchunks());
  int64_t rewritten = 0;
  std::vector<char> buf, whole;
  for (int64_t id : grid.chunks_touching(bounds)) {
    Box r = grid.chunk_box(id);
    const Box chunk = r;
    for (size_t d = 0; d < r.ndim(); ++d) {
      r.start[d] = std::max(r.start[d], bounds.start[d]);
      r.stop[d] = std::min(r.stop[d], bounds.stop[d]);
    }
    if (!touched(r)) continue;
    const Shape rs = r.shape();
    buf.resize(static_cast<size_t>(r.size()) * isz);
    const Shape cs = chunk.shape();
    whole.resize(static_cast<size_t>(chunk.size()) * isz);
    check_blosc2(b2nd_get_slice_cbuffer(f.arr, chunk.start.data(), chunk.stop.data(), whole.data(), cs.data(),
                                        static_cast<int64_t>(whole.size())),
                 "'" + urlpath + "': reading the chunk at " + shape_str(chunk.start));
    // r's part of the chunk, updated, and put back.
    const Shape ws = byte_strides(cs, isz), bs = byte_strides(rs, isz);
    int64_t at = 0;
    for (size_t d = 0; d < r.ndim(); ++d) at += (r.start[d] - chunk.start[d]) * ws[d];
    copy_strided(rs.size(), rs.data(), whole.data() + at, ws.data(), buf.data(), bs.data(), isz);
    update(r, buf.data());
    copy_strided(rs.size(), rs.data(), buf.data(), bs.data(), whole.data() + at, ws.data(), isz);
    const std::vector<uint8_t> c = compress_chunk_like(f.arr, cs, whole.data());
    replacing->replace(id, c.data(), static_cast<int32_t>(c.size()));
    ++rewritten;
  }
  replacing->commit();
  return rewritten;
}

std::vector<Index> box_key(const Box& b) {
  std::vector<Index> k;
  for (size_t d = 0; d < b.ndim(); ++d) k.push_back(Index::slice(b.start[d], b.stop[d]));
  return k;
}

}  // namespace

int64_t assign_stored(const std::string& urlpath, const std::vector<Index>& key, const Array& value, Context* ctx,
                      size_t max_memory) {
  const StorageInfo info = updatable(urlpath);
  const PreparedAssign p = prepare_assign(open(urlpath), key, value);  // checks the key and value
  const Array v = before_writing(p.value, urlpath, ctx, max_memory);
  const size_t isz = itemsize(info.dtype);
  Box bounds = Box::whole(info.shape);  // the key's bounding box
  for (size_t d = 0; d < bounds.ndim(); ++d) {
    const KeyAxis& k = p.axes[d];
    bounds.start[d] = k.start;
    bounds.stop[d] = k.count ? k.start + (k.count - 1) * k.step + 1 : k.start;
  }
  KeyMeet m;
  std::vector<char> vbuf;
  return rewrite_chunks(
      urlpath, info, bounds, [&](const Box& r) { return key_meets(p.axes, Region::from_box(r), m); },
      [&](const Box& r, char* old) {
        const Region vr = m.value_region();  // (m: what `touched` found for this box)
        std::vector<Index> vkey;
        for (size_t d = 0; d < vr.ndim(); ++d)
          vkey.push_back(Index::slice(vr.start[d], vr.start[d] + (vr.count[d] - 1) * vr.step[d] + 1, vr.step[d]));
        vbuf.resize(static_cast<size_t>(vr.size()) * isz);
        v[vkey].to_buffer(vbuf.data(), ctx, max_memory);
        scatter_meet(m, r.shape(), vbuf.data(), old, isz);
      });
}

int64_t assign_stored_where(const std::string& urlpath, const Array& mask, const Array& value, Context* ctx,
                            size_t max_memory) {
  const StorageInfo info = updatable(urlpath);
  if (mask.dtype() != DType::Bool || mask.shape() != info.shape)
    throw IndexError("x[mask] = value: the mask must be boolean of x's shape " + shape_str(info.shape) + ", got " +
                     std::string(dtype_name(mask.dtype())) + " " + shape_str(mask.shape()));
  Array v = value.dtype() == info.dtype ? value : value.astype(info.dtype);
  if (v.shape() != info.shape) v = broadcast_to(v, info.shape);  // (ValueError naming the shapes)
  const Array m = before_writing(mask, urlpath, ctx, max_memory);
  v = before_writing(v, urlpath, ctx, max_memory);
  const size_t isz = itemsize(info.dtype);
  std::vector<char> mbuf, vbuf;
  return rewrite_chunks(
      urlpath, info, Box::whole(info.shape),
      [&](const Box& r) {
        mbuf.resize(static_cast<size_t>(r.size()));
        m[box_key(r)].to_buffer(mbuf.data(), ctx, max_memory);
        return std::find(mbuf.begin(), mbuf.end(), char(1)) != mbuf.end();
      },
      [&](const Box& r, char* old) {
        vbuf.resize(static_cast<size_t>(r.size()) * isz);
        v[box_key(r)].to_buffer(vbuf.data(), ctx, max_memory);
        for (size_t i = 0; i < mbuf.size(); ++i)
          if (mbuf[i]) std::memcpy(old + i * isz, vbuf.data() + i * isz, isz);
      });
}

}  // namespace b2lazy
