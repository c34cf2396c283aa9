#include "plan/follow_layout.hpp"

#include <algorithm>
#include <set>

#include "b2lazy/checked.hpp"
#include "core/saturating.hpp"
#include "plan/propagate.hpp"

namespace b2lazy {

namespace {

// Bytes the stored sources under `root` decompress for the output box `b` (each
// region a node is asked for once).
int64_t source_reads(const Node& root, const Box& b) {
  static const std::set<const Node*> none;
  int64_t total = 0;
  Propagation walk(none, [&](const Edge&, const Node& n, const Region& r, bool first) {
    if (first && n.decompresses()) total = sat_add(total, n.decompressed_bytes(r));
  });
  walk.run({nullptr, 0}, root, Region::from_box(b));
  return total;
}

// `root`'s whole box, cut to [lo, hi) along axis d.
Box along(const Shape& shape, size_t d, int64_t lo, int64_t hi) {
  Box b = Box::whole(shape);
  b.start[d] = lo;
  b.stop[d] = hi;
  return b;
}

// The extent of at most `most` (and at least half of it) along axis d whose chunk
// boundary cuts no source chunk: the two first chunks read what the pair reads. Not
// found within 64 tries: `most`.
bool cuts_no_source_chunk(const Node& root, size_t d, int64_t e) {
  const int64_t pair = std::min(root.shape()[d], 2 * e);
  if (pair <= e) return true;
  const int64_t both = source_reads(root, along(root.shape(), d, 0, pair));
  return sat_add(source_reads(root, along(root.shape(), d, 0, e)),
                 source_reads(root, along(root.shape(), d, e, pair))) <= both;
}

int64_t aligned_extent(const Node& root, size_t d, int64_t most) {
  const Shape& shape = root.shape();
  const int64_t least = std::max<int64_t>(1, most / 2);
  for (int64_t e = most, tries = 0; e >= least && tries < 64; --e, ++tries)
    if (std::min(shape[d], 2 * e) <= e || cuts_no_source_chunk(root, d, e)) return e;
  return most;
}

}  // namespace

std::vector<Shape> follow_source_layouts(const NodePtr& root, int64_t target_items, int64_t whole_items) {
  const Shape& shape = root->shape();
  std::vector<Shape> out;
  if (root->size() == 0) return out;
  if (root->size() <= whole_items) out.push_back(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= 1) continue;
    const int64_t others = std::max<int64_t>(1, root->size() / shape[d]);
    const int64_t most = std::max<int64_t>(1, target_items / others);
    if (most >= shape[d]) continue;  // the whole output (above)
    Shape c = shape;
    c[d] = aligned_extent(*root, d, most);
    out.push_back(std::move(c));
  }
  return out;
}

Shape balanced_ranges(const NodePtr& root, Shape chunks, int nworkers) {
  const Shape& shape = root->shape();
  if (root->size() == 0 || chunks.size() != shape.size()) return chunks;
  size_t d = 0;
  while (d < shape.size() && chunks[d] >= shape[d]) ++d;
  if (d == shape.size()) return chunks;
  for (size_t e = d + 1; e < shape.size(); ++e)
    if (chunks[e] < shape[e]) return chunks;  // (not one range per chunk)
  const int64_t n = ceil_div(shape[d], chunks[d]);
  const int64_t last = shape[d] - (n - 1) * chunks[d];
  if (n > 4 * std::max(1, nworkers) || 2 * last >= chunks[d]) return chunks;
  const int64_t even = ceil_div(shape[d], n);
  for (int64_t e = even; e <= chunks[d] && e < even + 64; ++e)
    if (ceil_div(shape[d], e) == n && cuts_no_source_chunk(*root, d, e)) {
      chunks[d] = e;
      return chunks;
    }
  return chunks;
}

}  // namespace b2lazy
