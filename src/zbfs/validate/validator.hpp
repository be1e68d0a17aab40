// The Graph500 validator: checks a BFS parent array against the input edge list (not
// against kernel 1's graph, so that construction bugs are caught too) by the five rules:
//   1. the parent links form a tree rooted at the search key (no cycles, no dangling links);
//   2. every tree edge joins vertices whose BFS levels differ by exactly one;
//   3. every input edge joins vertices whose levels differ by at most one;
//   4. the tree spans exactly the root's connected component;
//   5. every parent link is an input edge.
// It also counts the input tuples inside the component (Graph500's traversed edges).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "zbfs/core/input_edges.hpp"

namespace zbfs {

// In a BFS tree, rule 2 has no code of its own: levels are computed as depths in the
// parent tree, so every tree edge spans exactly one level by construction, and rule 5
// only confirms a parent link through an input edge between those two levels. The SSSP
// validator (sssp_validator.hpp) reads the rules with distances for levels, and there
// rule 2 (a vertex's distance is its parent's plus the weight of an input edge between
// them) has its own code.
enum class ValidationRule : int {
  kTreeRootedAtKey = 1,
  kTreeEdgeDistance = 2,
  kInputEdgeLevels = 3,
  kSpansComponent = 4,
  kParentIsInputEdge = 5,
};

struct ValidationReport {
  std::uint64_t traversed_edges = 0;  // non-self-loop input tuples inside the component
  std::uint64_t reached_vertices = 0;
  std::uint64_t error_count = 0;
  std::vector<ValidationRule> violated;  // each rule once, in first-seen order
  std::vector<std::string> messages;     // the first few errors, for humans

  [[nodiscard]] bool ok() const { return error_count == 0; }
  [[nodiscard]] bool violates(ValidationRule rule) const;
};

// `edges`: the whole input list (stored, or produced again chunk by chunk).
ValidationReport validate_bfs_tree(const InputEdges& edges, std::uint64_t root, std::span<const std::int64_t> parent);

}  // namespace zbfs
