// Elementwise lookups in a sorted table held by the node (isin's set, digitize's bins,
// a histogram's edges): output region -> the same region of the input, values found by
// binary search. NaN sorts after every number, as in NumPy's sorts and searches.
#pragma once
#include <vector>

#include "b2lazy/node.hpp"

namespace b2lazy {

enum class LookupMode : uint8_t {
  Isin,           // bool: the value is in the table (a set: sorted, unique, no NaN)
  IsinInvert,     // bool: it is not
  CountBelow,     // int64: how many table values are < x (searchsorted left)
  CountNotAbove,  // int64: how many are <= x (searchsorted right)
  HistogramBin,   // int64: i with t[i] <= x < t[i + 1], the last bin closed; n - 1 (the
                  // number of bins) for x outside [t[0], t[n - 1]] or NaN
};

class LookupNode : public Node {
 public:
  // `table`: sorted values of the input's dtype, as its bytes.
  LookupNode(NodePtr input, std::vector<unsigned char> table, LookupMode mode);
  std::string kind() const override { return "lookup"; }
  std::string describe() const override;
  void fill(const Region& region, void* out, ThreadState& ts) const override;
  std::vector<Region> input_regions(const Region& region) const override { return {region}; }

 private:
  std::vector<unsigned char> table_;
  int64_t n_;
  LookupMode mode_;
};

}  // namespace b2lazy
