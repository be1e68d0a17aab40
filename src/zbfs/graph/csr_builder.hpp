// Kernel 1: builds the undirected Csr<V> from a packed edge list, OpenMP parallel and in
// place: count degrees, place both directions of every non-self-loop tuple, sort and
// deduplicate each adjacency list, compact, and return the unused tail to the OS.
#pragma once

#include <cstdint>

#include "zbfs/core/packed_edge_list.hpp"
#include "zbfs/graph/csr.hpp"

namespace zbfs {

template <class V>
Csr<V> build_csr(const PackedEdgeList& edges);

// Bytes build_csr needs at its peak for this edge list shape (offsets, tuple degrees, and
// the adjacency array before deduplication), excluding the edge list itself.
std::uint64_t csr_build_peak_bytes(std::uint64_t num_vertices, std::uint64_t num_edges, unsigned vertex_bytes);

extern template Csr<std::uint32_t> build_csr<std::uint32_t>(const PackedEdgeList&);
extern template Csr<std::uint64_t> build_csr<std::uint64_t>(const PackedEdgeList&);

}  // namespace zbfs
