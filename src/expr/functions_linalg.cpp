// b2lazy.linalg's factorisations and solvers by LAPACK (b2lazy/linalg.hpp): the Array API
// linalg extension's functions that are not products or norms, under a linalg_ prefix in
// the namespace (b2lazy.linalg calls them, with the standard's names and result tuples).
// In expression strings those with several outputs give a tuple (Q then R; U, S, Vh; ...),
// read by index as in `linalg_qr(a)[0]`.
#include "b2lazy/error.hpp"
#include "b2lazy/linalg.hpp"
#include "expr/registry/rows.hpp"
#include "expr/value.hpp"

namespace b2lazy::expr {

namespace {
Value arr(Array a, const Args& x) { return Value::of(std::move(a), x.column()); }

Value tuple(const std::vector<Array>& items, const Args& x) {
  Value t = Value::of_kind(Value::Kind::Tuple, x.column());
  for (const Array& a : items) t.items.push_back(arr(a, x));
  return t;
}

template <class F> FunctionCall one(F f) {
  return [f](Args& x) {
    x.bind();
    return arr(f(x.array("x")), x);
  };
}
template <class F> FunctionCall many(F f) {
  return [f](Args& x) {
    x.bind();
    return tuple(f(x.array("x")), x);
  };
}
}  // namespace

void linalg_ext_rows(Rows& r) {
  const std::string fl = "x's dtype made floating (integers and bool: float64; float16: float32)";
  const std::string real = "the real floating dtype of x's (made floating as for the others)";
  row(r, "linalg_cholesky", F::Linalg, "x, /, *, upper=False", fl, [](Args& x) {
    x.bind();
    return arr(linalg_cholesky(x.array("x"), x.boolean("upper")), x);
  });
  row(r, "linalg_qr", F::Linalg, "x, /, *, mode='reduced'", "(Q, R): " + fl, [](Args& x) {
    x.bind();
    const Value& v = x.get("mode");
    if (v.kind != Value::Kind::String) x.bad("mode", "a string ('reduced', 'complete' or 'r')");
    return tuple(linalg_qr(x.array("x"), v.str), x);
  });
  row(r, "linalg_eigh", F::Linalg, "x, /", "(eigenvalues, eigenvectors): " + real + "; " + fl,
      many([](const Array& a) { return linalg_eigh(a); }));
  row(r, "linalg_eigvalsh", F::Linalg, "x, /", real, one([](const Array& a) { return linalg_eigvalsh(a); }));
  row(r, "linalg_svd", F::Linalg, "x, /, *, full_matrices=True", "(U, S, Vh): S " + real + "; U and Vh " + fl,
      [](Args& x) {
        x.bind();
        return tuple(linalg_svd(x.array("x"), x.boolean("full_matrices")), x);
      });
  row(r, "linalg_svdvals", F::Linalg, "x, /", real, one([](const Array& a) { return linalg_svdvals(a); }));
  row(r, "linalg_svd_compressed", F::Linalg, "x, /, k, *, n_power_iter=0, n_oversamples=10, seed=0",
      "(U, S, Vh): S " + real + "; U and Vh " + fl, [](Args& x) {
        x.bind();
        const int64_t seed = x.integer("seed");
        if (seed < 0) x.bad("seed", "an int of 0 or more");
        return tuple(linalg_svd_compressed(x.array("x"), x.integer("k"), x.integer("n_power_iter"),
                                           x.integer("n_oversamples"), static_cast<uint64_t>(seed)),
                     x);
      });
  row(r, "linalg_slogdet", F::Linalg, "x, /", "(sign, logabsdet): sign " + fl + "; logabsdet " + real,
      many([](const Array& a) { return linalg_slogdet(a); }));
  row(r, "linalg_det", F::Linalg, "x, /", fl, one([](const Array& a) { return linalg_det(a); }));
  row(r, "linalg_inv", F::Linalg, "x, /", fl, one([](const Array& a) { return linalg_inv(a); }));
  row(r, "linalg_solve", F::Linalg, "x1, x2, /", "the inputs' promoted dtype made floating", [](Args& x) {
    x.bind();
    return arr(linalg_solve(x.array("x1"), x.array("x2")), x);
  });
  row(r, "linalg_eig", F::Linalg, "x, /", "(eigenvalues, eigenvectors): x's complex dtype",
      many([](const Array& a) { return linalg_eig(a); }));
  row(r, "linalg_eigvals", F::Linalg, "x, /", "x's complex dtype",
      one([](const Array& a) { return linalg_eigvals(a); }));
}

}  // namespace b2lazy::expr
