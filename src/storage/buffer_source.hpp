// Leaves that live in memory or are computed from coordinates: NumPy buffers, scalars,
// and the constructors full / arange / linspace.
#pragma once
#include <memory>
#include <string>

#include "b2lazy/node.hpp"

namespace b2lazy {

// A strided in-memory buffer owned elsewhere (a NumPy array kept alive by `owner`).
class BufferSource : public Node {
 public:
  BufferSource(const void* data, DType dtype, Shape shape, Shape byte_strides, std::shared_ptr<const void> owner,
               std::string name);
  std::string kind() const override { return "buffer"; }
  std::string describe() const override;
  std::string source_name() const override { return name_; }
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  const void* view(const Region& region) const override;
  const void* view_rows(const Region& region, int64_t& row_stride) const override;

 private:
  const char* data_;
  Shape strides_;
  bool c_contiguous_;
  std::shared_ptr<const void> owner_;
  std::string name_;
};

// A 0-d constant. Elementwise kernels read it as a constant register.
class ConstantNode : public Node {
 public:
  ConstantNode(DType dtype, const void* value);  // value in `dtype`
  std::string kind() const override { return "constant"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  const void* value() const { return bytes_; }
  double as_double() const;

 private:
  alignas(16) unsigned char bytes_[kMaxItemsize] = {0};
};

// value(flat C-order index) = a + b * f(index), computed for any region; never
// materialised. full: b = 0. arange: f = index. linspace: f = index, with the last
// value pinned to `stop` when requested.
class RangeNode : public Node {
 public:
  RangeNode(DType dtype, Shape shape, Shape chunks, double a, double b, std::string what, bool pin_last = false,
            double last = 0);
  // Integer flavour for exact integer arange/full.
  RangeNode(DType dtype, Shape shape, Shape chunks, int64_t a, int64_t b, std::string what);
  std::string kind() const override { return what_; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  const ChunkGrid* storage_grid() const override { return chunks_.empty() ? nullptr : &grid_; }

 private:
  bool integer_;
  double a_, b_, last_;
  int64_t ia_, ib_;
  bool pin_last_;
  std::string what_;
  Shape chunks_;
  ChunkGrid grid_;
};

}  // namespace b2lazy
