// Op metadata: arity and family from the X-macro, snake_case names and NumPy aliases.
#include <array>
#include <cstring>
#include <string>

#include "b2lazy/error.hpp"
#include "b2lazy/ops.hpp"

namespace b2lazy {
namespace {

constexpr size_t kNumOps = static_cast<size_t>(Op::Count_);

#define B2LAZY_OP_ARITY(name, arity, family) arity,
constexpr int kArity[] = {B2LAZY_ELEMENTWISE_OPS(B2LAZY_OP_ARITY)};
#undef B2LAZY_OP_ARITY

#define B2LAZY_OP_FAMILY(name, arity, family) OpFamily::family,
constexpr OpFamily kFamily[] = {B2LAZY_ELEMENTWISE_OPS(B2LAZY_OP_FAMILY)};
#undef B2LAZY_OP_FAMILY

struct NameEntry {
  Op op;
  const char* name;
};

// Canonical names, listed by op (order does not matter: kNames is built from it).
constexpr NameEntry kCanonical[] = {
    {Op::Add, "add"}, {Op::Subtract, "subtract"}, {Op::Multiply, "multiply"},
    {Op::Divide, "divide"}, {Op::FloorDivide, "floor_divide"}, {Op::Remainder, "remainder"},
    {Op::Pow, "pow"}, {Op::Maximum, "maximum"}, {Op::Minimum, "minimum"}, {Op::Atan2, "atan2"},
    {Op::Hypot, "hypot"}, {Op::Copysign, "copysign"}, {Op::Logaddexp, "logaddexp"},
    {Op::Nextafter, "nextafter"}, {Op::BitwiseAnd, "bitwise_and"}, {Op::BitwiseOr, "bitwise_or"},
    {Op::BitwiseXor, "bitwise_xor"}, {Op::LeftShift, "bitwise_left_shift"},
    {Op::RightShift, "bitwise_right_shift"}, {Op::Equal, "equal"}, {Op::NotEqual, "not_equal"},
    {Op::Less, "less"}, {Op::LessEqual, "less_equal"}, {Op::Greater, "greater"},
    {Op::GreaterEqual, "greater_equal"}, {Op::LogicalAnd, "logical_and"},
    {Op::LogicalOr, "logical_or"}, {Op::LogicalXor, "logical_xor"},
    {Op::LogicalNot, "logical_not"}, {Op::Negative, "negative"}, {Op::Positive, "positive"},
    {Op::Abs, "abs"}, {Op::Square, "square"}, {Op::Sign, "sign"}, {Op::Reciprocal, "reciprocal"},
    {Op::Floor, "floor"}, {Op::Ceil, "ceil"}, {Op::Trunc, "trunc"}, {Op::Round, "round"},
    {Op::BitwiseInvert, "bitwise_invert"}, {Op::Sqrt, "sqrt"}, {Op::Cbrt, "cbrt"},
    {Op::Exp, "exp"}, {Op::Exp2, "exp2"}, {Op::Expm1, "expm1"}, {Op::Log, "log"},
    {Op::Log2, "log2"}, {Op::Log10, "log10"}, {Op::Log1p, "log1p"}, {Op::Sin, "sin"},
    {Op::Cos, "cos"}, {Op::Tan, "tan"}, {Op::Asin, "asin"}, {Op::Acos, "acos"},
    {Op::Atan, "atan"}, {Op::Sinh, "sinh"}, {Op::Cosh, "cosh"}, {Op::Tanh, "tanh"},
    {Op::Asinh, "asinh"}, {Op::Acosh, "acosh"}, {Op::Atanh, "atanh"}, {Op::Isnan, "isnan"},
    {Op::Isinf, "isinf"}, {Op::Isfinite, "isfinite"}, {Op::Signbit, "signbit"},
    {Op::Where, "where"}, {Op::Cast, "astype"}, {Op::Copy, "copy"},
};

// NumPy / Array API spellings accepted by op_from_name.
constexpr NameEntry kAliases[] = {
    {Op::Divide, "true_divide"}, {Op::Remainder, "mod"}, {Op::Pow, "power"},
    {Op::Abs, "absolute"}, {Op::Asin, "arcsin"}, {Op::Acos, "arccos"}, {Op::Atan, "arctan"},
    {Op::Atan2, "arctan2"}, {Op::Asinh, "arcsinh"}, {Op::Acosh, "arccosh"},
    {Op::Atanh, "arctanh"}, {Op::BitwiseInvert, "bitwise_not"}, {Op::BitwiseInvert, "invert"},
    {Op::LeftShift, "left_shift"}, {Op::RightShift, "right_shift"},
};

constexpr auto kNames = [] {
  std::array<const char*, kNumOps> names{};
  for (const NameEntry& e : kCanonical) names[static_cast<size_t>(e.op)] = e.name;
  return names;
}();

static_assert(std::size(kArity) == kNumOps && std::size(kCanonical) == kNumOps);
static_assert([] {
  for (const char* n : kNames)
    if (n == nullptr) return false;
  return true;
}(), "every op needs a canonical name");

}  // namespace

int op_arity(Op op) { return kArity[static_cast<size_t>(op)]; }
OpFamily op_family(Op op) { return kFamily[static_cast<size_t>(op)]; }
const char* op_name(Op op) { return kNames[static_cast<size_t>(op)]; }

Op op_from_name(const std::string& name) {
  for (const NameEntry& e : kCanonical)
    if (name == e.name) return e.op;
  for (const NameEntry& e : kAliases)
    if (name == e.name) return e.op;
  throw ValueError("unknown function '" + name + "'");
}

std::vector<std::pair<std::string, std::string>> op_aliases() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const NameEntry& e : kAliases) out.emplace_back(e.name, op_name(e.op));
  return out;
}

}  // namespace b2lazy
