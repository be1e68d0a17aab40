// DistributedGraph<V>: kernel 1 over MPI. Every rank holds its own slice of the
// Kronecker edge list (generate_edge_slice; the union of the slices is the
// single-process edge list), sends both directions of each tuple to the rank that stores
// it (ProcessGrid::holder_of_edge) in bounded rounds, and builds its local block: the forward CSR (rows: column group,
// neighbours: row group) and, for 2D, its transpose for bottom-up steps. Owners also get
// the full degree and input-tuple degree of their vertices. Construction is collective.
//
// Every rank renumbers its own piece by descending degree (graph/degree_order.hpp) before
// building: the CSRs' rows and neighbours, and the distinct degrees below, are in sorted
// ids (the same pieces, offsets renumbered). order() and the group tables translate back.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "zbfs/core/large_array.hpp"
#include "zbfs/core/packed_edge_list.hpp"
#include "zbfs/graph/degree_order.hpp"
#include "zbfs/graph/hub_neighbors.hpp"
#include "zbfs/graph/local_csr.hpp"
#include "zbfs/topology/process_grid.hpp"
#include "zbfs/wire/routed/route_plan.hpp"

namespace zbfs {

template <class V>
class DistributedGraph {
 public:
  // --hypersparse: whether a CSR keeps its rows with a list only, by position
  // (LocalCsr::by_position, graph/row_index.hpp): never, where that halves what its rows
  // cost (each CSR, each rank), or always. Weighted lists and a device's stay by row.
  enum class SparseRows { kNever, kWherePays, kAlways };

  // `compressed_lists`: the local lists end up as byte-coded gaps (LocalCsr::compress,
  // --adjacency compressed); construction's peak is unchanged, what the search holds is
  // about half. `weights`: one per tuple of `slice` (SSSP), which then travel with the
  // tuples and sit beside the forward lists' entries (the lightest duplicate's; plain
  // lists, 32-bit groups). `shuffle_route`: the route the tuples take to the ranks that
  // store them (wire/routed/routed_records.hpp; the run's --route), a plan for the job's rank
  // count; none, direct or sparse: one alltoallv over the job a round. The graph is the same.
  // `list_builder`: who builds the forward lists from the pairs (a device backend's target;
  // empty: the CPU; unweighted lists only). `sparse_rows`: hypersparse, kernel 1 holds no
  // array over a group's rows but bits (and one group's renumbering table at a time).
  DistributedGraph(const ProcessGrid& grid, const PackedEdgeList& slice, bool compressed_lists = false,
                   std::uint64_t edges_per_round = std::uint64_t{1} << 20,
                   std::optional<std::span<const float>> weights = std::nullopt,
                   const std::optional<RoutePlan>& shuffle_route = std::nullopt,
                   const LocalListBuilder<V>& list_builder = {}, SparseRows sparse_rows = SparseRows::kNever);

  [[nodiscard]] const LocalCsr<V>& forward() const { return forward_; }
  // The forward lists' order for a weighted search (LocalCsr::order_weighted_rows).
  void order_forward_rows(float light_below, bool heavy_by_neighbour) {
    forward_.order_weighted_rows(light_below, heavy_by_neighbour);
  }
  // Whether either CSR keeps its rows with lists only.
  [[nodiscard]] bool hypersparse() const { return forward_.hypersparse() || transposed_.hypersparse(); }
  [[nodiscard]] bool may_keep_sparse() const { return sparse_rows_ != SparseRows::kNever; }
  [[nodiscard]] bool sparse_pays_here(std::uint64_t present, std::uint64_t ids, double bytes_per_id) const;
  // The graph a traversal layout reads (ProcessGrid::top_down / bottom_up).
  [[nodiscard]] const LocalCsr<V>& for_layout(const TraversalLayout& layout) const {
    return layout.transposed_graph ? transposed_ : forward_;
  }
  // This rank's piece in degree order; the column group's and (1D) the row group's tables
  // from sorted local index to original local index (the row group's is empty in 2D).
  // The column group's is by col_original_rank(): the forward lists' positions when they
  // are hypersparse (only the sources of this rank's lists are ever looked up), else by
  // index.
  [[nodiscard]] const DegreeOrder<V>& order() const { return order_; }
  [[nodiscard]] std::span<const V> col_group_original() const { return col_original_.span(); }
  [[nodiscard]] RowRank col_original_rank() const { return forward_.row_rank(); }
  [[nodiscard]] std::span<const V> row_group_original() const { return row_original_.span(); }
  // Per owned vertex: distinct neighbours (index: sorted offset in this rank's piece, as
  // the kernels read it), and input tuples other than self-loops that touch it
  // (Graph500's count for TEPS; index: original offset, as parents are written).
  [[nodiscard]] std::span<const std::uint64_t> owned_degree() const { return owned_degree_.span(); }
  [[nodiscard]] std::span<const std::uint64_t> owned_tuple_degree() const { return owned_tuple_degree_.span(); }
  // Bytes this rank's lists take (the forward CSR's and, in 2D, its transpose's).
  [[nodiscard]] std::uint64_t list_bytes() const { return forward_.list_bytes() + transposed_.list_bytes(); }
  // Over all ranks: directed edges of the deduplicated graph (each undirected edge twice).
  [[nodiscard]] std::uint64_t global_directed_edges() const { return global_directed_edges_; }

