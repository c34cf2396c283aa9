// einsum lowered onto the lazy functions: per operand, broadcast (length-1) axes indexed
// away, diagonals of repeated labels, sums of labels no one else needs; then pairwise
// contractions in the order einsum_path chooses — a broadcasting product when nothing is
// contracted, a fused product-and-sum when nothing but batch labels stays (a dot per
// batch), else one matmul node over (batch, M, K, N) groups; last, the output's order.
#include <algorithm>
#include <map>
#include <set>

#include "b2lazy/einsum.hpp"
#include "b2lazy/error.hpp"
#include "graph/contract.hpp"

namespace b2lazy {

namespace {

struct Term {
  Array a;
  std::vector<int> labels;  // one per axis, each once (after prepare)
};

std::vector<int> positions(const std::vector<int>& labels, const std::vector<int>& which) {
  std::vector<int> p;
  for (int l : which) p.push_back(static_cast<int>(std::find(labels.begin(), labels.end(), l) - labels.begin()));
  return p;
}

// x's axes in the order of `want` (labels of x, each once).
Term arranged(const Term& t, const std::vector<int>& want) {
  return {permute_dims(t.a, positions(t.labels, want)), want};
}

Array summed(const Array& x, std::vector<int> axes, DType t) {
  if (axes.empty()) return x;
  ReduceOptions o;
  o.axis = std::move(axes);
  o.dtype = t;
  return sum(x, o);
}

// Drops the labels of `t` not in `needed` (summed), in place.
void sum_unneeded(Term& t, const std::set<int>& needed, DType dt) {
  std::vector<int> axes, rest;
  for (size_t d = 0; d < t.labels.size(); ++d) {
    if (needed.count(t.labels[d])) rest.push_back(t.labels[d]);
    else axes.push_back(static_cast<int>(d));
  }
  t.a = summed(t.a, axes, dt);
  t.labels = rest;
}

// One operand made ready: broadcast axes gone, repeated labels turned into diagonals,
// labels only it has (and not the output) summed.
Term prepare(Array a, std::vector<int> labels, size_t k, const std::map<int, int64_t>& size,
             const std::set<int>& needed, DType dt) {
  // Length-1 axes of a longer label: constant along it, so the label is not the operand's.
  std::vector<Index> ix;
  std::vector<int> kept;
  bool drop = false;
  for (size_t d = 0; d < labels.size(); ++d) {
    if (a.shape()[d] == 1 && size.at(labels[d]) != 1) {
      ix.push_back(Index::at(0));
      drop = true;
    } else {
      ix.push_back(Index::slice());
      kept.push_back(labels[d]);
    }
  }
  if (drop) a = a[ix], labels = kept;
  // Repeated labels: their diagonal, as a last axis.
  for (;;) {
    size_t p = 0, q = 0;
    for (size_t i = 0; i < labels.size() && !q; ++i)
      for (size_t j = i + 1; j < labels.size(); ++j)
        if (labels[i] == labels[j]) {
          p = i, q = j;
          break;
        }
    if (!q) break;
    if (a.shape()[p] != a.shape()[q])
      throw ValueError("einsum: operand " + std::to_string(k) + " repeats subscript '" + einsum_label_name(labels[p]) +
                       "' on axes of lengths " + std::to_string(a.shape()[p]) + " and " + std::to_string(a.shape()[q]) +
                       " (shape " + shape_str(a.shape()) + ")");
    a = diagonal(moveaxis(a, {static_cast<int>(p), static_cast<int>(q)}, {-2, -1}), 0);
    const int l = labels[p];
    labels.erase(labels.begin() + static_cast<std::ptrdiff_t>(q));
    labels.erase(labels.begin() + static_cast<std::ptrdiff_t>(p));
    labels.push_back(l);
  }
  Term t{a, labels};
  sum_unneeded(t, needed, dt);
  return t;
}

Term pair(Term x, Term y, const std::set<int>& needed, DType dt) {
  sum_unneeded(
      x,
      [&] {  // a label x alone has, unneeded later: summed before the product
        std::set<int> n = needed;
        n.insert(y.labels.begin(), y.labels.end());
        return n;
      }(),
      dt);
  sum_unneeded(
      y,
      [&] {
        std::set<int> n = needed;
        n.insert(x.labels.begin(), x.labels.end());
        return n;
      }(),
      dt);
  std::vector<int> batch, inner, xfree, yfree;
  for (int l : x.labels) {
    const bool shared = std::count(y.labels.begin(), y.labels.end(), l) > 0;
    (shared ? (needed.count(l) ? batch : inner) : xfree).push_back(l);
  }
  for (int l : y.labels)
    if (!std::count(x.labels.begin(), x.labels.end(), l)) yfree.push_back(l);
  auto cat = [](std::initializer_list<const std::vector<int>*> parts) {
    std::vector<int> v;
    for (auto* p : parts) v.insert(v.end(), p->begin(), p->end());
    return v;
  };
  std::vector<int> out = cat({&batch, &xfree, &yfree});
  if (inner.empty()) {
    // Nothing contracted: an outer or elementwise product, broadcasting.
    Array a = arranged(x, cat({&batch, &xfree})).a, b = arranged(y, cat({&batch, &yfree})).a;
    for (size_t i = 0; i < yfree.size(); ++i) a = expand_dims(a, -1);
    for (size_t i = 0; i < xfree.size(); ++i) b = expand_dims(b, static_cast<int>(batch.size()));
    return {elementwise(Op::Multiply, {a, b}), out};
  }
  if (xfree.empty() && yfree.empty()) {
    // A dot per batch element: one fused product summed over the inner labels.
    Array a = arranged(x, cat({&batch, &inner})).a, b = arranged(y, cat({&batch, &inner})).a;
    std::vector<int> axes;
    for (size_t i = 0; i < inner.size(); ++i) axes.push_back(static_cast<int>(batch.size() + i));
    return {summed(elementwise(Op::Multiply, {a, b}), axes, dt), out};
  }
  Array a = arranged(x, cat({&batch, &xfree, &inner})).a;
  Array b = arranged(y, cat({&batch, &inner, &yfree})).a;
  if (batch.empty() && xfree.size() == 1 && inner.size() == 1 && yfree.size() == 1)
    return {matmul(a, b), out};  // the plain product (and x^T x recognised as such)
  Shape shape;
  for (size_t i = 0; i < batch.size() + xfree.size(); ++i) shape.push_back(a.shape()[i]);
  for (size_t i = 0; i < yfree.size(); ++i) shape.push_back(b.shape()[batch.size() + inner.size() + i]);
  return {contract(a, b, batch.size(), xfree.size(), inner.size(), yfree.size(), shape), out};
}

Array lower(const std::string& subscripts, const std::vector<Array>& ops, const std::vector<EinsumStep>* given,
            EinsumOptimize how) {
  std::vector<size_t> ndims;
  for (const Array& a : ops) ndims.push_back(a.ndim());
  const EinsumSubscripts s = parse_einsum(subscripts, ndims);
  DType dt = ops[0].dtype();
  for (const Array& a : ops) dt = promote(dt, a.dtype());
  // Each label's length: equal wherever it appears, or 1 (broadcast).
  std::map<int, int64_t> size;
  std::map<int, int> seen;
  for (size_t k = 0; k < ops.size(); ++k) {
    std::map<int, int64_t> mine;  // a repeated label's axes must have one length (no broadcasting)
    for (size_t d = 0; d < ndims[k]; ++d) {
      const int l = s.inputs[k][d];
      const int64_t n = ops[k].shape()[d];
      const auto [at, first] = mine.emplace(l, n);
      if (!first && at->second != n)
        throw ValueError("einsum: operand " + std::to_string(k) + " repeats subscript '" + einsum_label_name(l) +
                         "' on axes of lengths " + std::to_string(at->second) + " and " + std::to_string(n) +
                         " (shape " + shape_str(ops[k].shape()) + ")");
      auto [it, fresh] = size.emplace(l, n);
      if (!fresh && it->second == 1) it->second = n;
      if (!fresh && it->second != n && n != 1) {
        std::string shapes;
        for (const Array& a : ops) shapes += (shapes.empty() ? "" : ", ") + shape_str(a.shape());
        throw ValueError("einsum: subscript '" + einsum_label_name(l) + "' has lengths " + std::to_string(it->second) +
                         " and " + std::to_string(n) + " (operand " + std::to_string(k) + "; shapes " + shapes +
                         ") that do not broadcast");
      }
      if (first) ++seen[l];
    }
  }
  const std::set<int> output(s.output.begin(), s.output.end());
  std::vector<Term> terms;
  for (size_t k = 0; k < ops.size(); ++k) {
    std::set<int> needed = output;
    for (auto [l, n] : seen)
      if (n > 1) needed.insert(l);
    Array a = ops[k].dtype() == dt ? ops[k] : ops[k].astype(dt);
    terms.push_back(prepare(a, s.inputs[k], k, size, needed, dt));
  }
  std::vector<EinsumStep> path;
  {
    EinsumSubscripts prepared{{}, s.output};
    std::vector<Shape> shapes;
    for (const Term& t : terms) prepared.inputs.push_back(t.labels), shapes.push_back(t.a.shape());
    if (given) {
      (void)einsum_path_flops(prepared, shapes, *given);  // checks the steps
      path = *given;
    } else {
      path = einsum_path(prepared, shapes, how);
    }
  }
  for (const EinsumStep& st : path) {
    std::set<int> needed = output;
    for (size_t k = 0; k < terms.size(); ++k)
      if (k != st.first && k != st.second) needed.insert(terms[k].labels.begin(), terms[k].labels.end());
    Term r = pair(terms[st.first], terms[st.second], needed, dt);
    terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(st.second));
    terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(st.first));
    terms.push_back(std::move(r));
  }
  Term last = terms[0];
  sum_unneeded(last, output, dt);
  // Output labels the result lacks (every operand had them of length 1): broadcast back.
  Shape full;
  bool missing = false;
  for (int l : s.output) {
    full.push_back(size.at(l));
    if (!std::count(last.labels.begin(), last.labels.end(), l)) {
      last.a = expand_dims(last.a, static_cast<int>(last.labels.size()));
      last.labels.push_back(l);
      missing = true;
    }
  }
  Array r = arranged(last, s.output).a;
  if (missing) r = broadcast_to(r, full);
  return r.dtype() == dt ? r : r.astype(dt);
}

}  // namespace

Array einsum(const std::string& subscripts, const std::vector<Array>& operands, EinsumOptimize how) {
  if (operands.empty()) throw ValueError("einsum: at least one operand is required");
  return lower(subscripts, operands, nullptr, how);
}

Array einsum(const std::string& subscripts, const std::vector<Array>& operands, const std::vector<EinsumStep>& path) {
  if (operands.empty()) throw ValueError("einsum: at least one operand is required");
  return lower(subscripts, operands, &path, EinsumOptimize::Greedy);
}

}  // namespace b2lazy
