// einsum, pad and rechunk (b2lazy/einsum.hpp, b2lazy/pad.hpp). The Python package
// normalises the arguments (python/b2lazy/_einsum_pad.py); checks of values stay in C++.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <b2lazy/b2lazy.hpp>
#include <b2lazy/einsum.hpp>
#include <b2lazy/pad.hpp>

#include "bindings.hpp"

namespace b2lazy_py {

using namespace b2lazy;

namespace {
EinsumOptimize optimize_of(const std::string& how) {
  if (how == "greedy") return EinsumOptimize::Greedy;
  if (how == "optimal") return EinsumOptimize::Optimal;
  if (how == "none") return EinsumOptimize::LeftToRight;
  throw ValueError("einsum: optimize '" + how + "' is not one of True, False, 'greedy', 'optimal'");
}

std::vector<Shape> shapes_of(const std::vector<Array>& ops) {
  std::vector<Shape> s;
  for (const Array& a : ops) s.push_back(a.shape());
  return s;
}

std::vector<size_t> ndims_of(const std::vector<Array>& ops) {
  std::vector<size_t> n;
  for (const Array& a : ops) n.push_back(a.ndim());
  return n;
}
}  // namespace

void bind_einsum_pad(nb::module_& m) {
  m.def("einsum", [](const std::string& subscripts, const std::vector<Array>& ops, const std::string& how) {
    return einsum(subscripts, ops, optimize_of(how));
  });
  m.def("einsum_with_path",
        [](const std::string& subscripts, const std::vector<Array>& ops,
           const std::vector<std::pair<size_t, size_t>>& path) { return einsum(subscripts, ops, path); });
  // (the path chosen, its estimated operations, and left to right's) for einsum_path.
  m.def("einsum_path", [](const std::string& subscripts, const std::vector<Array>& ops, const std::string& how) {
    const EinsumSubscripts s = parse_einsum(subscripts, ndims_of(ops));
    const std::vector<Shape> shapes = shapes_of(ops);
    const std::vector<EinsumStep> path = einsum_path(s, shapes, optimize_of(how));
    const std::vector<EinsumStep> naive = einsum_path(s, shapes, EinsumOptimize::LeftToRight);
    return nb::make_tuple(path, einsum_path_flops(s, shapes, path), einsum_path_flops(s, shapes, naive));
  });
  m.def(
      "pad",
      [](const Array& x, const std::vector<int64_t>& widths, const Shape& widths_shape, const std::string& mode,
         std::optional<Array> values) {
        return pad(x, pad_widths(widths, widths_shape, x.ndim()), pad_mode(mode), values);
      },
      nb::arg("x"), nb::arg("widths"), nb::arg("widths_shape"), nb::arg("mode"), nb::arg("values").none());
  m.def(
      "sliding_window_view",
      [](const Array& x, const std::vector<int64_t>& window, std::optional<std::vector<int>> axes) {
        return sliding_window_view(x, window, axes);
      },
      nb::arg("x"), nb::arg("window"), nb::arg("axes").none());
  // chunks: per axis (kind, lengths): ("length", [n]), ("blocks", [b0, b1, ...]), ("whole", []),
  // ("keep", []), ("auto", []); one entry for all axes, or one per axis.
  m.def("rechunk", [](const Array& x, const std::vector<std::pair<std::string, std::vector<int64_t>>>& spec) {
    std::vector<ChunkSpec> cs;
    for (size_t d = 0; d < spec.size(); ++d) {
      const auto& [kind, v] = spec[d];
      if (kind == "length") cs.push_back(ChunkSpec::of(v.at(0)));
      else if (kind == "blocks") cs.push_back(chunk_spec_of_blocks(v, d < x.ndim() ? x.shape()[d] : 0, d));
      else if (kind == "whole") cs.push_back({ChunkSpec::Kind::Whole, 0});
      else if (kind == "keep") cs.push_back({ChunkSpec::Kind::Keep, 0});
      else cs.push_back({ChunkSpec::Kind::Auto, 0});
    }
    return rechunk(x, cs);
  });
}

}  // namespace b2lazy_py
