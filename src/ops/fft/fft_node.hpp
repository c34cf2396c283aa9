// One-dimensional discrete Fourier transforms along one axis, by FFTW: a region of the
// result pulls the whole lanes it crosses (the axis entire, the other axes as asked),
// transforms them, and writes the region's part. A lane must fit a worker's share of
// max_memory (the plan's projection refuses it otherwise); longer ones are cut into four
// steps by the builder (src/graph/fft_builder.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "b2lazy/node.hpp"

namespace b2lazy {

// C2C: complex lanes of length n to complex ones of length n; R2C: real lanes of length n
// to the n / 2 + 1 non-negative frequencies; C2R: those n / 2 + 1 to the real n.
enum class FftKind : uint8_t { C2C, R2C, C2R };

class FftNode : public Node {
 public:
  // `input`: complex (C2C, C2R) or real (R2C) of one precision; its lanes along `axis`
  // are cropped or padded with zeros to the length the transform reads (n, or n / 2 + 1
  // for C2R). `inverse`: the exponent's sign is + (C2C). The result is multiplied by `scale`.
  FftNode(NodePtr input, int axis, FftKind kind, int64_t n, bool inverse, double scale);
  std::string kind() const override;
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override;
  Shape preferred_chunks() const override;
  int64_t fill_bytes(const Region& region, const MemoryModel& m) const override;
  // Whole lanes: cut by the output chunks, a transform is computed once (kept) in its own.
  bool cacheable() const override { return true; }
  Region computed_region(const Region& region) const override;
  Shape kept_chunks(const Shape& box, size_t target_bytes, size_t most_bytes) const override;

  // The output dtype of a transform of `input` (complex of its precision; C2R: real).
  static DType output_dtype(DType input, FftKind kind);
  // Elements of a lane the transform reads (n, or n / 2 + 1 for C2R).
  int64_t lane_in() const { return kind_ == FftKind::C2R ? n_ / 2 + 1 : n_; }

 private:
  Shape lane_chunks(int64_t bytes) const;
  int axis_;
  FftKind kind_;
  int64_t n_;
  bool inverse_;
  double scale_;
};

// exp(-+2 pi i r c / n) at [r, c] of an (rows, cols) array (the four-step FFT's twiddle
// factors, r c reduced modulo n exactly), complex64 or complex128; computed for any region.
class TwiddleNode : public Node {
 public:
  TwiddleNode(DType dtype, int64_t rows, int64_t cols, int64_t n, bool inverse);
  std::string kind() const override { return "twiddle"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;

 private:
  int64_t n_;
  bool inverse_;
};

}  // namespace b2lazy
