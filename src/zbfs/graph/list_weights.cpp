#include "zbfs/graph/list_weights.hpp"

#include <algorithm>
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
  const std::uint64_t missing =
      for_each_weighted_chunk(edges, [&](std::uint64_t, std::span<const Edge> part, std::span<const float> w) {
        std::uint64_t lost = 0;
        for (std::size_t i = 0; i < part.size(); ++i) {
          if (part[i].u == part[i].v) continue;  // self-loops are not in the lists
          const std::uint64_t u = graph.internal_id(part[i].u);
          const std::uint64_t v = graph.internal_id(part[i].v);
          const std::uint64_t uv = entry_of(graph, u, v);
          const std::uint64_t vu = entry_of(graph, v, u);
          if (uv == graph.offsets()[u + 1] || vu == graph.offsets()[v + 1]) {
            ++lost;
            continue;
          }
          lower_to(weights[uv], w[i]);
          lower_to(weights[vu], w[i]);
        }
        return lost;
      });
  if (missing != 0) {
    throw Error(ExitCode::kFailure, std::to_string(missing) + " weighted tuples have no entry in the graph's lists");
  }
  return weights;
}

template LargeArray<float> build_list_weights<std::uint32_t>(const Csr<std::uint32_t>&, const InputEdges&);
template LargeArray<float> build_list_weights<std::uint64_t>(const Csr<std::uint64_t>&, const InputEdges&);

}  // namespace zbfs
