#include "zbfs/graph/csr_builder.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "zbfs/core/checked_cast.hpp"
#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// In-place exclusive prefix sum of counts[0..n), parallel over thread blocks; returns the total.
std::uint64_t exclusive_prefix_sum(std::uint64_t* counts, std::uint64_t n) {
  const int max_threads = omp_get_max_threads();
  std::vector<std::uint64_t> block_sums(static_cast<std::size_t>(max_threads) + 1, 0);
  int used_threads = 1;
#pragma omp parallel
  {
    const int threads = omp_get_num_threads();
    const int t = omp_get_thread_num();
#pragma omp single
    used_threads = threads;
    const std::uint64_t begin = n * static_cast<std::uint64_t>(t) / static_cast<std::uint64_t>(threads);
    const std::uint64_t end = n * static_cast<std::uint64_t>(t + 1) / static_cast<std::uint64_t>(threads);
    std::uint64_t sum = 0;
    for (std::uint64_t i = begin; i < end; ++i) sum += counts[i];
    block_sums[static_cast<std::size_t>(t) + 1] = sum;
#pragma omp barrier
#pragma omp single
    for (int i = 0; i < threads; ++i)
      block_sums[static_cast<std::size_t>(i) + 1] += block_sums[static_cast<std::size_t>(i)];
    std::uint64_t running = block_sums[static_cast<std::size_t>(t)];
    for (std::uint64_t i = begin; i < end; ++i) {
      const std::uint64_t c = counts[i];
      counts[i] = running;
      running += c;
    }
  }
  return block_sums[static_cast<std::size_t>(used_threads)];
}

}  // namespace

std::uint64_t csr_build_peak_bytes(std::uint64_t num_vertices, std::uint64_t num_edges, unsigned vertex_bytes,
                                   CsrOrder order) {
  const std::uint64_t tables = order == CsrOrder::kDegree ? 2 * num_vertices * vertex_bytes : 0;
  return (num_vertices + 1) * sizeof(std::uint64_t) + num_vertices * vertex_bytes + 2 * num_edges * vertex_bytes +
         tables;
}

template <class V>
Csr<V> build_csr(const PackedEdgeList& edges, CsrOrder order) {
  const std::uint64_t n = edges.num_vertices();
  if (n - 1 > std::numeric_limits<V>::max()) {
    throw Error(ExitCode::kFailure, "vertex ids do not fit the local id type");
  }
  const auto m = static_cast<std::int64_t>(edges.size());

  // 1. Degrees (both directions of every tuple that is not a self-loop).
  LargeArray<std::uint64_t> offsets(n + 1);
  std::uint64_t* off = offsets.data();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    const Edge e = edges.get(static_cast<std::uint64_t>(i));
    if (e.u == e.v) continue;
    std::atomic_ref<std::uint64_t>(off[e.u]).fetch_add(1, std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(off[e.v]).fetch_add(1, std::memory_order_relaxed);
  }
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
  // Slots are claimed for a group of edges before any is written: a locked fetch_add is
  // a full barrier on x86, and interleaving it with the scattered stores would make
  // every store's cache miss wait for the previous one instead of overlapping.
  constexpr std::int64_t kGroup = 64;
#pragma omp parallel for schedule(static)
  for (std::int64_t first = 0; first < m; first += kGroup) {
    const std::int64_t last = std::min(m, first + kGroup);
    std::array<std::uint64_t, 2 * kGroup> slot{};
    std::array<V, 2 * kGroup> value{};
    std::size_t count = 0;
    for (std::int64_t i = first; i < last; ++i) {
      const Edge e = edges.get(static_cast<std::uint64_t>(i));
      if (e.u == e.v) continue;
      const std::uint64_t u = internal(e.u);
      const std::uint64_t v = internal(e.v);
      slot[count] = std::atomic_ref<std::uint64_t>(off[u]).fetch_add(1, std::memory_order_relaxed);
      value[count++] = static_cast<V>(v);
      slot[count] = std::atomic_ref<std::uint64_t>(off[v]).fetch_add(1, std::memory_order_relaxed);
      value[count++] = static_cast<V>(u);
    }
    for (std::size_t k = 0; k < count; ++k) adj[slot[k]] = value[k];
  }
  std::memmove(off + 1, off, n * sizeof(std::uint64_t));
  off[0] = 0;

  // 3. Sort and deduplicate each list; the deduplicated length goes to tuple_degree for
  // now and is swapped for the tuple count during compaction.
  LargeArray<V> tuple_degree(n);
  V* tdeg = tuple_degree.data();
  const auto vertices = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(dynamic, 1024)
  for (std::int64_t v = 0; v < vertices; ++v) {
    V* first = adj + off[v];
    V* last = adj + off[v + 1];
    std::sort(first, last);
    tdeg[v] = static_cast<V>(std::unique(first, last) - first);
  }

  // 4. Compaction, in vertex order because lists only move towards the front.
  std::uint64_t write = 0;
  std::uint64_t old_start = 0;
  for (std::uint64_t v = 0; v < n; ++v) {
    const std::uint64_t old_end = off[v + 1];
    const std::uint64_t unique_count = tdeg[v];
    if (write != old_start && unique_count != 0) std::memmove(adj + write, adj + old_start, unique_count * sizeof(V));
    off[v] = write;
    tdeg[v] = checked_cast<V>(old_end - old_start);
    write += unique_count;
    old_start = old_end;
  }
  off[n] = write;
  adjacency.shrink(write);
  return Csr<V>(n, std::move(offsets), std::move(adjacency), std::move(tuple_degree), std::move(degree_order));
}

template Csr<std::uint32_t> build_csr<std::uint32_t>(const PackedEdgeList&, CsrOrder);
template Csr<std::uint64_t> build_csr<std::uint64_t>(const PackedEdgeList&, CsrOrder);

}  // namespace zbfs
