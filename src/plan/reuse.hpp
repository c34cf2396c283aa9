// The pulls and reuse passes: what several output chunks (tasks) pull of the same node,
// and what that costs, to decide which nodes are computed once per evaluation.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "b2lazy/node.hpp"
#include "plan/window.hpp"

namespace b2lazy {

// What planning remembers across the nested plans of one evaluation.
struct PlanningState {
  std::unordered_set<const Node*> decided;  // nodes given a stage (computed once)
  // Nodes whose stage's own pass is being planned (not kept again inside it).
  std::unordered_set<const Node*> computing;
  // Nodes under which nothing is left to find: every candidate reachable from them
  // (through nodes not decided) is decided. Only grows, so planning the subgraph of each
  // stage again costs no walk of what is settled.
  std::unordered_set<const Node*> settled;
  int64_t visits = 0;  // node visits (Stats::plan_visits)
  // A worker's share of max_memory: sizes the pieces nodes pull their inputs in
  // (Node::pull_pieces), and so what those pulls decompress.
  size_t worker_bytes = 0;
  int nworkers = 1;
  // Distinct consumers pulling each node of the evaluation's graph in their own pass
  // (counted once, from the first root planned): shared computed nodes are never settled.
  std::unordered_map<const Node*, int> consumers;
  // Sibling reductions folded in lockstep by the first of their group (Plan::siblings):
  // their pulls are that one's, not walked again.
  std::unordered_set<const Node*> followers;
  // Nodes later evaluations of the same compute_all reach first (graph/compute_all.cpp): a
  // computed one this plan pulls is kept (a stage over the part it computes), for them.
  const std::unordered_set<const Node*>* later = nullptr;
};

// A node several output chunks pull overlapping parts of, with the cost model's figures.
struct ReusedNode {
  NodePtr node;
  Box box;              // the part of it the output chunks need
  Shape request;        // the shape of a typical request (consumer-shaped tiles)
  int64_t pulled = 0;   // bytes the chunks would pull (decompress, for a source) without reuse
  int64_t once = 0;     // bytes to compute (decompress) `box` once
  bool source = false;  // a stored source: kept only when it saves decompression
  int64_t asked = 0;    // a source: bytes of the elements they ask of it (it decompresses more)
  // A source: the window of decompressed blocks through which the chunks' pulls, in
  // order, decompress it about once (blocks 0: none does), in place of keeping it.
  WindowChoice window;
  // Kept in its own chunks (Node::kept_chunks): a node computed whole, or whose requests
  // compute overlapping parts (Node::computed_region).
  bool own_chunks = false;
};

// Reuse candidates: nodes worth computing once (Node::cacheable: reductions, scans,
// products' expensive operands) and nodes that decompress storage (Node::decompresses).
bool reuse_candidate(const Node& n);

// Propagates each output chunk's region down the graph (Node::input_regions) to the
// first candidates on each path. Computed nodes pulled along several paths of one chunk
// with sharing below them (or along 4 or more) are candidates too, always computed once:
// without it `e = e[::-1] + e`, repeated, pulls the innermost node 2**depth times. A cacheable node is reused when the
// regions asked of it overlap (more elements asked than its bounding box holds); a source when the chunks would
// decompress at least twice what decompressing its bounding box once costs. Nodes not reused are looked through, to
// find reuse deeper down; nodes are decided in topological order (consumers first), so a node is decided once every
// request has reached it. Decided nodes, and subgraphs with nothing left to plan, are skipped. Each node is visited
// once per output chunk, whatever the number of paths to it. The result is in topological order: compute it from the
// back (inputs first).
std::vector<ReusedNode> find_reused(const NodePtr& root, const ChunkGrid& grid, PlanningState& ps);

// Does the graph under `n` hold a candidate not decided yet (n included)?
bool needs_planning(const Node& n, PlanningState& ps);

}  // namespace b2lazy
