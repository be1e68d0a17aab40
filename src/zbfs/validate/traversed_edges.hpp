// Graph500's traversed-edge count for TEPS, from kernel 1's graph: the non-self-loop input
// tuples with both ends in the root's component (every tuple touches two tuple degrees).
// The validator counts the same number from the edge list, independently.
#pragma once

#include <cstdint>
#include <span>

#include "zbfs/graph/vertex_tables.hpp"

namespace zbfs {

// `graph`: a Csr or a CompressedCsr (their vertex tables).
template <class V>
std::uint64_t count_traversed_edges(const VertexTables<V>& graph, std::span<const std::int64_t> parent) {
  std::uint64_t endpoints = 0;
  const auto n = static_cast<std::int64_t>(graph.num_vertices());
#pragma omp parallel for schedule(static) reduction(+ : endpoints)
  for (std::int64_t v = 0; v < n; ++v) {
    // parent is in the input's ids, the graph in its own (graph/csr.hpp).
    const auto internal = static_cast<std::uint64_t>(v);
    if (parent[graph.original_id(internal)] >= 0) endpoints += graph.input_tuple_degree(internal);
  }
  return endpoints / 2;
}

}  // namespace zbfs
