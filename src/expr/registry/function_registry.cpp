// The function registry's table (include/b2lazy/functions.hpp), gathered from the rows
// that src/expr/functions*.cpp declare beside their calls, and call_function, the one way
// every face calls a function.
#include <algorithm>
#include <map>
#include <stdexcept>

#include "b2lazy/call.hpp"
#include "b2lazy/error.hpp"
#include "b2lazy/functions.hpp"
#include "expr/registry/rows.hpp"

namespace b2lazy {
namespace expr {

FunctionInfo& row(Rows& rows, std::string name, FunctionFamily family, std::string_view signature,
                  std::string dtype_rule, FunctionCall call, std::vector<std::string> aliases, bool method) {
  FunctionInfo f;
  f.name = std::move(name);
  f.family = family;
  f.params = parse_signature(signature);
  f.dtype_rule = std::move(dtype_rule);
  f.call = std::move(call);
  f.aliases = std::move(aliases);
  f.method = method;
  rows.push_back(std::move(f));
  return rows.back();
}

}  // namespace expr

namespace {

std::vector<FunctionInfo> build() {
  expr::Rows rows;
  expr::core_rows(rows);
  expr::namespace_rows(rows);
  expr::statistics_rows(rows);
  expr::einsum_pad_rows(rows);
  expr::rolling_rows(rows);
  expr::groupby_rows(rows);
  expr::fft_rows(rows);
  expr::linalg_ext_rows(rows);
  return rows;
}

}  // namespace

const std::vector<FunctionInfo>& function_registry() {
  static const std::vector<FunctionInfo> table = build();
  return table;
}

const FunctionInfo* find_function(std::string_view name) {
  static const std::map<std::string, const FunctionInfo*, std::less<>> index = [] {
    std::map<std::string, const FunctionInfo*, std::less<>> m;
    for (const FunctionInfo& f : function_registry()) {
      if (!m.emplace(f.name, &f).second) throw std::logic_error("two registry rows named '" + f.name + "'");
      for (const std::string& a : f.aliases)
        if (!m.emplace(a, &f).second) throw std::logic_error("the alias '" + a + "' names two registry rows");
    }
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

std::vector<std::string> function_names() {
  std::vector<std::string> out;
  for (const FunctionInfo& f : function_registry()) {
    out.push_back(f.name);
    out.insert(out.end(), f.aliases.begin(), f.aliases.end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

expr::Value call_function(std::string_view name, std::vector<expr::Value> positional,
                          std::map<std::string, expr::Value> keywords, Context* ctx) {
  const FunctionInfo* f = find_function(name);
  if (f == nullptr) throw ValueError("b2lazy has no function '" + std::string(name) + "'");
  expr::Args args(std::string(name), std::move(positional), std::move(keywords), 0, ctx);
  return f->call(args);
}

const char* family_name(FunctionFamily f) {
  using F = FunctionFamily;
  switch (f) {
    case F::Elementwise: return "elementwise";
    case F::Reduction: return "reduction";
    case F::Holistic: return "holistic reduction";
    case F::Scan: return "scan";
    case F::Linalg: return "linear algebra";
    case F::Shape: return "shape";
    case F::Index: return "indexing";
    case F::Creation: return "creation";
  }
  return "";
}

}  // namespace b2lazy
