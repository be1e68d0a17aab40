// The weights of a one-process graph's lists, for SSSP (Graph500's kernel 3): one float per
// directed entry of a Csr, beside its neighbor_data(). Duplicate tuples are one edge of
// the graph, and a shortest path takes the lightest of them, so an entry's weight is the
// least weight of the input tuples between its two ends. Built after the lists, from the
// weighted input (stored or produced again), by searching each tuple's entry. Kernel 1
// places the weights with the entries instead (build_csr with weights, much faster); this
// search-based build stays as the tests' independent check of that placement.
#pragma once

#include <cstdint>

#include "zbfs/core/input_edges.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/graph/csr.hpp"

namespace zbfs {

// `edges` must carry weights (InputEdges::has_weights) and be the list `graph` was built
// from. Throws Error when a tuple has no entry in the lists (they do not belong together).
template <class V>
LargeArray<float> build_list_weights(const Csr<V>& graph, const InputEdges& edges);

// Bytes the weights take: 4 per directed entry.
[[nodiscard]] inline std::uint64_t list_weight_bytes(std::uint64_t directed_entries) { return directed_entries * 4; }

extern template LargeArray<float> build_list_weights<std::uint32_t>(const Csr<std::uint32_t>&, const InputEdges&);
extern template LargeArray<float> build_list_weights<std::uint64_t>(const Csr<std::uint64_t>&, const InputEdges&);

}  // namespace zbfs
