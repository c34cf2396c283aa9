#include "io/remote/range_plan.hpp"

#include <algorithm>

namespace b2lazy::remote {

std::vector<Fetch> plan_fetches(const std::vector<ByteRange>& ranges, const CoalesceLimits& limits) {
  const int64_t cap = std::max<int64_t>(1, limits.max_size);
  struct Chunk {
    size_t piece;
    int64_t piece_at, offset, length;
  };
  std::vector<Fetch> out;
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto& r = ranges[i];
    if (r.length < 0) {
      out.push_back({r.offset, -1, {{i, 0, 0, -1}}});
      continue;
    }
    for (int64_t at = 0; at < r.length; at += cap)
      chunks.push_back({i, at, r.offset + at, std::min(cap, r.length - at)});
  }
  std::sort(chunks.begin(), chunks.end(), [](const Chunk& a, const Chunk& b) { return a.offset < b.offset; });
  Fetch cur;
  bool open = false;
  int64_t asked = 0, gaps = 0;  // of the open fetch
  for (const auto& c : chunks) {
    const int64_t end = c.offset + c.length;
    if (open) {
      const int64_t cur_end = cur.offset + cur.length;
      const int64_t merged_end = std::max(cur_end, end);
      const int64_t gap = std::max<int64_t>(0, c.offset - cur_end);
      const int64_t added = std::max<int64_t>(0, end - std::max(c.offset, cur_end));
      const bool cheap =
          gap == 0 || static_cast<double>(gaps + gap) <= limits.max_waste * static_cast<double>(asked + added);
      if (gap <= limits.max_gap && cheap && merged_end - cur.offset <= cap) {
        cur.length = merged_end - cur.offset;
        cur.slices.push_back({c.piece, c.piece_at, c.offset - cur.offset, c.length});
        asked += added;
        gaps += gap;
        continue;
      }
      out.push_back(std::move(cur));
    }
    cur = Fetch{c.offset, c.length, {{c.piece, c.piece_at, 0, c.length}}};
    asked = c.length;
    gaps = 0;
    open = true;
  }
  if (open) out.push_back(std::move(cur));
  return out;
}

}  // namespace b2lazy::remote
