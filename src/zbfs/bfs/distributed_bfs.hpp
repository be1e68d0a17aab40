// DistributedBfs<V>: kernel 2 over MPI on the CPU, direction-optimizing, for 1D and 2D
// layouts. run() is collective over the grid's world communicator. The steps' exchanges
// are StepProtocol's (step_protocol.hpp); this class is the CPU's LocalSteps: the
// frontier, visited, next and sent bitmaps of this rank's piece, expanded and searched
// with OpenMP.
//
// Top-down, owned targets are claimed directly and the others reported once per search
// (the parent used is remembered for the predecessor reduction), or sent as (vertex,
// parent) updates when the protocol's folds carry parents (a route in 1D, --overlap on).
// Bottom-up, each unvisited row tests its hub (its neighbour of highest degree) before
// its list, and rows without edges here are skipped.
//
// Given a DistributedForest (--prune), a search runs on the 2-core: peeled vertices start
// visited and are never reported, a peeled root's chain is walked to the core first
// (one allreduce per hop), and after the core search every rank attaches its own peeled
// vertices whose anchors were reached (one masked bitmap gather of the anchors' bits).
// The depth comes from the trees' heights of the vertices each level discovered.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "zbfs/bfs/bfs_options.hpp"
#include "zbfs/bfs/bfs_stats.hpp"
#include "zbfs/bfs/direction_policy.hpp"
#include "zbfs/bfs/distributed_forest.hpp"
#include "zbfs/bfs/distributed_pruned_search.hpp"
#include "zbfs/bfs/sorted_parents.hpp"
#include "zbfs/bfs/step_protocol.hpp"
#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/graph/row_index.hpp"
#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/topology/process_grid.hpp"
#include "zbfs/wire/exchanger.hpp"

namespace zbfs {

template <class V>
class DistributedBfs final : private LocalSteps {
 public:
  // `forest`: the graph's peeled trees (it must outlive this object), or nullptr to
  // search the whole graph.
  DistributedBfs(const ProcessGrid& grid, const DistributedGraph<V>& graph, Exchanger& exchanger, PhaseMetrics& metrics,
                 const DistributedForest<V>* forest = nullptr);

  // `parent` has one entry per vertex of this rank's piece (blocks().block() entries):
  // the parent's global id, the root for the root, -1 when unreached.
  BfsStats run(std::uint64_t root, std::span<std::int64_t> parent, const BfsOptions& options);
  // The same into the object's own parent array (parent()), which starts every search
  // with every entry -1, so that a search does not fill n / P entries first (at scale 22
  // on 4 ranks, a millisecond, where a search from a tiny component takes a tenth of
  // that). The caller clears the tree once done with it (clear_parent(), outside the
  // timed search); a search that finds the last tree still there clears it first.
  BfsStats run(std::uint64_t root, const BfsOptions& options);
  [[nodiscard]] std::span<const std::int64_t> parent() const { return {parent_.data(), parent_.size()}; }
  // Sets back to -1 what the last run(root, options) set: the entries of the vertices it
  // visited (every entry set is one), one by one when they are few, else by filling the
  // whole piece. Local.
  void clear_parent();

 private:
  // Refuses a key that is no vertex (the same answer on every rank).
  void check_root(std::uint64_t root) const;
  // A search into `parent`, whose entries are all -1.
  BfsStats search(std::uint64_t root, std::span<std::int64_t> parent, const BfsOptions& options);

  using LevelCounts = zbfs::LevelCounts;
  using SearchStart = typename DistributedPrunedSearch<V>::Start;

  // Moves the reached vertices' parents in `parent` from sorted to original offsets.
  void scatter_parents(std::span<std::int64_t> parent, BfsStats& stats);
  // Hangs this rank's peeled vertices whose anchors were reached onto the tree (their
  // parents straight into `parent`, in original order), sets the chain's parents, and
  // records the attach step and the search's depth (collective).
  void attach_trees(std::span<std::int64_t> parent, std::uint64_t root, const SearchStart& start, BfsStats& stats);

  // LocalSteps: this rank's part of the steps (bfs/step_protocol.hpp), over the bitmaps
  // below and the current search's parents at sorted offsets (sorted_parents_).
  [[nodiscard]] bool carries_parents() const override { return true; }
  std::vector<std::uint64_t> frontier_ids() override;
  OutgoingIds expand(const TraversalLayout& layout, std::span<const std::uint64_t> sources,
                     const FoldMode& mode) override;
  // Until the predecessor reduction, the parent of a vertex claimed from an id holds
  // -2 - s, s being the row rank whose report won.
  void claim(const IncomingIds& incoming, const FoldMode& mode) override;
  void claim_updates(std::span<const KeyedItem> arrived, std::uint64_t key_base) override;
  void begin_pipelined(int members) override;
  std::size_t expand_chunk(const TraversalLayout& layout, std::span<const std::uint64_t> sources, std::size_t begin,
                           std::size_t batch_items, const FoldMode& mode) override;
  [[nodiscard]] std::size_t waiting(std::size_t member) const override;
  std::size_t drain(std::size_t member, std::vector<KeyedItem>& batch) override;
  std::span<const std::uint64_t> frontier_words() override;
  std::span<const std::uint64_t> open_positions() override;
  void search_own(const TraversalLayout& layout, std::span<const std::uint64_t> frontier) override;
  void copy_visited(std::span<std::uint64_t> held) override;
  void search_piece(const TraversalLayout& layout, std::span<const std::uint64_t> frontier, int member,
                    std::span<std::uint64_t> piece_visited, OutgoingBuilder& builder) override;
  LevelCounts count_level(bool with_edges) override;
  OutgoingIds foreign_claims() override;
  void reported_parents(std::span<const std::uint64_t> vertices, std::span<std::uint64_t> parents) override;
  void set_parents(std::span<const std::uint64_t> vertices, std::span<const std::uint64_t> parents) override;

