#include "zbfs/graph/list_weights.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <string>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// The entry of `to` in `from`'s sorted list, or the list's end when there is none.
template <class V>
std::uint64_t entry_of(const Csr<V>& graph, std::uint64_t from, std::uint64_t to) {
  const std::span<const V> list = graph.neighbors(from);
  const auto it = std::lower_bound(list.begin(), list.end(), static_cast<V>(to));
  const std::uint64_t at = graph.offsets()[from] + static_cast<std::uint64_t>(it - list.begin());
  return it != list.end() && *it == static_cast<V>(to) ? at : graph.offsets()[from + 1];
}

void lower_to(float& slot, float weight) {
  std::atomic_ref<float> entry(slot);
  float current = entry.load(std::memory_order_relaxed);
  while (weight < current && !entry.compare_exchange_weak(current, weight, std::memory_order_relaxed)) {
  }
}

}  // namespace

template <class V>
LargeArray<float> build_list_weights(const Csr<V>& graph, const InputEdges& edges) {
  if (!edges.has_weights()) throw Error(ExitCode::kFailure, "build_list_weights: the edge list has no weights");
  const std::uint64_t entries = graph.num_directed_edges();
  LargeArray<float> weights(entries);
  constexpr float kNone = std::numeric_limits<float>::infinity();
  const auto total = static_cast<std::int64_t>(entries);
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < total; ++k) weights[static_cast<std::uint64_t>(k)] = kNone;
  // Each edge's weight is found in one of its two lists, the one of its larger id: in
  // degree order that is the shorter list, so that no tuple searches a hub's long list
  // (which took most of the time when every tuple searched both).
  const std::uint64_t missing =
      for_each_weighted_chunk(edges, [&](std::uint64_t, std::span<const Edge> part, std::span<const float> w) {
        std::uint64_t lost = 0;
        // The chunk's random reads are asked for in stages (ids, then the owners' list
        // starts, then the lists), so that they overlap instead of one search waiting on
        // the next.
        std::array<std::uint64_t, InputEdges::kChunk> owner;
        std::array<std::uint64_t, InputEdges::kChunk> other;
        for (std::size_t i = 0; i < part.size(); ++i) {
          const std::uint64_t a = graph.internal_id(part[i].u);
          const std::uint64_t b = graph.internal_id(part[i].v);
          owner[i] = std::max(a, b);
          other[i] = std::min(a, b);
          __builtin_prefetch(graph.offsets() + owner[i], 0, 3);
        }
        for (std::size_t i = 0; i < part.size(); ++i) {
          __builtin_prefetch(graph.neighbor_data() + graph.offsets()[owner[i]], 0, 3);
        }
        for (std::size_t i = 0; i < part.size(); ++i) {
          if (part[i].u == part[i].v) continue;  // self-loops are not in the lists
          const std::uint64_t at = entry_of(graph, owner[i], other[i]);
          if (at == graph.offsets()[owner[i] + 1]) {
            ++lost;
            continue;
          }
          lower_to(weights[at], w[i]);
        }
        return lost;
      });
  if (missing != 0) {
    throw Error(ExitCode::kFailure, std::to_string(missing) + " weighted tuples have no entry in the graph's lists");
  }
  // The other direction of each edge copies it: x's entry of a larger id y reads y's
  // entry of x (in y's shorter list).
  const auto n = static_cast<std::int64_t>(graph.num_vertices());
  const V* neighbors = graph.neighbor_data();
  std::uint64_t unmatched = 0;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : unmatched)
  for (std::int64_t xi = 0; xi < n; ++xi) {
    const auto x = static_cast<std::uint64_t>(xi);
    for (std::uint64_t k = graph.offsets()[x]; k < graph.offsets()[x + 1]; ++k) {
      const std::uint64_t y = neighbors[k];
      if (y < x) continue;  // this list holds the edge's weight
      const std::uint64_t at = entry_of(graph, y, x);
      if (at == graph.offsets()[y + 1]) {
        ++unmatched;
      } else {
        weights[k] = weights[at];
      }
    }
  }
  std::uint64_t unweighted = 0;
#pragma omp parallel for schedule(static) reduction(+ : unweighted)
  for (std::int64_t k = 0; k < total; ++k) unweighted += weights[static_cast<std::uint64_t>(k)] == kNone ? 1 : 0;
  if (unmatched != 0 || unweighted != 0) {
    throw Error(ExitCode::kFailure, "the graph's lists are not symmetric or lack tuples: " +
                                        std::to_string(unmatched + unweighted) + " entries without a weight");
  }
  return weights;
}

template LargeArray<float> build_list_weights<std::uint32_t>(const Csr<std::uint32_t>&, const InputEdges&);
template LargeArray<float> build_list_weights<std::uint64_t>(const Csr<std::uint64_t>&, const InputEdges&);

}  // namespace zbfs
