// Op metadata: arity, family and snake_case name from the X-macro; NumPy aliases.
#include <string>

#include "b2lazy/error.hpp"
#include "b2lazy/ops.hpp"

namespace b2lazy {
namespace {

constexpr size_t kNumOps = static_cast<size_t>(Op::Count_);

#define B2LAZY_OP_ARITY(name, snake, arity, family) arity,
constexpr int kArity[] = {B2LAZY_ELEMENTWISE_OPS(B2LAZY_OP_ARITY)};
#undef B2LAZY_OP_ARITY

#define B2LAZY_OP_FAMILY(name, snake, arity, family) OpFamily::family,
constexpr OpFamily kFamily[] = {B2LAZY_ELEMENTWISE_OPS(B2LAZY_OP_FAMILY)};
#undef B2LAZY_OP_FAMILY

#define B2LAZY_OP_NAME(name, snake, arity, family) #snake,
constexpr const char* kNames[] = {B2LAZY_ELEMENTWISE_OPS(B2LAZY_OP_NAME)};
#undef B2LAZY_OP_NAME

struct NameEntry {
  Op op;
  const char* name;
};

// NumPy / Array API spellings accepted by op_from_name.
constexpr NameEntry kAliases[] = {
    {Op::Divide, "true_divide"},   {Op::Remainder, "mod"},        {Op::Pow, "power"},
    {Op::Abs, "absolute"},         {Op::Asin, "arcsin"},          {Op::Acos, "arccos"},
    {Op::Atan, "arctan"},          {Op::Atan2, "arctan2"},        {Op::Asinh, "arcsinh"},
    {Op::Acosh, "arccosh"},        {Op::Atanh, "arctanh"},        {Op::BitwiseInvert, "bitwise_not"},
    {Op::BitwiseInvert, "invert"}, {Op::LeftShift, "left_shift"}, {Op::RightShift, "right_shift"},
    {Op::Conj, "conjugate"},
};

static_assert(std::size(kArity) == kNumOps && std::size(kNames) == kNumOps);

}  // namespace

int op_arity(Op op) { return kArity[static_cast<size_t>(op)]; }
OpFamily op_family(Op op) { return kFamily[static_cast<size_t>(op)]; }
const char* op_name(Op op) { return kNames[static_cast<size_t>(op)]; }

DType op_out_dtype(Op op, DType t) {
  const OpFamily f = op_family(op);
  if (f == OpFamily::Cmp || f == OpFamily::Pred) return DType::Bool;
  if (op == Op::Abs || op == Op::Real || op == Op::Imag || op == Op::Angle) return real_of(t);
  return t;
}

Op op_from_name(const std::string& name) {
  for (size_t i = 0; i < kNumOps; ++i)
    if (name == kNames[i]) return static_cast<Op>(i);
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
