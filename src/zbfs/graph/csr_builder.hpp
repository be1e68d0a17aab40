// Kernel 1: builds the undirected Csr<V> from an edge list (stored or produced), OpenMP parallel and in
// place: count degrees, place both directions of every non-self-loop tuple (in rounds of
// 2^21 tuples, gathered by blocks of rows first, so that the placement stays in cache
// as the graph grows), sort and deduplicate each adjacency list, compact, and return the
// unused tail to the OS.
#pragma once

#include <cstdint>

#include "zbfs/core/input_edges.hpp"
#include "zbfs/graph/csr.hpp"

namespace zbfs {

// kInput keeps the edge list's ids; kDegree renumbers the vertices by descending input
// tuple degree (graph/degree_order.hpp), which makes bottom-up searches about twice as
// fast, and keeps the tables to translate back.
enum class CsrOrder { kInput, kDegree };

// `edges`: a stored list, or one produced chunk by chunk (read twice: once for the
// degrees, once for the placement), so that kernel 1 can run without the list in memory.
// With `weights` (SSSP; 32-bit ids, and edges with weights), it receives one weight per
// directed entry beside the lists: the lightest of the tuples that gave the entry, placed
// and deduplicated with the entries themselves.
template <class V>
Csr<V> build_csr(const InputEdges& edges, CsrOrder order = CsrOrder::kInput, LargeArray<float>* weights = nullptr);

// Bytes build_csr needs at its peak for this edge list shape (offsets, tuple degrees, the
// adjacency array before deduplication, the placement's round buffers, and the degree
// order's two tables with kDegree), excluding the edge list itself.
std::uint64_t csr_build_peak_bytes(std::uint64_t num_vertices, std::uint64_t num_edges, unsigned vertex_bytes,
                                   CsrOrder order = CsrOrder::kInput);

extern template Csr<std::uint32_t> build_csr<std::uint32_t>(const InputEdges&, CsrOrder, LargeArray<float>*);
extern template Csr<std::uint64_t> build_csr<std::uint64_t>(const InputEdges&, CsrOrder, LargeArray<float>*);

}  // namespace zbfs
