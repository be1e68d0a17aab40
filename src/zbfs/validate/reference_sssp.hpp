// A plain sequential Dijkstra over a weighted edge list, written for obviousness rather
// than speed: the independent truth that tests compare every SSSP kernel against. It
// adds weights in single precision along each path, as the kernels and Graph500's
// validator do, so its distances are the kernels' bit for bit (sssp/delta_stepping.hpp
// says why every such order of relaxations meets the same distances).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/core/edge.hpp"

namespace zbfs {

// Distances from root of the undirected graph with these edges and weights (one per
// edge; +infinity where unreached).
std::vector<float> reference_sssp_distances(std::uint64_t num_vertices, std::span<const Edge> edges,
                                            std::span<const float> weights, std::uint64_t root);

}  // namespace zbfs
