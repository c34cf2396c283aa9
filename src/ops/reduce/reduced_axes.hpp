// Which axes of an input a reduction removes (or keeps as length 1 with keepdims): the
// output's shape, the input region an output region needs (widened to the reduced axes
// whole), and the axes as text. Shared by the folding reductions and the holistic ones.
#pragma once
#include <string>
#include <vector>

#include "b2lazy/box.hpp"

namespace b2lazy {

struct ReducedAxes {
  ReducedAxes(const Shape& in, std::vector<bool> reduced, bool keepdims);
  Shape in_shape;
  std::vector<bool> reduced;
  bool keepdims;
  std::vector<int> out_axis;  // per input axis: its output axis, or -1

  Shape out_shape() const;
  // The input region output region `out` reads: its extent on kept axes, all of the reduced ones.
  Region widen(const Region& out) const;
  // Input elements folded into each output element.
  int64_t count() const;
  std::string axes() const;  // "0,2"
};

}  // namespace b2lazy
