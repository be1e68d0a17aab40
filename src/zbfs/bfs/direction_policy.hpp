// DirectionPolicy: Beamer et al.'s switch between top-down and bottom-up steps, the one
// rule every BFS kernel follows (the shared-memory and the distributed one). Go bottom-up
// when the frontier's edges (scout count) exceed the unexplored edges / alpha; once
// bottom-up, stay while the frontier grows or is above vertices / beta. Local: each rank
// feeds it the same global counts, so every rank decides alike.
#pragma once

#include <cstdint>

#include "zbfs/bfs/bfs_options.hpp"
#include "zbfs/bfs/bfs_stats.hpp"
#include "zbfs/core/host_device.hpp"
#include "zbfs/core/timer.hpp"

namespace zbfs {

class DirectionPolicy {
 public:
  // `directed_edges`: the graph's edges counted from both ends; `root_degree`: the
  // first frontier's edges.
  DirectionPolicy(const BfsOptions& options, std::uint64_t num_vertices, std::uint64_t directed_edges,
                  std::uint64_t root_degree)
      : options_(options),
        wake_limit_(static_cast<double>(num_vertices) / options.beta),
        edges_to_check_(directed_edges),
        scout_count_(root_degree) {}

  // Whether the next step goes bottom-up (asked before each top-down step or run of
  // bottom-up steps).
  [[nodiscard]] ZBFS_HOST_DEVICE bool go_bottom_up() const {
    return options_.direction == Direction::kBottomUp ||
           (options_.direction == Direction::kAuto &&
            static_cast<double>(scout_count_) > static_cast<double>(edges_to_check_) / options_.alpha);
  }
  // After a bottom-up step that woke `awake` vertices, the step before `previous_awake`:
  // whether to take another bottom-up step.
  [[nodiscard]] ZBFS_HOST_DEVICE bool stay_bottom_up(std::uint64_t awake, std::uint64_t previous_awake) const {
    return awake > 0 && (options_.direction == Direction::kBottomUp || awake >= previous_awake ||
                         static_cast<double>(awake) > wake_limit_);
  }
  // A run of bottom-up steps ended.
  ZBFS_HOST_DEVICE void bottom_up_done() { scout_count_ = 1; }
  // A top-down step explored the frontier's edges; the new frontier has `frontier_edges`.
  ZBFS_HOST_DEVICE void top_down_done(std::uint64_t frontier_edges) {
    edges_to_check_ -= edges_to_check_ < scout_count_ ? edges_to_check_ : scout_count_;
    scout_count_ = frontier_edges;
  }

 private:
  BfsOptions options_;
  double wake_limit_;
  std::uint64_t edges_to_check_;
  std::uint64_t scout_count_;
};

// A level's end as the distributed kernels count it, over all ranks: the new frontier's
// vertices and (after a top-down step) their edges.
struct LevelCounts {
  std::uint64_t frontier = 0;
  std::uint64_t frontier_edges = 0;
};

// The distributed kernels' loop over levels (the CPU's and the device's): from the start's
// counts, one step at a time in the direction `policy` chooses, until the frontier is
// empty; top_down() and bottom_up() take one step and return its level's counts. Each
// step is timed and recorded in `stats`.
template <class TopDown, class BottomUp>
void run_levels(DirectionPolicy& policy, LevelCounts level, BfsStats& stats, TopDown top_down, BottomUp bottom_up) {
  Stopwatch clock;
  while (level.frontier > 0) {
    if (policy.go_bottom_up()) {
      std::uint64_t awake = level.frontier;
      std::uint64_t previous_awake = 0;
      do {
        previous_awake = awake;
        clock.restart();
        level = bottom_up();
        awake = level.frontier;
        const double t = clock.elapsed_s();
        stats.steps.push_back({StepKind::kBottomUp, previous_awake, awake, t});
        stats.bottom_up_time_s += t;
      } while (policy.stay_bottom_up(awake, previous_awake));
      policy.bottom_up_done();
    } else {
      const std::uint64_t frontier = level.frontier;
      clock.restart();
      level = top_down();
      policy.top_down_done(level.frontier_edges);
      const double t = clock.elapsed_s();
      stats.steps.push_back({StepKind::kTopDown, frontier, level.frontier, t});
      stats.top_down_time_s += t;
    }
  }
}

}  // namespace zbfs
