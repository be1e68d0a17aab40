// DirectionPolicy: Beamer et al.'s switch between top-down and bottom-up steps, the one
// rule every BFS kernel follows (the shared-memory and the distributed one). Go bottom-up
// when the frontier's edges (scout count) exceed the unexplored edges / alpha; once
// bottom-up, stay while the frontier grows or is above vertices / beta. Local: each rank
// feeds it the same global counts, so every rank decides alike.
#pragma once

#include <algorithm>
#include <cstdint>

#include "zbfs/bfs/bfs_options.hpp"

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
  [[nodiscard]] bool go_bottom_up() const {
    return options_.direction == Direction::kBottomUp ||
           (options_.direction == Direction::kAuto &&
            static_cast<double>(scout_count_) > static_cast<double>(edges_to_check_) / options_.alpha);
  }
  // After a bottom-up step that woke `awake` vertices, the step before `previous_awake`:
  // whether to take another bottom-up step.
  [[nodiscard]] bool stay_bottom_up(std::uint64_t awake, std::uint64_t previous_awake) const {
    return awake > 0 && (options_.direction == Direction::kBottomUp || awake >= previous_awake ||
                         static_cast<double>(awake) > wake_limit_);
  }
  // A run of bottom-up steps ended.
  void bottom_up_done() { scout_count_ = 1; }
  // A top-down step explored the frontier's edges; the new frontier has `frontier_edges`.
  void top_down_done(std::uint64_t frontier_edges) {
    edges_to_check_ -= std::min(edges_to_check_, scout_count_);
    scout_count_ = frontier_edges;
  }

 private:
  BfsOptions options_;
  double wake_limit_;
  std::uint64_t edges_to_check_;
  std::uint64_t scout_count_;
};

}  // namespace zbfs
