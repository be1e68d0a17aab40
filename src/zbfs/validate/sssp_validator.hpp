// The Graph500 validator of kernel 3 (single-source shortest paths): checks a parent array
// and its distances against the weighted input edge list, by the specification's rules
// read with distances for levels:
//   1. the parent links form a tree rooted at the search key, whose distance is 0;
//   2. every reached vertex's distance is its parent's plus the weight of an input tuple
//      between them;
//   3. no input tuple joins vertices whose distances differ by more than its weight;
//   4. the tree spans exactly the root's connected component;
//   5. every parent link is an input edge.
// Distances are compared exactly, with the sums in single precision as the kernels and
// the Graph500 reference form them (d[parent] + w), so there is no tolerance to choose:
// a kernel that adds in another order or precision fails rule 2, and one that missed a
// relaxation fails rule 3. It also counts the input tuples inside the component, as the
// BFS validator does.
#pragma once

#include <cstdint>
#include <span>

#include "zbfs/core/input_edges.hpp"
#include "zbfs/validate/validator.hpp"

namespace zbfs {

// `edges`: the whole weighted input list (has_weights()); `distance`: +infinity (or
// anything) where parent is -1.
ValidationReport validate_sssp_tree(const InputEdges& edges, std::uint64_t root, std::span<const std::int64_t> parent,
                                    std::span<const float> distance);

}  // namespace zbfs
