// The Array API's fft extension (b2lazy.fft), lazy and out of core: a region of a
// transform along an axis pulls the whole lanes it crosses (the axis entire, the other
// axes as asked) and transforms them by FFTW. A lane longer than fft_lane_length()
// elements is transformed in four steps (Bailey): the lane viewed as an N1 x N2 matrix,
// transforms of length N1 along its columns, twiddle factors, transforms of length N2
// along its rows, the transpose read back, each step a lazy node whose result the plan
// keeps (spilled when large) for the next.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "b2lazy/array.hpp"

namespace b2lazy {

// NumPy's `norm`: which direction is scaled by 1/n ("backward": the inverse; "forward":
// the forward transform; "ortho": both by 1/sqrt(n)).
enum class FftNorm : uint8_t { Backward, Ortho, Forward };
// "backward", "ortho" or "forward" (ValueError naming `fn` otherwise).
FftNorm fft_norm(const std::string& name, const std::string& fn);

// One-dimensional transforms along `axis` of length `n` (the input cropped or padded with
// zeros to n; default: its length along the axis; irfft and hfft: 2 * (m - 1)).
// Dtypes: complex64 stays complex64, float32 and float16 give complex64, everything else
// complex128; irfft and hfft give the matching real dtype; rfft and ihfft refuse complex x.
Array fft(const Array& x, std::optional<int64_t> n = {}, int axis = -1, FftNorm norm = FftNorm::Backward);
Array ifft(const Array& x, std::optional<int64_t> n = {}, int axis = -1, FftNorm norm = FftNorm::Backward);
Array rfft(const Array& x, std::optional<int64_t> n = {}, int axis = -1, FftNorm norm = FftNorm::Backward);
Array irfft(const Array& x, std::optional<int64_t> n = {}, int axis = -1, FftNorm norm = FftNorm::Backward);
Array hfft(const Array& x, std::optional<int64_t> n = {}, int axis = -1, FftNorm norm = FftNorm::Backward);
Array ihfft(const Array& x, std::optional<int64_t> n = {}, int axis = -1, FftNorm norm = FftNorm::Backward);

// N-dimensional transforms: one-dimensional ones along each of `axes` (default: the last
// len(s) axes, or all), of lengths `s` (-1: the input's length along that axis).
Array fftn(const Array& x, const std::optional<std::vector<int64_t>>& s = {},
           const std::optional<std::vector<int>>& axes = {}, FftNorm norm = FftNorm::Backward);
Array ifftn(const Array& x, const std::optional<std::vector<int64_t>>& s = {},
            const std::optional<std::vector<int>>& axes = {}, FftNorm norm = FftNorm::Backward);
Array rfftn(const Array& x, const std::optional<std::vector<int64_t>>& s = {},
            const std::optional<std::vector<int>>& axes = {}, FftNorm norm = FftNorm::Backward);
Array irfftn(const Array& x, const std::optional<std::vector<int64_t>>& s = {},
             const std::optional<std::vector<int>>& axes = {}, FftNorm norm = FftNorm::Backward);

// The sample frequencies of a transform of length n with sample spacing d (creation
// functions, computed for any region): [0, 1, ..., -(n // 2), ..., -1] / (d * n), and
// rfftfreq's [0, 1, ..., n // 2] / (d * n). dtype float64 (default) or float32.
Array fftfreq(int64_t n, double d = 1.0, std::optional<DType> dtype = {});
Array rfftfreq(int64_t n, double d = 1.0, std::optional<DType> dtype = {});
// The zero frequency moved to the middle of `axes` (default all), as a lazy roll; and back.
Array fftshift(const Array& x, const std::optional<std::vector<int>>& axes = {});
Array ifftshift(const Array& x, const std::optional<std::vector<int>>& axes = {});

// Lanes longer than this many elements are transformed in four steps (default 2**22).
int64_t fft_lane_length();
void set_fft_lane_length(int64_t n);

}  // namespace b2lazy
