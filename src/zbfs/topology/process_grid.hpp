// ProcessGrid: the ranks of the job arranged as an R x C grid with its row and column
// communicators, and where every vertex and every directed edge lives. 1D partitioning is
// the 1 x P grid: a rank's column is itself and its row is the whole job.
//
// Rank (r, c), world rank GridShape::rank_at(r, c), owns vertex piece c * R + r and
// stores the directed edges u -> v with u in its column group (the pieces of processor
// column c) and v in its row group (the pieces of processor row r). A traversal layout
// says, for one direction, along which communicator the frontier is gathered (expand)
// and along which discovered vertices go to their owners (fold). Construction is
// collective over MPI_COMM_WORLD.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/mpi/communicator.hpp"
#include "zbfs/topology/grid_shape.hpp"
#include "zbfs/topology/vertex_partition.hpp"

namespace zbfs {

struct TraversalLayout {
  const Communicator* expand = nullptr;  // gathers the frontier of `source`
  PieceGroup source;                     // vertices whose frontier state this rank reads
  const Communicator* fold = nullptr;    // sends discoveries to the owners in `target`
  PieceGroup target;                     // vertices this rank discovers
  // Which stored local graph the step reads: the forward one (rows: column group,
  // neighbours: row group) or its transpose (rows: row group, neighbours: column group).
  bool transposed_graph = false;
};

class ProcessGrid {
 public:
  // Collective. `shape` must multiply to the world size (1D: any shape is replaced by 1 x P).
  // Every call of the three communicators is reported to `observer` (may be nullptr).
  ProcessGrid(Partition partition, GridShape shape, std::uint64_t num_vertices, TrafficObserver* observer);

  // Gives all three communicators the node of every rank, so that their traffic is split
  // by link class (see Communicator).
  void attach_nodes(std::span<const int> node_of_world);
  // Times the wait before every collective of all three communicators (see Communicator).
  void time_waits(bool on);

  [[nodiscard]] Partition partition() const { return partition_; }
  [[nodiscard]] const GridShape& shape() const { return shape_; }
  [[nodiscard]] const VertexBlocks& blocks() const { return blocks_; }
  [[nodiscard]] const Communicator& world() const { return world_; }
  [[nodiscard]] const Communicator& row() const { return row_; }
  [[nodiscard]] const Communicator& col() const { return col_; }
  [[nodiscard]] int rank() const { return world_.rank(); }
  [[nodiscard]] int size() const { return world_.size(); }
  [[nodiscard]] int my_row() const { return shape_.row_of(rank()); }
  [[nodiscard]] int my_col() const { return shape_.col_of(rank()); }
  [[nodiscard]] int my_piece() const { return shape_.piece_of_rank(rank()); }
  [[nodiscard]] std::uint64_t my_first_vertex() const { return blocks_.first_vertex(my_piece()); }

  // The pieces of this rank's processor column (contiguous) and row (strided).
  [[nodiscard]] const PieceGroup& col_group() const { return col_group_; }
  [[nodiscard]] const PieceGroup& row_group() const { return row_group_; }

  [[nodiscard]] int owner_of(std::uint64_t v) const {
    return rank_of_piece_[static_cast<std::size_t>(blocks_.piece_of(v))];
  }
  [[nodiscard]] bool owns(std::uint64_t v) const { return blocks_.piece_of(v) == my_piece(); }
  // World rank that stores directed edge u -> v.
  [[nodiscard]] int holder_of_edge(std::uint64_t u, std::uint64_t v) const {
    return rank_of_row_[static_cast<std::size_t>(blocks_.piece_of(v))] +
           rank_of_col_[static_cast<std::size_t>(blocks_.piece_of(u))];
  }

  [[nodiscard]] TraversalLayout top_down() const;
  [[nodiscard]] TraversalLayout bottom_up() const;

 private:
  Partition partition_;
  GridShape shape_;
  VertexBlocks blocks_;
  Communicator world_;
  Communicator row_;
  Communicator col_;
  PieceGroup col_group_;
  PieceGroup row_group_;
  // Per piece: its owner's world rank, and the parts of a world rank that its grid row
  // and its grid column give (rank_at(r, c) = rank_of_row_[.] + rank_of_col_[.]): lookups,
  // not divisions.
  std::vector<int> rank_of_piece_;
  std::vector<int> rank_of_row_;
  std::vector<int> rank_of_col_;
};

}  // namespace zbfs
