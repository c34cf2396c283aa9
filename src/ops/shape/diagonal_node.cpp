#include "ops/shape/diagonal_node.hpp"

#include <algorithm>
#include <cstring>

#include "core/saturating.hpp"
#include "runtime/alignment.hpp"
#include "runtime/memory_model.hpp"
#include "runtime/scratch.hpp"
#include "runtime/thread_state.hpp"

namespace b2lazy {

namespace {
Shape diagonal_shape(const Shape& in, int64_t offset) {
  const size_t nd = in.size();
  const int64_t rows = in[nd - 2], cols = in[nd - 1];
  // offsets beyond the matrix give an empty diagonal (and must not overflow)
  const int64_t len = offset >= 0 ? (offset >= cols ? 0 : std::min(rows, cols - offset))
                                  : (offset <= -rows ? 0 : std::min(rows + offset, cols));
  Shape s(in.begin(), in.end() - 2);
  s.push_back(std::max<int64_t>(len, 0));
  return s;
}
constexpr int64_t kDefaultCell = 64;
constexpr int64_t kMaxBoxElements = int64_t(1) << 18;  // a piece's box, over all batch elements
}  // namespace

DiagonalNode::DiagonalNode(NodePtr input, int64_t offset)
    : Node(input->dtype(), diagonal_shape(input->shape(), offset), {input}),
      offset_(offset),
      row0_(offset < 0 ? -offset : 0),
      col0_(offset > 0 ? offset : 0) {
  const size_t nd = inputs()[0]->ndim();
  const int64_t r = storage_alignment(*inputs()[0], nd - 2), c = storage_alignment(*inputs()[0], nd - 1);
  cell_r_ = r > 0 ? r : kDefaultCell;
  cell_c_ = c > 0 ? c : kDefaultCell;
}

std::string DiagonalNode::describe() const {
  return "diagonal offset " + std::to_string(offset_) + " of " + shape_str(inputs()[0]->shape()) + " -> " +
         shape_str(shape());
}

Region DiagonalNode::box(const Region& r, int64_t i, int64_t step, int64_t n) const {
  const size_t nb = ndim() - 1;  // batch axes
  Region in{Shape(nb + 2), Shape(nb + 2, 1), Shape(nb + 2)};
  for (size_t d = 0; d < nb; ++d) in.start[d] = r.start[d], in.step[d] = r.step[d], in.count[d] = r.count[d];
  in.start[nb] = row0_ + i, in.start[nb + 1] = col0_ + i;
  in.step[nb] = in.step[nb + 1] = n > 1 ? step : 1;
  in.count[nb] = in.count[nb + 1] = n;
  return in;
}

std::vector<Region> DiagonalNode::input_regions(const Region& r) const {
  const size_t nb = ndim() - 1;
  Region in = box(r, r.count[nb] ? std::min(r.start[nb], r.last(nb)) : 0, std::abs(r.step[nb]), r.count[nb]);
  if (r.size() == 0) in.count.assign(in.count.size(), 0);
  return {in};
}

int64_t DiagonalNode::max_piece(const Region& r) const {
  const size_t nb = ndim() - 1;
  int64_t batch = 1;
  for (size_t d = 0; d < nb; ++d) batch *= r.count[d];
  int64_t p = 1;
  while ((p + 1) * (p + 1) * batch <= kMaxBoxElements) ++p;
  return std::min(p, std::max<int64_t>(r.count[nb], 1));
}

int64_t DiagonalNode::fill_bytes(const Region& r, const MemoryModel& m) const {
  if (r.size() == 0) return 0;
  const size_t nb = ndim() - 1;
  const int64_t p = max_piece(r);
  int64_t batch = 1;
  for (size_t d = 0; d < nb; ++d) batch = sat_mul(batch, r.count[d]);
  const int64_t held = sat_mul(sat_mul(batch, sat_mul(p, p)), static_cast<int64_t>(itemsize(dtype())));
  return sat_add(held, m.pull_bytes(*inputs()[0], box(r, std::min(r.start[nb], r.last(nb)), std::abs(r.step[nb]), p)));
}

void DiagonalNode::fill(const Region& region, void* out, ThreadState& ts) const {
  if (region.size() == 0) return;
  const size_t nb = ndim() - 1, isz = itemsize(dtype());
  int64_t batch = 1;
  for (size_t d = 0; d < nb; ++d) batch *= region.count[d];
  const int64_t n = region.count[nb], step = region.step[nb], pmax = max_piece(region);
  char* o = static_cast<char*>(out);
  for (int64_t j = 0; j < n;) {
    // The piece [j, e): diagonal positions i = start + j*step whose row and column stay in
    // one cell each, at most pmax of them.
    const int64_t i0 = region.start[nb] + j * step;
    const int64_t rc = (row0_ + i0) / cell_r_, cc = (col0_ + i0) / cell_c_;
    int64_t e = j + 1;
    while (e < n && e - j < pmax) {
      const int64_t i = region.start[nb] + e * step;
      if ((row0_ + i) / cell_r_ != rc || (col0_ + i) / cell_c_ != cc) break;
      ++e;
    }
    const int64_t p = e - j;
    ScratchScope scope(ts.scratch);
    char* buf = static_cast<char*>(scope.alloc(static_cast<size_t>(batch * p * p) * isz));
    inputs()[0]->pull(box(region, i0, step, p), buf, ts);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t q = 0; q < p; ++q)
        std::memcpy(o + static_cast<size_t>(b * n + j + q) * isz, buf + static_cast<size_t>((b * p + q) * p + q) * isz,
                    isz);
    j = e;
  }
}

}  // namespace b2lazy
