#include <gtest/gtest.h>

#include "b2lazy/b2lazy.hpp"

using namespace b2lazy;

TEST(Expr, PrecedenceCallsMethodsAndIndexing) {
  Context ctx(1);
  std::map<std::string, Operand> ops = {{"a", arange(0, 6, 1, DType::F64, {2, 3})}};
  // -a**2 is -(a**2); & binds tighter than |; comparisons bind loosest.
  EXPECT_EQ(evaluate("-a**2 + 2 * 3", ops, &ctx).to_vector(&ctx), (std::vector<double>{6, 5, 2, -3, -10, -19}));
  EXPECT_EQ(evaluate("a.sum(axis=-1, keepdims=True).T", ops, &ctx).to_vector(&ctx), (std::vector<double>{3, 12}));
  EXPECT_EQ(evaluate("a[[1, 0], ::-2]", ops, &ctx).to_vector(&ctx), (std::vector<double>{5, 3, 2, 0}));
  EXPECT_EQ(evaluate("(a > 1) & (a < 4) | (a == 5)", ops, &ctx).to_vector(&ctx),
            (std::vector<double>{0, 0, 1, 1, 0, 1}));
  EXPECT_EQ(evaluate("1 < a < 4", ops, &ctx).to_vector(&ctx), (std::vector<double>{0, 0, 1, 1, 0, 0}));
  EXPECT_EQ(evaluate("matmul(a, a.T)[0, 1]", ops, &ctx).to_vector(&ctx), (std::vector<double>{14}));
  EXPECT_EQ(expression_names("sum(a, axis=1) + b[c] + astype(d, float32)"),
            (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(Expr, ErrorsNameTheColumnAndTheArgument) {
  std::map<std::string, Operand> ops = {{"a", zeros({2, 3})}};
  try {
    evaluate("sum(a, axis=1", ops);
    FAIL();
  } catch (const SyntaxError& e) {
    EXPECT_EQ(e.column, 14u);
    EXPECT_NE(std::string(e.what()).find("             ^"), std::string::npos);
  }
  EXPECT_THROW(evaluate("sinn(a)", ops), NameError);
  EXPECT_THROW(evaluate("sum(a, axes=1)", ops), TypeError);
  EXPECT_THROW(evaluate("a and a", ops), SyntaxError);
  EXPECT_THROW(evaluate(std::string(1000, '(') + "a" + std::string(1000, ')'), ops), SyntaxError);
  EXPECT_THROW(evaluate("reshape(a, (4, 4))", ops), ValueError);
}