  // Gathers every member's has-an-edge bits (only core ones when `core_only`) into
  // `has_edges` (collective over `comm`).
  void gather_has_edges(const Communicator& comm, Bitmap& has_edges, bool core_only) const;
  // The bottom-up graph's hubs and rows with edges (collective over the expand group).
  void build_hubs(const TraversalLayout& layout);
  // Sizes the reported parents: by row-group vertex, or only for the vertices this rank's
  // top-down lists reach, by position (graph/row_index.hpp), where the graph keeps its
  // rows so (DistributedGraph::sparse_pays_here). Local.
  void keep_reported_parents(const TraversalLayout& top_down);

  const ProcessGrid& grid_;
  const DistributedGraph<V>& graph_;
  const DistributedForest<V>* forest_;
  Exchanger& exchanger_;
  PhaseMetrics& metrics_;
  std::uint64_t block_;
  std::uint64_t first_vertex_;
  // The graph's degree order (graph/degree_order.hpp): everything here is in sorted ids;
  // parents leave a search at original offsets, with original ids, through these tables:
  const V* owned_original_;    // owned: sorted offset -> original offset
  const V* col_original_;      // column group: sorted local -> original local
  RowRank col_original_rank_;  // its positions (by the forward lists' when hypersparse)
  RowRank bottom_up_source_rank_;
  const V* bottom_up_source_original_;  // bottom-up source group (1D: all; 2D: the column group)
  // The vertices claimed from another row member's report, by member (the predecessor
  // reduction asks for their parents).
  OutgoingBuilder claims_;

  Bitmap visited_;             // owned vertices reached so far
  Bitmap frontier_;            // owned vertices of the current level
  Bitmap next_;                // owned vertices of the next level
  Bitmap sent_;                // row-group vertices this rank has reported to their owner
  LargeArray<V> sent_parent_;  // the column-group-local parent it reported them with, at
                               // reported_'s position (the identity, or a RowIndex's)
  RowIndex reported_index_;
  RowRank reported_;
  // Bottom-up gathers' mask, when the source group has other members: its vertices with
  // at least one edge, and those not peeled (with a forest).
  Bitmap source_has_edges_;
  Bitmap source_core_;
  // Bottom-up shortcut (graph/hub_neighbors.hpp): each target row's neighbour of highest
  // degree class (the bit width of its global degree), tested before the row's list, its
  // original id (in the source group), both by the rows' position (a hypersparse CSR's
  // rows with a list only), and the rows that have edges here at all (the others can find
  // no parent on this rank).
  LargeArray<V> hub_;
  LargeArray<V> hub_original_;
  Bitmap target_rows_with_edges_;
  // Top-down: the source rows with a list here. In 2D a rank's block of a column group's
  // lists gets hypersparse as P grows (R = sqrt(P) times more sources a rank than owned
  // vertices, for the same edges), and a bit read in this bitmap, 64 times smaller than
  // the lists' offsets, skips a list that is empty here.
  Bitmap source_rows_with_edges_;
  // The current search: whether it is pruned; and what every pruned search does around
  // its core search (the chain walk, the depth, the attach step's collectives).
  bool pruned_search_ = false;
  DistributedPrunedSearch<V> pruning_;
  // Pipelined top-down steps' buckets (thread t's updates for member d at t * members +
  // d), kept from level to level and search to search so that their pages are not mapped
  // afresh each time.
  std::vector<std::vector<KeyedItem>> buckets_;
  std::size_t bucket_members_ = 0;
  // The steps' protocol.
  StepProtocol protocol_;
  // The current search's parents at sorted offsets (bfs/sorted_parents.hpp): the steps
  // and the attach step write them there; scatter_parents moves them to the caller's.
  SortedParents<V> sorted_parents_;
  // run(root, options)'s parents, and whether its last search's tree is still in them
  // (`dirty_`); `clear_all_` when a run into a caller's array has used visited_ since.
  LargeArray<std::int64_t> parent_;
  bool dirty_ = false;
  bool clear_all_ = false;
};

extern template class DistributedBfs<std::uint32_t>;
extern template class DistributedBfs<std::uint64_t>;

}  // namespace zbfs
