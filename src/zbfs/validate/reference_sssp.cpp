#include "zbfs/validate/reference_sssp.hpp"

#include <functional>
#include <limits>
#include <queue>
#include <utility>

namespace zbfs {

std::vector<float> reference_sssp_distances(std::uint64_t num_vertices, std::span<const Edge> edges,
                                            std::span<const float> weights, std::uint64_t root) {
  std::vector<std::vector<std::pair<std::uint64_t, float>>> adjacency(num_vertices);
  for (std::size_t i = 0; i < edges.size(); ++i) {
    adjacency[edges[i].u].emplace_back(edges[i].v, weights[i]);
    adjacency[edges[i].v].emplace_back(edges[i].u, weights[i]);
  }
  std::vector<float> distance(num_vertices, std::numeric_limits<float>::infinity());
  using Entry = std::pair<float, std::uint64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  distance[root] = 0;
  queue.emplace(0.0F, root);
  while (!queue.empty()) {
    const auto [d, u] = queue.top();
    queue.pop();
    if (d > distance[u]) continue;  // a stale entry
    for (const auto& [v, w] : adjacency[u]) {
      const float through = d + w;
      if (through < distance[v]) {
        distance[v] = through;
        queue.emplace(through, v);
      }
    }
  }
  return distance;
}

}  // namespace zbfs
