// How the files src/expr/functions*.cpp declare the registry's rows: one row() per
// function, its signature written as Python writes it, beside the call that reads the
// arguments and calls the builder.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "b2lazy/functions.hpp"
#include "expr/value.hpp"

namespace b2lazy::expr {

using Rows = std::vector<FunctionInfo>;
using F = FunctionFamily;

// Appends a row; the reference is for setting a family-made row's kernel (op, reduction).
FunctionInfo& row(Rows& rows, std::string name, FunctionFamily family, std::string_view signature,
                  std::string dtype_rule, FunctionCall call, std::vector<std::string> aliases = {},
                  bool method = false);

// Each file's rows, in the registry's order: elementwise, reductions, scans, products,
// shapes, constructors (functions.cpp); the rest of the Array API (functions_namespace.cpp);
// statistics and random sources; einsum, pad, rechunk; moving windows; group reductions;
// b2lazy.linalg's factorisations.
void core_rows(Rows& rows);
void namespace_rows(Rows& rows);
void statistics_rows(Rows& rows);
void einsum_pad_rows(Rows& rows);
void rolling_rows(Rows& rows);
void groupby_rows(Rows& rows);
void fft_rows(Rows& rows);         // the fft extension (functions_fft.cpp)
void linalg_ext_rows(Rows& rows);  // b2lazy.linalg's factorisations (functions_linalg.cpp)

}  // namespace b2lazy::expr
