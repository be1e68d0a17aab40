// SearchPlan: what every rank of a hypothetical P-rank job sends to whom, and the work its
// local steps do, in each level of one distributed BFS, computed on one process from the
// whole graph, for rank counts no online simulation can hold (zbfs trace, replayed by
// SimGrid: docs/simulation.md).
//
// It follows the CPU search's protocol (bfs/step_protocol.hpp over DistributedBfs) with
// direct exchanges (in 2D and hybrid the predecessor reduction's reads may follow a
// relaying route), no codec, the column gather by allgatherv or by the set-union
// allreduce (wire/direct/direct_exchanger.cpp's union_allreduce) and --overlap off, and gets
// the same messages and bytes because what a rank sends depends only on which vertices
// lie where, never on parents or timing:
// - a BFS level is a distance from the root, so every level's frontier, and the counts
//   that steer DirectionPolicy, are the same on any layout;
// - a top-down step's reports from rank (r, c) are the row-group vertices with a frontier
//   neighbour in column group c that the rank has not reported (or found) before in the
//   search; a vertex's neighbours lie one level above, at or below it, so one pass over
//   each vertex's list, by the column each neighbour lies in, finds every report;
// - a bottom-up step's piece is searched first by its owner, then by the row's members in
//   ring order (step_protocol.cpp): the first whose block holds a frontier neighbour finds
//   the vertex, and the owner claims it from that member;
// - the owner of a vertex claims it from the lowest member that reported it, unless its
//   own block reached it, and the predecessor reduction asks each member for the claims
//   its reports won.
// Counted work (metrics/work_counts.hpp) is the search's, kind by kind (checked per
// search and per level's busiest rank against real runs): a bottom-up row's hub and the
// entries its scan reads before the first frontier neighbour follow from the order the
// distributed lists keep (sorted ids: the piece, then descending input-tuple degree,
// equal degrees in input order; graph/degree_order.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "zbfs/bfs/bfs_options.hpp"
#include "zbfs/bfs/bfs_stats.hpp"
#include "zbfs/graph/csr.hpp"
#include "zbfs/metrics/work_counts.hpp"
#include "zbfs/topology/grid_shape.hpp"
#include "zbfs/topology/vertex_partition.hpp"
#include "zbfs/wire/column_gather.hpp"
#include "zbfs/wire/routed/route_choice.hpp"

namespace zbfs {

// A hypothetical job's layout: rank (r, c) owns piece c * R + r (topology/process_grid.hpp).
class ReplayLayout {
 public:
  // 1D: any shape is replaced by 1 x ranks. `route`: the run's --route (2D and hybrid,
  // a relaying route: the predecessor reduction's reads travel along it). `gather`: how
  // top-down steps gather the frontier along a column.
  ReplayLayout(Partition partition, GridShape shape, std::uint64_t num_vertices,
               const std::optional<RouteChoice>& route = std::nullopt, ColumnGather gather = ColumnGather::kAllgatherv);

  [[nodiscard]] Partition partition() const { return partition_; }
  [[nodiscard]] const GridShape& shape() const { return shape_; }
  [[nodiscard]] const VertexBlocks& blocks() const { return blocks_; }
  [[nodiscard]] int ranks() const { return shape_.size(); }
  [[nodiscard]] int rows() const { return shape_.rows; }
  [[nodiscard]] int cols() const { return shape_.cols; }
  [[nodiscard]] int piece_of(std::uint64_t v) const { return blocks_.piece_of(v); }
  [[nodiscard]] int row_of_piece(int piece) const { return piece % shape_.rows; }
  [[nodiscard]] int col_of_piece(int piece) const { return piece / shape_.rows; }
  [[nodiscard]] int piece_at(int row, int col) const { return col * shape_.rows + row; }
  [[nodiscard]] int world_rank_of_piece(int piece) const { return shape_.rank_of_piece(piece); }
  // 2D and hybrid: bottom-up steps gather along the column and search around the row's
  // ring; 1D: they gather along the whole job and search the rank's own piece.
  [[nodiscard]] bool bottom_up_ring() const { return grid_layout(partition_); }
  // The route along a processor row, or nullptr for direct exchanges.
  [[nodiscard]] const RoutePlan* row_route() const { return row_route_ ? &*row_route_ : nullptr; }
  // 1D over a route: top-down folds are (vertex, parent) updates relayed along it (in 2D
  // and hybrid the folds stay direct and the predecessor reduction's reads follow it).
  [[nodiscard]] bool routed_fold() const { return row_route_ && partition_ == Partition::k1D; }
  // With a routed fold: the members `member` hands items to at `hop`, and those that
  // hand it items (RoutePlan::hop_peers), and where a (hop, from, to) pair's count lies
  // among the hop's hop_peer_slots.
  [[nodiscard]] std::span<const int> hop_targets(int hop, int member) const;
  [[nodiscard]] std::span<const int> hop_sources(int hop, int member) const;
  [[nodiscard]] std::size_t hop_peer_slot(int hop, int from, int to) const;
  [[nodiscard]] std::size_t hop_peer_slots(int hop) const { return hop_to_[static_cast<std::size_t>(hop)].size(); }
  // Top-down steps gather along columns of more than one rank by the set-union allreduce.
  [[nodiscard]] bool union_gather() const { return gather_ == ColumnGather::kUnion && shape_.rows > 1; }
  // The union's exchanges: the fold-in of the members past the largest power of two in a
  // column, then one per halving (union_given's steps).
  [[nodiscard]] int union_steps() const;

