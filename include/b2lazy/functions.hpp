// The function registry: one row per function of the b2lazy namespace that builds a lazy
// array (the pattern: Arrow's compute FunctionRegistry). Each row holds the name, its
// aliases, the parameters with their kinds and defaults, the dtype rule, the kernel it runs
// and its call: how it reads its arguments and which builder it calls. Expression strings,
// the Python package (one binding, _core.call, and wrappers made from the rows) and the
// command all call a function through its row (call_function, b2lazy/call.hpp) — so names,
// aliases, defaults and argument checks cannot drift between them. The rows are written in
// src/expr/functions*.cpp, each beside its call.
#pragma once
#include <cstdint>
#include <functional>
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

namespace expr {
struct Value;
class Args;
}  // namespace expr
// A row's call: reads the arguments (bound to the row's signature by Args::bind) and
// builds the result (b2lazy/call.hpp).
using FunctionCall = std::function<expr::Value(expr::Args&)>;

struct FunctionInfo {
  std::string name;
  std::vector<std::string> aliases;
  FunctionFamily family = FunctionFamily::Elementwise;
  std::vector<Param> params;
  std::string dtype_rule;              // how the result's dtype follows from the arguments
  std::optional<Op> op;                // Elementwise: its kernel
  std::optional<Reduction> reduction;  // Reduction: its kernel
  bool method = false;                 // also an Array method: x.name(...)
  FunctionCall call;

  // "(x, /, axis=None, *, keepdims=False)", as Python's inspect.signature prints it.
  std::string signature() const;
};

// Every function, in a stable order (elementwise, reductions, then the rest).
const std::vector<FunctionInfo>& function_registry();
// By name or alias; nullptr when there is no such function.
const FunctionInfo* find_function(std::string_view name);
// Every name a function can be called by (names and aliases), sorted.
std::vector<std::string> function_names();
const char* family_name(FunctionFamily f);

// The parameters of a signature written as Python writes it ("x, /, axis=None, *,
// keepdims=False"); throws ValueError on a malformed one. Used to declare the registry.
std::vector<Param> parse_signature(std::string_view text);

}  // namespace b2lazy
