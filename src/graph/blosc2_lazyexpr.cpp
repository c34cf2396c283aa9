#include "graph/blosc2_lazyexpr.hpp"

#include <filesystem>
#include <map>

#include "b2lazy/error.hpp"
#include "b2lazy/expr.hpp"
#include "exec/no_evaluation.hpp"

namespace b2lazy {

namespace {
constexpr int kMaxNesting = 8;  // LazyExprs over LazyExprs (a loop stops here too)
constexpr size_t kMaxExpression = 1 << 16;
constexpr size_t kMaxOperands = 256;

// Carriers nested too deep: passed up unchanged (each level would add its name).
struct TooDeep : ValueError {
  using ValueError::ValueError;
};

int& nesting() {
  thread_local int depth = 0;
  return depth;
}

struct Nested {
  Nested() { ++nesting(); }
  ~Nested() { --nesting(); }
  Nested(const Nested&) = delete;
  Nested& operator=(const Nested&) = delete;
};

// The older marker (metalayer "LazyArray", vlmeta "_LazyArray"), still what python-blosc2
// writes for a LazyUDF of plain Python: {"UDF": source, ...}, or for a LazyExpr
// {"expression": ..., "operands": {name: path}}.
bool is_udf(const Blosc2Object& o) {
  return o.kind == "lazyudf" || (o.kind == "LazyArray" && o.payload.is_object() && o.payload.contains("UDF"));
}

std::string kind_name(const Blosc2Object& o) {
  if (is_udf(o)) return "LazyUDF (Python code, which b2lazy does not run)";
  if (o.kind == "c2array") return "C2Array (a remote array, which b2lazy does not read)";
  return "persisted object of kind '" + o.kind + "', which b2lazy does not read";
}

// The directory relative operand paths start from: the carrier file's (a .b2z member's
// container's).
std::filesystem::path base_dir(const std::string& path) {
  std::string file = path;
  std::error_code ec;  // (the overloads that do not throw)
  for (size_t hash = file.rfind('#'); hash != std::string::npos && hash > 0 && !std::filesystem::exists(file, ec);
       hash = file.rfind('#', hash - 1))
    file = path.substr(0, hash);
  return std::filesystem::path(file).parent_path();
}

// The URL of operand `name` (a python-blosc2 reference).
std::string operand_url(const nlohmann::json& ref, const std::string& name, const std::filesystem::path& base,
                        const std::string& where) {
  const std::string what = where + ": operand '" + name + "' of the python-blosc2 LazyExpr";
  if (!ref.is_object() || !ref.contains("kind") || !ref["kind"].is_string())
    throw ValueError(what + " is not a reference to a stored array");
  const std::string kind = ref["kind"].get<std::string>();
  if (kind != "urlpath" && kind != "dictstore_key")
    throw ValueError(what + " is a reference of kind '" + kind +
                     "' (b2lazy reads stored b2nd arrays and .b2z members)");
  if (!ref.contains("urlpath") || !ref["urlpath"].is_string() || ref["urlpath"].get<std::string>().empty())
    throw ValueError(what + " has no path");
  const std::string written = ref["urlpath"].get<std::string>();
  if (written.find('\0') != std::string::npos) throw ValueError(what + " has a path with a NUL byte");
  std::filesystem::path p = written;
  std::string url = (p.is_absolute() || base.empty() ? p : base / p).string();
  if (kind == "dictstore_key") {
    if (!ref.contains("key") || !ref["key"].is_string()) throw ValueError(what + " has no member key");
    const std::string key = ref["key"].get<std::string>();
    url += "#" + (!key.empty() && key[0] == '/' ? key : "/" + key);
  }
  return url;
}

template <class E> [[noreturn]] void rethrow_as(const E& e, const std::string& prefix) { throw E(prefix + e.what()); }
}  // namespace

Array open_blosc2_object(const std::string& url, const std::string& path, const Blosc2Object& o, const Node& carrier) {
  const std::string where = "'" + url + "'";
  if (is_udf(o) || (o.kind != "lazyexpr" && o.kind != "LazyArray"))
    throw ValueError(where + ": a python-blosc2 " + kind_name(o) + ", not an array");
  if (!o.problem.empty())
    throw IOError(where + ": a python-blosc2 LazyExpr whose expression cannot be read: " + o.problem);
  nlohmann::json p = o.payload;
  if (o.kind == "LazyArray" && p.is_object() && p.contains("operands") && p["operands"].is_object())
    for (auto& [name, ref] : p["operands"].items())  // (a path: the older form of a reference)
      if (ref.is_string()) ref = nlohmann::json{{"kind", "urlpath"}, {"urlpath", ref.get<std::string>()}};
  if (!p.is_object() || !p.contains("expression") || !p["expression"].is_string() || !p.contains("operands") ||
      !p["operands"].is_object())
    throw IOError(where + ": a python-blosc2 LazyExpr without an expression string and operands");
  const std::string expression = p["expression"].get<std::string>();
  if (expression.size() > kMaxExpression || p["operands"].size() > kMaxOperands)
    throw ValueError(where + ": a python-blosc2 LazyExpr with an expression above 64 KiB or above 256 operands");
  if (nesting() >= kMaxNesting)
    throw TooDeep(where + ": python-blosc2 LazyExprs nested more than " + std::to_string(kMaxNesting) +
                  " deep (or referring to each other in a loop)");
  Nested nested;
  const std::filesystem::path base = base_dir(path);
  std::map<std::string, Operand> ops;
  for (const auto& [name, ref] : p["operands"].items()) {
    const std::string u = operand_url(ref, name, base, where);
    try {
      ops.emplace(name, open(u));
    } catch (const TooDeep&) {
      throw;
    } catch (const IOError& e) {
      rethrow_as(e, where + ": operand '" + name + "' of its python-blosc2 LazyExpr: ");
    } catch (const TypeError& e) {
      rethrow_as(e, where + ": operand '" + name + "' of its python-blosc2 LazyExpr: ");
    } catch (const ValueError& e) {
      rethrow_as(e, where + ": operand '" + name + "' of its python-blosc2 LazyExpr: ");
    }
  }
  const std::string prefix = where + ": the python-blosc2 LazyExpr '" + expression.substr(0, 200) + "': ";
  Array r;
  try {
    NoEvaluation none(
        "it computes when built (a mask, nonzero, unique or an index array read), which opening a "
        "file does not do; b2lazy.evaluate() runs such an expression");
    r = evaluate(expression, ops, nullptr);
  } catch (const EvaluationRefused& e) {
    throw ValueError(prefix + e.what());
  } catch (const TypeError& e) {
    rethrow_as(e, prefix);
  } catch (const IndexError& e) {
    rethrow_as(e, prefix);
  } catch (const IOError& e) {
    rethrow_as(e, prefix);
  } catch (const ValueError& e) {  // (SyntaxError, NameError: their messages show the column)
    rethrow_as(ValueError(e.what()), prefix);
  }
  if (r.shape() != carrier.shape() || r.dtype() != carrier.dtype())
    throw ValueError(prefix + "it gives shape " + shape_str(r.shape()) + " and dtype " + dtype_name(r.dtype()) +
                     " here, but python-blosc2 saved shape " + shape_str(carrier.shape()) + " and dtype " +
                     dtype_name(carrier.dtype()) + "; refused rather than read differently");
  return r;
}

}  // namespace b2lazy
