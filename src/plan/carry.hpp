// The carries pass: stages whose only use is a carry the output chunks can pass along
// themselves (Node::carry), when they run in order (PlanStage::carried_by).
#pragma once
#include "b2lazy/plan.hpp"

namespace b2lazy {

// For each stage consumed only as a node's carry, by the output tasks alone: if every
// region the output chunks ask of that node starts at 0 along the carry's axis or where
// a region asked by an earlier chunk ends (each such end asked for once), the stage gets
// `carried_by` and `links`. Run after the stages are decided, before the tasks pass.
void plan_carries(Plan& p);

}  // namespace b2lazy
