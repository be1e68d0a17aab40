// The R x C process grid of 2D partitioning as pure arithmetic: the most square
// factorisation of a rank count, parsing of "RxC", and where a rank sits. World rank
// w = row * cols + col; the vertex piece a rank owns is col * rows + row, so that a
// processor column owns a contiguous range of pieces.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zbfs {

// How the graph is split over ranks: vertex blocks (1D), an R x C grid of the adjacency
// matrix (2D), or hybrid: 2D across nodes and 1D among the ranks of a node (one rank per
// GPU, as the multi-GPU BFS zbfs grew from lays them out). Hybrid is the 2D layout on the
// grid hybrid_grid() gives, so every 2D code path serves it.
enum class Partition { k1D, k2D, kHybrid };

std::string_view to_string(Partition partition);
std::optional<Partition> parse_partition(std::string_view text);

// Whether the partition lays the adjacency out on an R x C grid with a transposed local
// graph (2D and hybrid), not in vertex blocks with whole rows (1D).
inline bool grid_layout(Partition partition) { return partition != Partition::k1D; }

struct GridShape {
  int rows = 1;
  int cols = 1;

  [[nodiscard]] int size() const { return rows * cols; }
  [[nodiscard]] int row_of(int rank) const { return rank / cols; }
  [[nodiscard]] int col_of(int rank) const { return rank % cols; }
  [[nodiscard]] int rank_at(int row, int col) const { return row * cols + col; }
  [[nodiscard]] int piece_of_rank(int rank) const { return col_of(rank) * rows + row_of(rank); }
  [[nodiscard]] int rank_of_piece(int piece) const { return rank_at(piece % rows, piece / rows); }
  [[nodiscard]] std::string to_string() const { return std::to_string(rows) + "x" + std::to_string(cols); }
  friend bool operator==(const GridShape&, const GridShape&) = default;
};

// rows <= cols, rows * cols == ranks, rows as large as possible (primes give 1 x P).
GridShape most_square_grid(int ranks);

// The hybrid partition's grid for `ranks` ranks in nodes of `ranks_per_node` consecutive
// ranks: the nodes form the most square Rn x Cn grid, and each node's ranks sit side by
// side in one processor row, so the grid is Rn x (Cn * ranks_per_node). With world rank
// = row * cols + col, node k's ranks (k * g ... k * g + g - 1) are then exactly one row's
// columns Cn_k * g ...: a top-down fold along the row is a node-local all-to-all among
// them (1D) plus the other nodes of the row, and the frontier gather along the column
// crosses nodes only (2D). nullopt unless ranks_per_node divides ranks.
std::optional<GridShape> hybrid_grid(int ranks, int ranks_per_node);

// "RxC" with positive R and C; nullopt when malformed.
std::optional<GridShape> parse_grid_shape(std::string_view text);

}  // namespace zbfs