 private:
  Partition partition_;
  GridShape shape_;
  ColumnGather gather_;
  VertexBlocks blocks_;
  std::optional<RoutePlan> row_route_;
  // Per hop, every member's hop peers, flattened, and where each member's start.
  std::vector<std::vector<int>> hop_to_;
  std::vector<std::vector<std::size_t>> hop_first_;
  std::vector<std::vector<int>> hop_from_;
  std::vector<std::vector<std::size_t>> hop_from_first_;
};

// One level's traffic and work.
struct PlannedLevel {
  StepKind kind = StepKind::kTopDown;
  std::uint64_t frontier = 0;    // vertices the step expanded
  std::uint64_t discovered = 0;  // vertices it found
  // By piece: top-down, the piece's frontier vertices (its ids in the column gather);
  // bottom-up, the gather mask's bits in the piece (positions still open).
  std::vector<std::uint32_t> gathered;
  // folded[piece * C + m]: ids the rank of `piece` sends member m of its row (C members).
  std::vector<std::uint32_t> folded;
  // By piece, when counted: the level's local work where the search does it, so that a
  // replay charges it between the same exchanges: before the column gather (top-down:
  // the frontier's ids), before the fold (top-down: the expansion; bottom-up: the
  // rank's own piece searched), around the row's ring (bottom-up: the other members'
  // pieces, spread evenly over its steps) and after the fold (claims, the level counted).
  std::vector<WorkCounts> work_before_gather;
  std::vector<WorkCounts> work;
  std::vector<WorkCounts> work_ring;
  std::vector<WorkCounts> work_after_fold;
  // Top-down under ReplayLayout::union_gather: union_given[step][piece], the ids the
  // piece's rank gives its partner in each of the union's exchanges (step 0: a member
  // past the column's largest power of two hands its frontier to the member that power
  // below it), and union_held[piece], the ids it holds after the halvings, which the
  // closing allgather carries.
  std::vector<std::vector<std::uint32_t>> union_given;
  std::vector<std::uint32_t> union_held;
  // Top-down under ReplayLayout::routed_fold: per hop, the updates and destination groups
  // each rank hands each hop peer (at ReplayLayout::hop_peer_slot), and by piece the
  // updates that reach it, one per vertex.
  struct HopCounts {
    std::vector<std::uint32_t> items;
    std::vector<std::uint32_t> groups;
  };
  std::vector<HopCounts> fold_hops;
  std::vector<std::uint32_t> fold_arrivals;
};

struct SearchPlan {
  std::uint64_t root = 0;
  std::uint64_t root_degree = 0;
  std::uint64_t reached = 0;
  // Input tuples with both ends reached (what a run's TEPS divides by).
  std::uint64_t traversed_edges = 0;
  std::vector<PlannedLevel> levels;
  // Whether a predecessor reduction follows (a row of more than one rank), and
  // claimed_from[piece * C + s]: the vertices the piece's owner claimed from member s's
  // report, whose parents it asks s for.
  bool reduce_after = false;
  std::vector<std::uint32_t> claimed_from;
  // By piece, when counted: the work before the first level (the search's bitmaps
  // cleared) and after the last (the reduction's claims, requests and answers, and the
  // parents moved out).
  std::vector<WorkCounts> start_work;
  std::vector<WorkCounts> end_work;
  // Along a route (ReplayLayout::row_route), the reduction's requests hop by hop: per hop,
  // [piece * C + n], the requests the piece's rank hands member n, and in how many
  // destination groups (wire/routed/hop_message.hpp); the replies retrace them.
  std::vector<std::vector<std::uint32_t>> read_items;
  std::vector<std::vector<std::uint32_t>> read_groups;
};

// Bytes the plan of a search with `levels` levels holds (checked before planning).
std::uint64_t search_plan_bytes(const ReplayLayout& layout, std::uint64_t levels, bool count_work);

// The plan of a search from `root` (input ids, as `graph` is: build_csr's kInput order).
SearchPlan plan_search(const Csr<std::uint32_t>& graph, const ReplayLayout& layout, std::uint64_t root,
                       const BfsOptions& options, bool count_work);

}  // namespace zbfs