 private:
  DegreeOrder<V> order_;
  LargeArray<V> col_original_;
  LargeArray<V> row_original_;
  LocalCsr<V> forward_;
  LocalCsr<V> transposed_;
  LargeArray<std::uint64_t> owned_degree_;
  LargeArray<std::uint64_t> owned_tuple_degree_;
  std::uint64_t global_directed_edges_ = 0;
  SparseRows sparse_rows_ = SparseRows::kNever;

  // The index of the `rows` rows that `ids` holds, where keeping a row's offset by
  // position pays under sparse_rows_; none where it does not.
  [[nodiscard]] std::optional<RowIndex> rows_worth_keeping(std::span<const V> ids, std::uint64_t rows) const;
};

extern template class DistributedGraph<std::uint32_t>;
extern template class DistributedGraph<std::uint64_t>;

// The hubs of a bottom-up layout's rows (graph/hub_neighbors.hpp), by position
// (LocalCsr::row_rank): each target row's
// neighbour of highest degree class, the classes of the source group gathered along the
// layout's expand communicator (collective over it, one byte per vertex, for this call
// only). `excluded(offset)` gives an owned vertex weight 0 (a peeled one, never in a
// pruned search's frontier).
template <class V, class Excluded>
LargeArray<V> bottom_up_hubs(const DistributedGraph<V>& graph, const TraversalLayout& layout, Excluded excluded) {
  const std::span<const std::uint64_t> degree = graph.owned_degree();
  std::vector<std::uint8_t> mine(degree.size(), 0);
  for (std::size_t v = 0; v < degree.size(); ++v) mine[v] = excluded(v) ? 0 : degree_class(degree[v]);
  std::vector<std::uint8_t> classes(static_cast<std::size_t>(layout.source.local_size()));
  layout.expand->allgather(std::span<const std::uint8_t>(mine), std::span<std::uint8_t>(classes));
  // By position: a hypersparse CSR's rows with a list only.
  const LocalCsr<V>& csr = graph.for_layout(layout);
  return csr.with_positions([&](const auto& lists) {
    return hub_neighbors<V>(
        lists, csr.positions(), [&](V w) { return std::uint64_t{classes[w]}; }, V{0});
  });
}

// The group's has-an-edge bits, gathered over `comm` (collective; its members hold the
// group's pieces in member order): bit v of member m's piece when that owned vertex has
// an edge and `excluded(v)` (owned offset) is false. `has_edges` has the group's words.
template <class V, class Excluded>
void gather_has_edges(const DistributedGraph<V>& graph, const Communicator& comm, std::uint64_t words_per_block,
                      Excluded excluded, std::span<std::uint64_t> has_edges) {
  const std::span<const std::uint64_t> degree = graph.owned_degree();
  std::vector<std::uint64_t> mine(static_cast<std::size_t>(words_per_block), 0);
  for (std::size_t v = 0; v < degree.size(); ++v) {
    if (degree[v] > 0 && !excluded(v)) mine[v / 64] |= std::uint64_t{1} << (v % 64);
  }
  comm.allgather(std::span<const std::uint64_t>(mine), has_edges);
}

}  // namespace zbfs
