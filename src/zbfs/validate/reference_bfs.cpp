#include "zbfs/validate/reference_bfs.hpp"

#include <deque>

namespace zbfs {

std::vector<std::int64_t> reference_bfs_levels(std::uint64_t num_vertices, std::span<const Edge> edges,
                                               std::uint64_t root) {
  std::vector<std::vector<std::uint64_t>> adjacency(num_vertices);
  for (const Edge& e : edges) {
    adjacency[e.u].push_back(e.v);
    adjacency[e.v].push_back(e.u);
  }
  std::vector<std::int64_t> level(num_vertices, -1);
  std::deque<std::uint64_t> queue{root};
  level[root] = 0;
  while (!queue.empty()) {
    const std::uint64_t u = queue.front();
    queue.pop_front();
    for (const std::uint64_t v : adjacency[u]) {
      if (level[v] == -1) {
        level[v] = level[u] + 1;
        queue.push_back(v);
      }
    }
  }
  return level;
}

std::vector<std::int64_t> levels_from_parents(std::span<const std::int64_t> parent, std::uint64_t root) {
  std::vector<std::int64_t> level(parent.size(), -1);
  level[root] = 0;
  std::vector<std::uint64_t> path;
  for (std::uint64_t v = 0; v < parent.size(); ++v) {
    if (parent[v] < 0 || level[v] != -1) continue;
    path.clear();
    std::uint64_t x = v;
    // A chain longer than the vertex count loops; one ending at -1 or out of range is
    // broken. Either way its vertices get kBrokenLevel instead of a level.
    bool broken = false;
    while (level[x] == -1) {
      if (parent[x] < 0 || static_cast<std::uint64_t>(parent[x]) >= parent.size() || path.size() > parent.size()) {
        broken = true;  // x itself is unreached (or its parent is not a vertex)
        if (parent[x] >= 0) path.push_back(x);
        break;
      }
      path.push_back(x);
      x = static_cast<std::uint64_t>(parent[x]);
    }
    broken = broken || level[x] == kBrokenLevel;
    std::int64_t depth = broken ? 0 : level[x];
    for (auto it = path.rbegin(); it != path.rend(); ++it) level[*it] = broken ? kBrokenLevel : ++depth;
  }
  return level;
}

}  // namespace zbfs
