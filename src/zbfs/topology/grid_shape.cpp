#include "zbfs/topology/grid_shape.hpp"

#include <charconv>

namespace zbfs {

std::string_view to_string(Partition partition) {
  switch (partition) {
    case Partition::k1D: return "1d";
    case Partition::k2D: return "2d";
    case Partition::kHybrid: return "hybrid";
  }
  return "unknown";
}

std::optional<Partition> parse_partition(std::string_view text) {
  if (text == "1d") return Partition::k1D;
  if (text == "2d") return Partition::k2D;
  if (text == "hybrid") return Partition::kHybrid;
  return std::nullopt;
}

std::optional<GridShape> hybrid_grid(int ranks, int ranks_per_node) {
  if (ranks < 1 || ranks_per_node < 1 || ranks % ranks_per_node != 0) return std::nullopt;
  const GridShape nodes = most_square_grid(ranks / ranks_per_node);
  return GridShape{nodes.cols * ranks_per_node, nodes.rows, ranks_per_node};
}

GridShape most_square_grid(int ranks) {
  int rows = 1;
  for (int r = 1; r * r <= ranks; ++r) {
    if (ranks % r == 0) rows = r;
  }
  return {rows, ranks / rows};
}

std::optional<GridShape> parse_grid_shape(std::string_view text) {
  const auto x = text.find_first_of("xX");
  if (x == std::string_view::npos) return std::nullopt;
  auto parse = [](std::string_view part) -> std::optional<int> {
    int value = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (ec != std::errc() || end != part.data() + part.size() || value <= 0) return std::nullopt;
    return value;
  };
  const auto rows = parse(text.substr(0, x));
  const auto cols = parse(text.substr(x + 1));
  if (!rows || !cols) return std::nullopt;
  return GridShape{*rows, *cols};
}

}  // namespace zbfs
