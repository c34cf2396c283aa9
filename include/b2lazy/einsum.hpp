// einsum (NumPy's subscript form), lowered onto b2lazy's lazy functions: diagonals for
// repeated indices, sums for indices only one operand has, permutations, broadcasting
// products and batched contractions (the matmul node), pairwise in an order chosen by cost.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "b2lazy/array.hpp"

namespace b2lazy {

// Subscripts parsed against the operands' dimensions. Labels are ints: the letters 'A'..'Z'
// are 0..25 and 'a'..'z' 26..51 (ASCII order, NumPy's implicit output order); the axes an
// ellipsis stands for are kEinsumEllipsis + k, k counted over the broadcast ellipsis (its
// first axis 0), right-aligned as NumPy broadcasts them.
constexpr int kEinsumEllipsis = 52;
struct EinsumSubscripts {
  std::vector<std::vector<int>> inputs;  // one label per axis of each operand
  std::vector<int> output;               // the result's axes
};
// NumPy's forms: "ij,jk->ik", implicit output ("ij,jk": the indices seen once, sorted,
// after the ellipsis axes), "...", repeated indices. ValueError naming the fault otherwise.
EinsumSubscripts parse_einsum(const std::string& subscripts, const std::vector<size_t>& ndims);
// A label as NumPy writes it ('i', or "...[k]" for an ellipsis axis).
std::string einsum_label_name(int label);

// How the pairwise order is chosen: left to right (NumPy's optimize=False), greedily
// (the pair whose result is smallest relative to its operands, then the fewest
// operations: opt_einsum's greedy), or the order of fewest operations over all orders
// (opt_einsum's optimal; greedy beyond 10 operands).
enum class EinsumOptimize { LeftToRight, Greedy, Optimal };
// One step: operands i < j of the current list are contracted, removed from it and their
// result appended (NumPy's einsum_path form).
using EinsumStep = std::pair<size_t, size_t>;
// The contraction order for operands of these shapes.
std::vector<EinsumStep> einsum_path(const EinsumSubscripts& s, const std::vector<Shape>& shapes, EinsumOptimize how);
// Operations (multiply-adds) a path costs, as its choice estimates them.
double einsum_path_flops(const EinsumSubscripts& s, const std::vector<Shape>& shapes,
                         const std::vector<EinsumStep>& path);

// The Einstein sum of `operands`, lazy, in their promoted dtype (NumPy's result_type).
Array einsum(const std::string& subscripts, const std::vector<Array>& operands,
             EinsumOptimize how = EinsumOptimize::Greedy);
// With an explicit path (steps as einsum_path returns them; checked).
Array einsum(const std::string& subscripts, const std::vector<Array>& operands, const std::vector<EinsumStep>& path);

}  // namespace b2lazy
