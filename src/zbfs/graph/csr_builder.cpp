#include "zbfs/graph/csr_builder.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "zbfs/core/checked_cast.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/graph/list_placement.hpp"
#include "zbfs/graph/list_sort.hpp"

namespace zbfs {

std::uint64_t csr_build_peak_bytes(std::uint64_t num_vertices, std::uint64_t num_edges, unsigned vertex_bytes,
                                   CsrOrder order) {
  const std::uint64_t tables = order == CsrOrder::kDegree ? 2 * num_vertices * vertex_bytes : 0;
  const std::uint64_t rounds = placement_buffer_bytes(num_vertices, num_edges, vertex_bytes);
  return (num_vertices + 1) * sizeof(std::uint64_t) + num_vertices * vertex_bytes + 2 * num_edges * vertex_bytes +
         tables + rounds;
}

template <class V>
Csr<V> build_csr(const InputEdges& edges, CsrOrder order, LargeArray<float>* weights) {
  const std::uint64_t n = edges.num_vertices();
  if (n - 1 > std::numeric_limits<V>::max()) {
    throw Error(ExitCode::kFailure, "vertex ids do not fit the local id type");
  }
  if (weights != nullptr && (sizeof(V) != 4 || !edges.has_weights())) {
    throw Error(ExitCode::kFailure, "build_csr: weights need 32-bit ids and a weighted edge list");
  }

  // 1. Degrees (both directions of every tuple that is not a self-loop).
  LargeArray<std::uint64_t> offsets = count_tuple_degrees(edges);
  std::uint64_t* off = offsets.data();
  // The degree order, from these counts (the input tuple degrees); the counts move to
  // their sorted places, and every id is sorted as it is placed.
  DegreeOrder<V> degree_order;
  if (order == CsrOrder::kDegree) {
    degree_order = DegreeOrder<V>(std::span<const std::uint64_t>(off, n));
    LargeArray<std::uint64_t> sorted_counts(n + 1);
    const V* original = degree_order.original_offsets().data();
#pragma omp parallel for schedule(static)
    for (std::int64_t s = 0; s < static_cast<std::int64_t>(n); ++s)
      sorted_counts[static_cast<std::size_t>(s)] = off[original[s]];
    sorted_counts[n] = 0;
    offsets = std::move(sorted_counts);
    off = offsets.data();
  }
  const V* sorted = order == CsrOrder::kDegree ? degree_order.sorted_offsets().data() : nullptr;
  const auto internal = [sorted](std::uint64_t v) {
    return sorted != nullptr ? static_cast<std::uint64_t>(sorted[v]) : v;
  };
  const std::uint64_t total = exclusive_prefix_sum(off, n);
  off[n] = total;

  // 2. Placement: off[v] serves as v's insertion cursor and ends at v's end, i.e. the
  // start of v + 1; shifting by one slot afterwards restores the starts.
  LargeArray<V> adjacency(total);
  V* adj = adjacency.data();
  LargeArray<float> entry_weights(weights != nullptr ? total : 0);
  float* wt = weights != nullptr ? entry_weights.data() : nullptr;
  place_entries<V>(edges, n, internal, internal, off, adj, wt);
  std::memmove(off + 1, off, n * sizeof(std::uint64_t));
  off[0] = 0;

  // 3. Sort and deduplicate each list (a weighted one keeps the lightest duplicate); the
  // deduplicated length goes to tuple_degree for now and is swapped for the tuple count
  // during compaction.
  LargeArray<V> tuple_degree(n);
  V* tdeg = tuple_degree.data();
  const auto record = [tdeg](std::uint64_t v, std::uint64_t length) { tdeg[v] = static_cast<V>(length); };
  if constexpr (sizeof(V) == 4) {
    if (wt != nullptr) {
      sort_and_deduplicate_weighted_lists(adj, wt, off, n, record);
    } else {
      sort_and_deduplicate_lists(adj, off, n, record);
    }
  } else {
    sort_and_deduplicate_lists(adj, off, n, record);
  }

  // 4. Compaction, in vertex order because lists only move towards the front.
  std::uint64_t write = 0;
  std::uint64_t old_start = 0;
  for (std::uint64_t v = 0; v < n; ++v) {
    const std::uint64_t old_end = off[v + 1];
    const std::uint64_t unique_count = tdeg[v];
    if (write != old_start && unique_count != 0) {
      std::memmove(adj + write, adj + old_start, unique_count * sizeof(V));
      if (wt != nullptr) std::memmove(wt + write, wt + old_start, unique_count * sizeof(float));
    }
    off[v] = write;
    tdeg[v] = checked_cast<V>(old_end - old_start);
    write += unique_count;
    old_start = old_end;
  }
  off[n] = write;
  adjacency.shrink(write);
  if (weights != nullptr) {
    entry_weights.shrink(write);
    *weights = std::move(entry_weights);
  }
  return Csr<V>(n, std::move(offsets), std::move(adjacency), std::move(tuple_degree), std::move(degree_order));
}

template Csr<std::uint32_t> build_csr<std::uint32_t>(const InputEdges&, CsrOrder, LargeArray<float>*);
template Csr<std::uint64_t> build_csr<std::uint64_t>(const InputEdges&, CsrOrder, LargeArray<float>*);

}  // namespace zbfs
