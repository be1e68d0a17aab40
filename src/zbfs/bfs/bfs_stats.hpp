// What one BFS did, step by step: direction, frontier size, vertices discovered and time.
// Kernels fill this instead of printing; the driver turns it into JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "zbfs/metrics/level_work.hpp"

namespace zbfs {

// kAttach: forest pruning's last step (graph/peeled_forest.hpp), which hangs the peeled
// trees onto the searched core; it spans several levels.
enum class StepKind { kTopDown, kBottomUp, kAttach };

inline std::string_view to_string(StepKind kind) {
  switch (kind) {
    case StepKind::kTopDown: return "top-down";
    case StepKind::kBottomUp: return "bottom-up";
    case StepKind::kAttach: return "attach";
  }
  return "unknown";
}

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
  double attach_time_s = 0;      // forest pruning: attaching the peeled trees
  double output_time_s = 0;      // moving the parents from the kernels' vertex order to the input's
  // A pruned search's deepest level (its steps do not say: the attach step spans levels,
  // and a peeled root's search starts at the level of the core vertex it hangs from).
  std::optional<std::uint64_t> depth;
  // The distributed search's levels on this rank, one a step (metrics/level_work.hpp);
  // empty where a search does not count its work.
  std::vector<LevelWork> level_work;

  // Levels of the BFS tree, the root's level included.
  [[nodiscard]] std::uint64_t levels() const {
    if (depth) return *depth + 1;
    std::uint64_t count = 1;
    for (const BfsStep& s : steps) count += s.discovered_vertices > 0 ? 1 : 0;
    return count;
  }
};

}  // namespace zbfs
