#include "zbfs/topology/process_grid.hpp"

#include <string>

#include "zbfs/core/error.hpp"
#include "zbfs/core/wording.hpp"

namespace zbfs {

ProcessGrid::ProcessGrid(Partition partition, GridShape shape, std::uint64_t num_vertices, TrafficObserver* observer)
    : partition_(partition), world_(Communicator::world()) {
  world_.observe(observer);
  if (partition == Partition::k1D) shape = GridShape{1, world_.size()};
  if (shape.size() != world_.size()) {
    throw_usage_error("grid " + shape.to_string() + " has " + counted(shape.size(), "rank") + " but the job has " +
                      std::to_string(world_.size()));
  }
  if (shape.stack < 1 || shape.rows % shape.stack != 0) {
    throw Error(ExitCode::kFailure, "grid " + shape.to_string() + ": stacks of " + std::to_string(shape.stack) +
                                        " ranks do not fill its columns");
  }
  shape_ = shape;
  blocks_ = VertexBlocks(num_vertices, world_.size());
  row_ = world_.split(my_row(), my_col());
  col_ = world_.split(my_col(), my_row());
  world_.set_role(CommRole::kWorld);
  row_.set_role(CommRole::kRow);
  col_.set_role(CommRole::kColumn);
  col_group_ = PieceGroup(blocks_, my_col() * shape_.rows, 1, shape_.rows);
  row_group_ = PieceGroup(blocks_, my_row(), shape_.rows, shape_.cols);
  for (int piece = 0; piece < shape_.size(); ++piece) {
    rank_of_piece_.push_back(shape_.rank_of_piece(piece));
    rank_of_row_.push_back(shape_.rank_at(piece % shape_.rows, 0));
    rank_of_col_.push_back(shape_.rank_at(0, piece / shape_.rows));
  }
}

void ProcessGrid::attach_nodes(std::span<const int> node_of_world) {
  world_.attach_nodes(node_of_world);
  row_.attach_nodes(node_of_world);
  col_.attach_nodes(node_of_world);
}

void ProcessGrid::time_waits(bool on) {
  world_.time_waits(on);
  row_.time_waits(on);
  col_.time_waits(on);
}

TraversalLayout ProcessGrid::top_down() const { return {&col_, col_group_, &row_, row_group_, false}; }

TraversalLayout ProcessGrid::bottom_up() const {
  // 2D: the same communicators, the transposed local graph. 1D: the frontier of every
  // rank is gathered (along the row, i.e. the job) and each rank checks its own vertices,
  // whose full adjacency its rows already hold.
  if (grid_layout(partition_)) return {&col_, col_group_, &row_, row_group_, true};
  return {&row_, row_group_, &col_, col_group_, false};
}

}  // namespace zbfs
