// The R x C process grid of 2D partitioning as pure arithmetic: the most square
// factorisation of a rank count, parsing of "RxC", and where a rank sits. World rank
// w = row * cols + col; the vertex piece a rank owns is col * rows + row, so that a
// processor column owns a contiguous range of pieces.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zbfs {

// How the graph is split over ranks: vertex blocks (1D) or an R x C grid of the
// adjacency matrix (2D).
enum class Partition { k1D, k2D };

std::string_view to_string(Partition partition);
std::optional<Partition> parse_partition(std::string_view text);

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

// "RxC" with positive R and C; nullopt when malformed.
std::optional<GridShape> parse_grid_shape(std::string_view text);

}  // namespace zbfs
