// A plain sequential BFS over an edge list, written for obviousness rather than speed:
// the independent truth that tests compare every BFS variant against.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/core/edge.hpp"

namespace zbfs {

// BFS levels from root (-1 = unreached) of the undirected graph with these edges.
std::vector<std::int64_t> reference_bfs_levels(std::uint64_t num_vertices, std::span<const Edge> edges,
                                               std::uint64_t root);

// Levels implied by a parent array (-1 = unreached).
// Vertices whose parent chain loops or breaks off get this level.
inline constexpr std::int64_t kBrokenLevel = -2;

std::vector<std::int64_t> levels_from_parents(std::span<const std::int64_t> parent, std::uint64_t root);

}  // namespace zbfs
