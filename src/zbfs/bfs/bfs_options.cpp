#include "zbfs/bfs/bfs_options.hpp"

namespace zbfs {

std::string_view to_string(Direction direction) {
  switch (direction) {
    case Direction::kAuto: return "auto";
    case Direction::kTopDown: return "top-down";
    case Direction::kBottomUp: return "bottom-up";
  }
  return "auto";
}

std::optional<Direction> parse_direction(std::string_view text) {
  for (const Direction d : {Direction::kAuto, Direction::kTopDown, Direction::kBottomUp}) {
    if (to_string(d) == text) return d;
  }
  return std::nullopt;
}

}  // namespace zbfs
