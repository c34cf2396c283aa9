// x[key] = value: checked and normalised here, evaluated lazily by AssignNode or written
// through to a stored array (graph/assign_stored.cpp).
#pragma once
#include <vector>

#include "b2lazy/array.hpp"
#include "ops/shape/assign_node.hpp"

namespace b2lazy {

// x[key] = value normalised: the key's axes (negative steps walked forwards) and the value
// cast to x's dtype and shaped (count per axis), flipped along those axes. ValueError or
// IndexError (naming shapes and axes) for a key or value that does not fit x.
struct PreparedAssign {
  std::vector<KeyAxis> axes;
  Array value;
};
PreparedAssign prepare_assign(const Array& x, const std::vector<Index>& key, const Array& value);

}  // namespace b2lazy
