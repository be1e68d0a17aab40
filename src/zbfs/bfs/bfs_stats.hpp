// What one BFS did, step by step: direction, frontier size, vertices discovered and time.
// Kernels fill this instead of printing; the driver turns it into JSON.
#pragma once

#include <cstdint>
#include <vector>

namespace zbfs {

enum class StepKind { kTopDown, kBottomUp };

struct BfsStep {
  StepKind kind;
  std::uint64_t frontier_vertices;  // vertices in the frontier the step expanded
  std::uint64_t discovered_vertices;
  double time_s;
};

struct BfsStats {
  std::vector<BfsStep> steps;
  double top_down_time_s = 0;
  double bottom_up_time_s = 0;
  double conversion_time_s = 0;  // queue <-> bitmap frontier conversions
  double init_time_s = 0;        // resetting the parent array and visited set

  // Levels of the BFS tree, the root's level included.
  [[nodiscard]] std::uint64_t levels() const {
    std::uint64_t count = 1;
    for (const BfsStep& s : steps) count += s.discovered_vertices > 0 ? 1 : 0;
    return count;
  }
};

}  // namespace zbfs
