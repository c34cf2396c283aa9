#include "ops/sort/runs_node.hpp"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "b2lazy/error.hpp"
#include "core/dispatch.hpp"
#include "ops/sort/sort_keys.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {
int64_t runs_for(int64_t n, int64_t run) { return std::max<int64_t>(1, (n + run - 1) / run); }

Shape runs_shape(const Shape& lanes, int64_t run, bool pairs) {
  Shape s{lanes[0], runs_for(lanes[1], run), run};
  if (pairs) s.push_back(2);
  return s;
}
}  // namespace

RunsNode::RunsNode(NodePtr lanes, int64_t run, bool descending, bool positions)
    : Node(DType::U64, runs_shape(lanes->shape(), run, positions), {lanes}),
      descending_(descending),
      positions_(positions) {}

Shape RunsNode::preferred_chunks() const {
  Shape c{1, 1, shape()[2]};
  if (positions_) c.push_back(2);
  return c;
}

std::string RunsNode::describe() const {
  return kind() + (descending_ ? " descending" : "") + " -> " + std::string(dtype_name(dtype())) + " " +
         shape_str(shape());
}

// The lanes' part under the runs the region crosses (whole runs: a run is sorted whole).
std::vector<Region> RunsNode::input_regions(const Region& region) const {
  const int64_t n = inputs()[0]->shape()[1], run = shape()[2];
  if (region.size() == 0) return {Region{{0, 0}, {1, 1}, {0, 0}}};
  const Box b = region.bounds();
  const int64_t lo = std::min(n, b.start[1] * run), hi = std::min(n, b.stop[1] * run);
  return {Region{{b.start[0], lo}, {1, 1}, {b.stop[0] - b.start[0], hi - lo}}};
}

int64_t RunsNode::fill_bytes(const Region& region, const MemoryModel& m) const {
  if (region.size() == 0) return 0;
  const Region in = input_regions(region)[0];
  // the lanes' part, and one run's keys (or (key, position) pairs) being sorted
  const int64_t pairs = shape()[2] * static_cast<int64_t>(positions_ ? sizeof(sortkey::KeyPos) : sizeof(uint64_t));
  return sat_add(sat_add(MemoryModel::region_bytes(*inputs()[0], in), pairs), m.pull_bytes(*inputs()[0], in));
}

void RunsNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const Node& lanes = *inputs()[0];
  const int64_t n = lanes.shape()[1], run = shape()[2];
  const Region in = input_regions(region)[0];
  ScratchScope scope(ts.scratch);
  char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(in.size()) * itemsize(lanes.dtype())));
  lanes.pull(in, buf, ts);
  const int64_t width = in.count[1];  // elements of a lane in `buf`
  dispatch_real(lanes.dtype(), "sort", [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    std::vector<uint64_t> keys;
    std::vector<sortkey::KeyPos> pairs;
    for (int64_t r = 0; r < region.count[0]; ++r)
      for (int64_t jr = 0; jr < region.count[1]; ++jr) {
        const int64_t j = region.start[1] + jr * region.step[1];
        const int64_t first = j * run, len = std::clamp<int64_t>(n - first, 0, run);  // the rest: pads
        const int64_t lane = region.start[0] + r * region.step[0] - in.start[0];
        const T* src = reinterpret_cast<const T*>(buf) + lane * width + (first - in.start[1]);
        const int64_t at = (r * region.count[1] + jr) * region.count[2];
        if (!positions_) {
          sortkey::sorted_keys(src, len, 1, static_cast<size_t>(run), descending_, keys);
          uint64_t* o = static_cast<uint64_t*>(out) + at;
          for (int64_t i = 0; i < region.count[2]; ++i)
            o[i] = keys[static_cast<size_t>(region.start[2] + i * region.step[2])];
          continue;
        }
        sortkey::sorted_pairs(src, len, 1, static_cast<size_t>(run), static_cast<uint64_t>(first), descending_, pairs);
        uint64_t* o = static_cast<uint64_t*>(out) + at * region.count[3];
        for (int64_t i = 0; i < region.count[2]; ++i) {
          const sortkey::KeyPos& kp = pairs[static_cast<size_t>(region.start[2] + i * region.step[2])];
          for (int64_t c = 0; c < region.count[3]; ++c)
            o[i * region.count[3] + c] = region.start[3] + c * region.step[3] == 0 ? kp.pos : kp.key;
        }
      }
  });
}

SamplesNode::SamplesNode(NodePtr runs, int64_t every)
    : Node(DType::I64, {runs->shape()[0], runs->shape()[1] * ((runs->shape()[2] + every - 1) / every)}, {runs}),
      every_(every),
      per_run_((runs->shape()[2] + every - 1) / every) {}

std::string SamplesNode::describe() const {
  return "run samples every " + std::to_string(every_) + " -> int64 " + shape_str(shape());
}

// Every every-th element of each run: keys, or (position, key) pairs.
std::vector<Region> SamplesNode::input_regions(const Region& region) const {
  const Shape& rs = inputs()[0]->shape();
  Region r = region.size() == 0
                 ? Region{{0, 0, 0}, {1, 1, 1}, {0, 0, 0}}
                 : Region{{region.start[0], 0, 0}, {region.step[0], 1, every_}, {region.count[0], rs[1], per_run_}};
  if (rs.size() == 4) r.start.push_back(0), r.step.push_back(1), r.count.push_back(region.size() ? 2 : 0);
  return {r};
}

// Fills whole lanes: the order of a sample depends on all the others.
void SamplesNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const Region in = input_regions(region)[0];
  const int64_t per_lane = shape()[1];
  ScratchScope scope(ts.scratch);
  auto* got = static_cast<uint64_t*>(scope.alloc(static_cast<size_t>(in.size()) * sizeof(uint64_t)));
  inputs()[0]->pull(in, got, ts);
  const bool pairs_in = inputs()[0]->ndim() == 4;  // (position, key) pairs: ties by position
  const int64_t run = inputs()[0]->shape()[2];
  std::vector<sortkey::KeyPos> pairs(static_cast<size_t>(per_lane));
  for (int64_t r = 0; r < region.count[0]; ++r) {
    // by position in the lane (run j's sample m: j * run + m * every for keys alone, which
    // orders ties by run as the values merge does)
    for (int64_t i = 0; i < per_lane; ++i) {
      const int64_t e = r * per_lane + i;
      pairs[static_cast<size_t>(i)] =
          pairs_in ? sortkey::KeyPos{got[2 * e], got[2 * e + 1]}
                   : sortkey::KeyPos{static_cast<uint64_t>((i / per_run_) * run + (i % per_run_) * every_), got[e]};
    }
    sortkey::sort_pairs(pairs.data(), pairs.size());
    int64_t* o = static_cast<int64_t*>(out) + r * region.count[1];
    for (int64_t i = 0; i < region.count[1]; ++i)
      o[i] = static_cast<int64_t>(pairs[static_cast<size_t>(region.start[1] + i * region.step[1])].pos) / run;
  }
}

}  // namespace b2lazy
