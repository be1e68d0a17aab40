// The R x C process grid of 2D partitioning as pure arithmetic: the most square
// factorisation of a rank count, parsing of "RxC", and where a rank sits. World ranks
// fill the grid row by row (w = row * cols + col), or, on a hybrid grid, in stacks of
// `stack` consecutive ranks (a node's) that each fill `stack` rows of one column. The
// vertex piece a rank owns is col * rows + row, so that a processor column owns a
// contiguous range of pieces.
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
  // Consecutive world ranks stacked in one column (rows is a multiple); 1: row by row.
  int stack = 1;

  [[nodiscard]] int size() const { return rows * cols; }
  [[nodiscard]] int row_of(int rank) const { return rank / stack / cols * stack + rank % stack; }
  [[nodiscard]] int col_of(int rank) const { return rank / stack % cols; }
  [[nodiscard]] int rank_at(int row, int col) const { return ((row / stack) * cols + col) * stack + row % stack; }
  [[nodiscard]] int piece_of_rank(int rank) const { return col_of(rank) * rows + row_of(rank); }
  [[nodiscard]] int rank_of_piece(int piece) const { return rank_at(piece % rows, piece / rows); }
  [[nodiscard]] std::string to_string() const { return std::to_string(rows) + "x" + std::to_string(cols); }
  friend bool operator==(const GridShape&, const GridShape&) = default;
};

// rows <= cols, rows * cols == ranks, rows as large as possible (primes give 1 x P).
GridShape most_square_grid(int ranks);

// The hybrid partition's grid for `ranks` ranks in nodes of `ranks_per_node` (g)
// consecutive ranks: the nodes form the most square Rn x Cn grid with Rn >= Cn, and each
// node's ranks are stacked in one processor column (stack = g), so the grid is
// (Rn * g) x Cn. A node's ranks split its block of the adjacency 1D by target vertex:
// the frontier gather along the column is node-local among them (plus the other nodes
// of the column), a processor row has one rank per node of its node row (2D across
// nodes), and on one node the grid is g x 1: no fold at all. Tall, because zbfs's folds
// cost more than its gathers (measured at 4 ranks, scale 20, on one node and on two
// emulated hosts: 4 x 1 searched in half the time of 2 x 2; docs/performance.md).
// nullopt unless ranks_per_node divides ranks.
std::optional<GridShape> hybrid_grid(int ranks, int ranks_per_node);

// "RxC" with positive R and C; nullopt when malformed.
std::optional<GridShape> parse_grid_shape(std::string_view text);

}  // namespace zbfs
