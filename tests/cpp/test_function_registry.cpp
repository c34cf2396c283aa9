// The function registry: signatures parse and print as Python's, every entry is callable
// from expression strings by its name and aliases, and calls bind by Python's rules with
// the registry's defaults.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "b2lazy/b2lazy.hpp"
#include "b2lazy/functions.hpp"

using namespace b2lazy;

TEST(FunctionRegistry, SignaturesParseIntoPythonKinds) {
  const std::vector<Param> p = parse_signature("x, q, /, axis=None, *, method='linear', keepdims=False");
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[0].kind, ParamKind::PositionalOnly);
  EXPECT_EQ(p[1].kind, ParamKind::PositionalOnly);
  EXPECT_EQ(p[2].kind, ParamKind::PositionalOrKeyword);
  EXPECT_EQ(*p[2].default_value, "None");
  EXPECT_EQ(p[3].kind, ParamKind::KeywordOnly);
  EXPECT_EQ(*p[3].default_value, "'linear'");
  EXPECT_FALSE(p[0].default_value.has_value());
  const std::vector<Param> star = parse_signature("*arrays, indexing='xy'");
  EXPECT_EQ(star[0].kind, ParamKind::VarPositional);
  EXPECT_EQ(star[1].kind, ParamKind::KeywordOnly);
  for (const char* bad : {"x, x", "a=1, b", "*, /", "x, *, *", "*a=1", "1x", "x="})
    EXPECT_THROW(parse_signature(bad), ValueError) << bad;
}

TEST(FunctionRegistry, EveryEntryPrintsTheSignatureItWasDeclaredWith) {
  std::set<std::string> names;
  for (const FunctionInfo& f : function_registry()) {
    FunctionInfo again = f;
    const std::string sig = f.signature();
    again.params = parse_signature(sig.substr(1, sig.size() - 2));
    EXPECT_EQ(again.signature(), sig) << f.name;
    EXPECT_FALSE(f.dtype_rule.empty()) << f.name;
    EXPECT_TRUE(names.insert(f.name).second) << f.name << " twice";
    for (const std::string& a : f.aliases) EXPECT_TRUE(names.insert(a).second) << a << " twice";
    EXPECT_EQ(find_function(f.name), &f);
    EXPECT_EQ(f.op.has_value() && op_family(*f.op) != OpFamily::Special,
              f.family == FunctionFamily::Elementwise && f.name != "where" && f.name != "astype" && f.name != "clip")
        << f.name;
  }
  EXPECT_EQ(find_function("add")->signature(), "(x1, x2, /)");
  EXPECT_EQ(find_function("sum")->signature(), "(x, /, axis=None, *, keepdims=False, dtype=None)");
  EXPECT_EQ(find_function("meshgrid")->signature(), "(*arrays, indexing='xy')");
  EXPECT_EQ(find_function("arctan2"), find_function("atan2"));
  EXPECT_EQ(find_function("amax")->reduction, Reduction::Max);
  EXPECT_EQ(find_function("no_such_function"), nullptr);
  // Expression strings call exactly the registry's names and aliases.
  std::vector<std::string> callable = expression_functions();
  EXPECT_EQ(std::set<std::string>(callable.begin(), callable.end()), names);
}

TEST(FunctionRegistry, ExpressionCallsBindByPythonsRules) {
  Context ctx(1);
  std::vector<double> v = {3, 1, 2, 5};
  std::map<std::string, Operand> ops = {{"a", from_buffer(v.data(), DType::F64, {2, 2}, {}, nullptr, "a")}};
  auto values = [&](const char* e) { return evaluate(e, ops, &ctx).to_vector(&ctx); };
  // Defaults from the registry: vecdot's axis=-1, quantile's method='linear', linspace's num=50.
  EXPECT_EQ(values("quantile(a, 0.5, axis=0)"), (std::vector<double>{2.5, 3}));
  EXPECT_EQ(evaluate("linspace(0, 1)", ops, &ctx).shape(), (Shape{50}));
  EXPECT_EQ(values("vecdot(a, a)"), (std::vector<double>{10, 29}));
  EXPECT_EQ(values("diagonal(a, offset=1)"), (std::vector<double>{1}));
  EXPECT_EQ(values("trace(a, axis1=1, axis2=0)"), (std::vector<double>{8}));
  EXPECT_EQ(values("sum(a, 1, keepdims=True)"), (std::vector<double>{4, 7}));
  EXPECT_EQ(values("ones(2, chunks=(1,), device='cpu')"), (std::vector<double>{1, 1}));
  EXPECT_EQ(evaluate("meshgrid(a[0], a[1], indexing='ij')[0]", ops, &ctx).shape(), (Shape{2, 2}));
  auto error = [&](const char* e) {
    try {
      evaluate(e, ops, &ctx);
    } catch (const TypeError& err) {
      return std::string(err.what());
    }
    return std::string("no TypeError");
  };
  EXPECT_NE(error("sin(x=a)").find("positional-only argument passed by keyword: 'x'"), std::string::npos);
  EXPECT_NE(error("sum(a, 0, True)").find("at most 2 positional arguments"), std::string::npos);
  EXPECT_NE(error("flip(a, 0)").find("at most 1 positional argument"), std::string::npos);
  EXPECT_NE(error("sum(a, kepdims=True)").find("unexpected keyword argument 'kepdims'"), std::string::npos);
  EXPECT_NE(error("sum(a, 0, axis=1)").find("multiple values for argument 'axis'"), std::string::npos);
  EXPECT_NE(error("take(a)").find("missing required argument 'indices'"), std::string::npos);
  EXPECT_NE(error("sum(a, keepdims=None)").find("keepdims"), std::string::npos);
}
