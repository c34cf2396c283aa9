// Which HTTP range requests serve a set of byte ranges of one object: near ranges merged
// into one request (a gap below max_gap is read and dropped: a round trip costs more than
// the bytes, while the gaps stay below max_waste of the bytes asked), merged requests
// capped at max_size, and long ranges split into requests of
// max_size that run in parallel. Pure: unit-tested in tests/cpp/test_remote_pure.cpp.
#pragma once
#include <cstdint>
#include <vector>

#include "b2lazy/byte_store.hpp"

namespace b2lazy::remote {

struct CoalesceLimits {
  int64_t max_gap = int64_t{1} << 20;    // "coalesce_gap"
  int64_t max_size = int64_t{16} << 20;  // "coalesce_max": also the split size
  // "coalesce_waste": the gap bytes a merged request may read, as a fraction of the bytes
  // asked for in it — so what is fetched stays within (1 + waste) x what is needed (a
  // slice that needs one block in ten is not read whole because its blocks are near).
  double max_waste = 0.2;
};

// Bytes [fetch_at, fetch_at + length) of a fetch's body are bytes [piece_at, ...) of
// range number `piece`.
struct Slice {
  size_t piece = 0;
  int64_t piece_at = 0;
  int64_t fetch_at = 0;
  int64_t length = 0;  // -1: the rest of the body (a to-the-end range)
};

struct Fetch {
  int64_t offset = 0;
  int64_t length = 0;  // -1: to the end of the object
  std::vector<Slice> slices;
};

// The fetches that cover `ranges` (zero-length ranges need none; a to-the-end range is a
// fetch of its own). Every byte of every range is in exactly one slice.
std::vector<Fetch> plan_fetches(const std::vector<ByteRange>& ranges, const CoalesceLimits& limits);

}  // namespace b2lazy::remote
