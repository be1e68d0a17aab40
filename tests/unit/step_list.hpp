// A search's steps as comparable tuples (kind, frontier, discovered): what two kernels
// that follow the same DirectionPolicy on the same counts must agree on.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "zbfs/bfs/bfs_stats.hpp"

namespace zbfs::testing {

inline std::vector<std::tuple<int, std::uint64_t, std::uint64_t>> step_list(const BfsStats& stats) {
  std::vector<std::tuple<int, std::uint64_t, std::uint64_t>> steps;
  for (const BfsStep& s : stats.steps) {
    steps.emplace_back(static_cast<int>(s.kind), s.frontier_vertices, s.discovered_vertices);
  }
  return steps;
}

}  // namespace zbfs::testing
