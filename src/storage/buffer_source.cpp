#include "storage/buffer_source.hpp"

#include <cstring>

#include "core/dispatch.hpp"
#include "core/float_to_int.hpp"
#include "core/strided_copy.hpp"

namespace b2lazy {

BufferSource::BufferSource(const void* data, DType dtype, Shape shape, Shape byte_strides_,
                           std::shared_ptr<const void> owner, std::string name)
    : Node(dtype, std::move(shape)),
      data_(static_cast<const char*>(data)),
      strides_(std::move(byte_strides_)),
      owner_(std::move(owner)),
      name_(std::move(name)) {
  Shape dense = byte_strides(this->shape(), itemsize(dtype));
  if (strides_.empty()) strides_ = dense;
  c_contiguous_ = true;
  for (size_t d = 0; d < ndim(); ++d)
    if (this->shape()[d] > 1 && strides_[d] != dense[d]) c_contiguous_ = false;
}

std::string BufferSource::describe() const {
  return "buffer '" + name_ + "' " + shape_str(shape()) + " " + dtype_name(dtype());
}

const void* BufferSource::view(const Region& r) const {
  if (!c_contiguous_ || !r.unit_steps()) return nullptr;
  // Dense iff after the first axis with count > 1 every axis is taken whole.
  size_t d = 0;
  while (d < ndim() && r.count[d] == 1) ++d;
  for (size_t e = d + 1; e < ndim(); ++e)
    if (r.count[e] != shape()[e]) return nullptr;
  int64_t off = 0;
  for (size_t e = 0; e < ndim(); ++e) off += r.start[e] * strides_[e];
  return data_ + off;
}

const void* BufferSource::view_rows(const Region& r, int64_t& row_stride) const {
  if (!c_contiguous_ || !r.unit_steps() || ndim() == 0 || !is_row_strided_range(r.bounds(), shape())) return nullptr;
  int64_t off = 0;
  for (size_t e = 0; e < ndim(); ++e) off += r.start[e] * strides_[e];
  row_stride = shape().back();
  return data_ + off;
}

void BufferSource::fill(const Region& r, void* out, ThreadState&) const {
  const size_t nd = ndim(), isz = itemsize(dtype());
  const char* src = data_;
  Shape ss(nd);
  for (size_t d = 0; d < nd; ++d) {
    src += r.start[d] * strides_[d];
    ss[d] = r.step[d] * strides_[d];
  }
  Shape ds = byte_strides(r.count, isz);
  copy_strided(nd, r.count.data(), src, ss.data(), static_cast<char*>(out), ds.data(), isz);
}

ConstantNode::ConstantNode(DType dtype, const void* value) : Node(dtype, {}) {
  std::memcpy(bytes_, value, itemsize(dtype));
}

double ConstantNode::as_double() const {
  return dispatch(dtype(), [&]<class T>(T*) { return real_double(*reinterpret_cast<const T*>(bytes_)); });
}

std::string ConstantNode::describe() const {
  return std::string("constant ") + dtype_name(dtype()) + " " + std::to_string(as_double());
}

void ConstantNode::fill(const Region& r, void* out, ThreadState&) const {
  size_t isz = itemsize(dtype());
  char* o = static_cast<char*>(out);
  for (int64_t i = 0; i < r.size(); ++i) std::memcpy(o + i * isz, bytes_, isz);
}

RangeNode::RangeNode(DType dtype, Shape shape, Shape chunks, double a, double b, std::string what, bool pin_last,
                     double last)
    : Node(dtype, std::move(shape)),
      integer_(false),
      a_(a),
      b_(b),
      last_(last),
      ia_(0),
      ib_(0),
      pin_last_(pin_last),
      what_(std::move(what)),
      chunks_(std::move(chunks)) {
  if (!chunks_.empty()) grid_ = ChunkGrid(this->shape(), chunks_);
}

RangeNode::RangeNode(DType dtype, Shape shape, Shape chunks, int64_t a, int64_t b, std::string what)
    : Node(dtype, std::move(shape)),
      integer_(true),
      a_(0),
      b_(0),
      last_(0),
      ia_(a),
      ib_(b),
      pin_last_(false),
      what_(std::move(what)),
      chunks_(std::move(chunks)) {
  if (!chunks_.empty()) grid_ = ChunkGrid(this->shape(), chunks_);
}

std::string RangeNode::describe() const {
  std::string r = what_ + " " + shape_str(shape()) + " " + dtype_name(dtype());
  return integer_ ? r + " start=" + std::to_string(ia_) + " step=" + std::to_string(ib_)
                  : r + " start=" + std::to_string(a_) + " step=" + std::to_string(b_);
}

void RangeNode::fill(const Region& r, void* out, ThreadState&) const {
  const size_t nd = ndim();
  const int64_t n = r.size(), total = size();
  Shape cs = c_strides(shape());
  Shape idx(nd, 0);
  dispatch(dtype(), [&]<class T>(T*) {
    T* o = static_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) {
      int64_t flat = 0;
      for (size_t d = 0; d < nd; ++d) flat += (r.start[d] + idx[d] * r.step[d]) * cs[d];
      if (integer_) {
        // Modulo 2**64 (exact: arange's values fit int64, only ib_ * flat may not).
        o[i] = static_cast<T>(static_cast<int64_t>(static_cast<uint64_t>(ia_) +
                                                   static_cast<uint64_t>(ib_) * static_cast<uint64_t>(flat)));
      } else {
        double v = (pin_last_ && flat == total - 1) ? last_ : a_ + b_ * static_cast<double>(flat);
        o[i] = numeric_cast<T>(v);
      }
      for (size_t d = nd; d-- > 0;) {
        if (++idx[d] < r.count[d]) break;
        idx[d] = 0;
      }
    }
  });
}

}  // namespace b2lazy
