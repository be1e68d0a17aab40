// How kernel 2 traverses: fixed top-down, fixed bottom-up, or direction-optimizing with
// Beamer et al.'s switch (go bottom-up when the frontier's edges exceed the unexplored
// edges / alpha; go back top-down when the frontier shrinks below vertices / beta).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zbfs {

enum class Direction { kAuto, kTopDown, kBottomUp };

struct BfsOptions {
  Direction direction = Direction::kAuto;
  double alpha = 15.0;
  double beta = 18.0;
};

std::string_view to_string(Direction direction);
std::optional<Direction> parse_direction(std::string_view text);

}  // namespace zbfs
