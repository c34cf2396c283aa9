// The function registry: one entry per function of the b2lazy namespace that builds a
// lazy array (the pattern: Arrow's compute FunctionRegistry). Each entry holds the name,
// its aliases, the parameters with their kinds and defaults, the dtype rule and the kernel
// it runs. The expression parser binds calls by it, the nanobind module hands it to the
// Python package, which gives every function this signature and these defaults — so
// names, aliases and defaults cannot drift between C++, expression strings, the command
// and Python.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "b2lazy/array.hpp"
#include "b2lazy/ops.hpp"

namespace b2lazy {

// Python's parameter kinds: f(a, /, b, *c, d) has a positional-only, b positional or
// keyword, c collecting the rest of the positionals, d keyword-only.
enum class ParamKind : uint8_t { PositionalOnly, PositionalOrKeyword, VarPositional, KeywordOnly };

struct Param {
  std::string name;
  ParamKind kind = ParamKind::PositionalOrKeyword;
  // The default as a Python literal (None, True, 0, -1, 2.5, 'linear'); nullopt: required.
  std::optional<std::string> default_value;
};

enum class FunctionFamily : uint8_t {
  Elementwise,  // one fused kernel per output block (FunctionInfo::op)
  Reduction,    // a registered reduction kernel (FunctionInfo::reduction)
  Holistic,     // median / quantile / percentile: slices pulled whole or selected in passes
  Scan,         // cumulative sums and products, totals carried across chunks
  Linalg,       // products: BLAS tiles
  Shape,        // views and rearrangements: regions mapped, nothing computed
  Index,        // take, nonzero: only the chunks the indices touch
  Creation,     // constants, ranges, eye: computed for whatever region is asked
};

struct FunctionInfo {
  std::string name;
  std::vector<std::string> aliases;
  FunctionFamily family = FunctionFamily::Elementwise;
  std::vector<Param> params;
  std::string dtype_rule;              // how the result's dtype follows from the arguments
  std::optional<Op> op;                // Elementwise: its kernel
  std::optional<Reduction> reduction;  // Reduction: its kernel
  bool method = false;                 // also an Array method: x.name(...)

  // "(x, /, axis=None, *, keepdims=False)", as Python's inspect.signature prints it.
  std::string signature() const;
};

// Every function, in a stable order (elementwise, reductions, then the rest).
const std::vector<FunctionInfo>& function_registry();
// By name or alias; nullptr when there is no such function.
const FunctionInfo* find_function(std::string_view name);
const char* family_name(FunctionFamily f);

// The parameters of a signature written as Python writes it ("x, /, axis=None, *,
// keepdims=False"); throws ValueError on a malformed one. Used to declare the registry.
std::vector<Param> parse_signature(std::string_view text);

}  // namespace b2lazy
