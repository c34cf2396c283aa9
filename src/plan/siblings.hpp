// Sibling reductions to fold in lockstep (Plan::siblings): found over the whole graph of
// an evaluation before its reuse pass, which then counts the shared sources' pulls once.
#pragma once
#include <vector>

#include "b2lazy/plan.hpp"

namespace b2lazy {

std::vector<PlanSiblings> find_siblings(const NodePtr& root);

}  // namespace b2lazy
