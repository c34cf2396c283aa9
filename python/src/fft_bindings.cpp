// The fft extension (b2lazy/fft.hpp): what python/b2lazy/_fft.py calls.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <b2lazy/b2lazy.hpp>

#include "bindings.hpp"

namespace b2lazy_py {

using namespace b2lazy;

void bind_fft(nb::module_& m) {
  m.def("fft_1d",
        [](const std::string& kind, const Array& x, std::optional<int64_t> n, int axis, const std::string& norm) {
          const FftNorm nm = fft_norm(norm, kind);
          if (kind == "fft") return fft(x, n, axis, nm);
          if (kind == "ifft") return ifft(x, n, axis, nm);
          if (kind == "rfft") return rfft(x, n, axis, nm);
          if (kind == "irfft") return irfft(x, n, axis, nm);
          if (kind == "hfft") return hfft(x, n, axis, nm);
          if (kind == "ihfft") return ihfft(x, n, axis, nm);
          throw ValueError("fft_1d: unknown transform '" + kind + "'");
        });
  m.def("fft_nd", [](const std::string& kind, const Array& x, std::optional<std::vector<int64_t>> s,
                     std::optional<std::vector<int>> axes, const std::string& norm) {
    const FftNorm nm = fft_norm(norm, kind);
    if (kind == "fftn") return fftn(x, s, axes, nm);
    if (kind == "ifftn") return ifftn(x, s, axes, nm);
    if (kind == "rfftn") return rfftn(x, s, axes, nm);
    if (kind == "irfftn") return irfftn(x, s, axes, nm);
    throw ValueError("fft_nd: unknown transform '" + kind + "'");
  });
  m.def("fft_freq", [](bool real, int64_t n, double d, std::optional<std::string> dtype) {
    std::optional<DType> t;
    if (dtype) t = dtype_from_name(*dtype);
    return real ? rfftfreq(n, d, t) : fftfreq(n, d, t);
  });
  m.def("fft_shift", [](bool inverse, const Array& x, std::optional<std::vector<int>> axes) {
    return inverse ? ifftshift(x, axes) : fftshift(x, axes);
  });
  m.def("fft_lane_length", [] { return fft_lane_length(); });
  m.def("set_fft_lane_length", [](int64_t n) { set_fft_lane_length(n); });
}

}  // namespace b2lazy_py
