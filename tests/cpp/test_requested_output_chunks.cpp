// requested_output_chunks (b2lazy/plan.hpp): the output chunks a rechunk decides, the same
// as the default plan's, known without planning; empty where the planner chooses.
#include <gtest/gtest.h>

#include "b2lazy/b2lazy.hpp"
#include "test_util.hpp"

using namespace b2lazy;
using b2lazy::test::stored;

TEST(RequestedOutputChunks, AreThePlansChunksWhereARechunkDecides) {
  Context ctx(2);
  Array a = stored(arange(0, 100 * 60, 1, DType::F32, {100, 60}), {50, 60}, {50, 60}, ctx);
  ComputeOptions defaults;
  EXPECT_TRUE(requested_output_chunks(a).empty());  // a stored array: the planner's choice
  for (const Shape& asked : {Shape{1, 1}, Shape{7, 60}, Shape{100, 3}}) {
    Array r = rechunk(a, asked);
    for (const Array& x : {r, r * 2.0, r - a, a + r}) {
      EXPECT_EQ(requested_output_chunks(x), asked);
      EXPECT_EQ(requested_output_chunks(x), x.plan(defaults, &ctx).chunks);
    }
    EXPECT_TRUE(requested_output_chunks(sum(r, ReduceOptions{std::vector<int>{0}})).empty());  // another shape: planned
  }
}
