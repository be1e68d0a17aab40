// DistributedBfs<V>: kernel 2 over MPI, direction-optimizing, for 1D and 2D layouts.
// run() is collective over the grid's world communicator.
//
// Top-down step: gather the frontier of the column group as a sorted id list (column
// exchange), expand it through the local forward graph, claim owned targets directly and
// send the others' ids, each at most once per search, to their owners (row exchange).
// Bottom-up step: gather the source group's frontier as a bitmap, masked (Exchanger::
// gather_bitmap: only positions that can still change are sent; a vertex without edges
// is never discovered and a vertex in one gathered frontier is in no later one, which at
// scale 20 halves the bits). Then search the target group piece by piece around the
// fold group's ring: each rank searches its own piece, then each predecessor's with the
// visited bits the ranks before it left (Exchanger::shift_bitmap), so a vertex found once
// is not searched again. Each unvisited row tests its hub (its neighbour of highest
// degree) before its list, and rows without edges here are skipped. The ids of vertices
// found for other ranks go to their owners. Only ids travel during the search: a sender
// remembers the parent it used, and
// the predecessor reduction after the search fetches it for every vertex whose
// discovery came from another rank. The direction switch is Beamer's heuristic on global
// counts, exactly as the single-process kernel applies it.
//
// When the exchanger pipelines update folds (ExchangeTraits::pipelines_updates:
// --overlap on), a top-down step expands its sources in chunks and, between chunks,
// hands each destination's full batch of (vertex, parent) updates to the exchanger's
// stream and claims what has arrived: the fold's transfers run under the expansion, and
// in 1D no predecessor reduction follows (in 2D it remains for bottom-up discoveries).
//
// When the exchanger relays updates (ExchangeTraits::relays_updates: --route), 1D
// top-down folds send (vertex, parent) updates instead, merged on the way (one per
// vertex: the smallest parent), and owners take the parent as it comes: no predecessor
// reduction. When it does not merge (--no-dedup) the source does not filter either:
// every frontier edge to another rank's vertex sends its update. In 2D the folds stay
// id exchanges and the predecessor reduction is the exchanger's read over the processor
// row, whichever way that travels.
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
#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/exchange/exchanger.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/topology/process_grid.hpp"

namespace zbfs {

template <class V>
class DistributedBfs {
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

  // A peeled root's way to the core: the vertices from the root (first) to the last
  // peeled one, in sorted and in input ids.
  struct ChainLink {
    std::uint64_t id = 0;
    std::uint64_t original = 0;
  };
  // Where a search starts: the root, or for a pruned search from a peeled root the core
  // vertex its chain ends at. Collective.
  struct SearchStart {
    bool pruned = false;
    // Sorted global id; on ranks that do not own the start, any id of the start's piece
    // (ownership is all they ask).
    std::uint64_t id = 0;
    std::uint64_t original = 0;  // input global id
    std::vector<ChainLink> chain;
    // The start's degree when the chain walk's collective brought it to every rank.
    std::optional<std::uint64_t> degree;
  };
  SearchStart find_start(std::uint64_t root);
  // Hangs this rank's peeled vertices whose anchors were reached onto the tree, sets the
  // chain's parents, and records the attach step and the search's depth.
  void attach_trees(std::span<std::int64_t> parent, std::uint64_t root, const SearchStart& start, BfsStats& stats);

  LevelCounts top_down_step(std::span<std::int64_t> parent);
  // The top-down step when the exchanger pipelines update folds: the sources are
  // expanded in chunks; after each, the destinations' full batches of (vertex, parent)
  // updates leave and the updates that have arrived are claimed.
  LevelCounts top_down_pipelined(const TraversalLayout& layout, std::span<const std::uint64_t> sources,
                                 std::span<std::int64_t> parent);
  // Owners claim updates that arrived, with the parent they carry; a key less
  // `key_base` is the vertex's offset in this rank's block.
  void claim_updates(std::span<const KeyedItem> arrived, std::uint64_t key_base, std::span<std::int64_t> parent);
  LevelCounts bottom_up_step(std::span<std::int64_t> parent);
  // Sends discovered ids to their owners along `fold_comm`, lets the owners claim them,
  // and finishes the level.
  LevelCounts fold(const TraversalLayout& layout, const OutgoingIds& outgoing, std::span<std::int64_t> parent,
                   bool with_edges);
  // The update fold: (vertex, parent) pairs to the owners, who claim them with that parent.
  void fold_updates(const TraversalLayout& layout, const OutgoingIds& outgoing, std::span<std::int64_t> parent);
  // Owners claim the ids that arrived. Until the predecessor reduction, the parent of a
  // vertex claimed so holds -2 - s, s being the row rank whose report won.
  void claim_incoming(const IncomingIds& incoming, std::span<std::int64_t> parent);
  // Swaps in the new frontier and counts it over all ranks; its edges only when asked
  // (the direction switch needs them after top-down steps only).
  LevelCounts finish_level(bool with_edges);
  void reduce_predecessors(std::span<std::int64_t> parent);
  // Bottom-up: the source group's frontier, gathered (masked) when the group has other
  // members; this rank's own frontier otherwise.
  const std::uint64_t* gather_source_frontier(const TraversalLayout& layout);
  // Bottom-up over this rank's own piece: parents, next and visited are set in place.
  void scan_owned_piece(const TraversalLayout& layout, const std::uint64_t* frontier, std::span<std::int64_t> parent);
  // Bottom-up over fold member `member`'s piece, whose visited bits (as the members
  // before left them) are `piece_visited`; the vertices found are added to it, noted in
  // sent_ and queued for `member`.
  void scan_other_piece(const TraversalLayout& layout, const std::uint64_t* frontier, int member,
                        std::span<std::uint64_t> piece_visited, OutgoingBuilder& builder);
  // Gathers every member's has-an-edge bits (only core ones when `core_only`) into
  // `has_edges` (collective over `comm`).
  void gather_has_edges(const Communicator& comm, Bitmap& has_edges, bool core_only) const;
  // The bottom-up graph's hubs and rows with edges (collective over the expand group).
  void build_hubs(const TraversalLayout& layout);

  const ProcessGrid& grid_;
  const DistributedGraph<V>& graph_;
  const DistributedForest<V>* forest_;
  Exchanger& exchanger_;
  PhaseMetrics& metrics_;
  std::uint64_t block_;
  std::uint64_t first_vertex_;
  // The graph's degree order (graph/degree_order.hpp): everything here is in sorted ids;
  // parents are written at original offsets, with original ids, through these tables:
  const V* owned_original_;             // owned: sorted offset -> original offset
  const V* col_original_;               // column group: sorted local -> original local
  const V* bottom_up_source_original_;  // bottom-up source group (1D: all; 2D: the column group)
  // Reads the next four from the exchanger's traits (at construction and at each search).
  void adopt_traits();
  // 1D top-down folds send (vertex, parent) updates (the exchanger relays them).
  bool update_fold_ = false;
  // Top-down folds are pipelined (--overlap on: the exchanger's update stream), and
  // carry (vertex, parent) updates in 1D and 2D alike.
  bool pipelined_ = false;
  // Whether a source reports each vertex once per search (false when the exchanger does
  // not merge: once per frontier edge that reaches it, as the Graph500 reference does).
  bool report_once_ = true;
  // Whether a predecessor reduction follows each search, and the vertices it asks for:
  // those claimed from another row member's report, by member.
  bool reduce_after_ = false;
  OutgoingBuilder claims_;

  Bitmap visited_;             // owned vertices reached so far
  Bitmap frontier_;            // owned vertices of the current level
  Bitmap next_;                // owned vertices of the next level
  Bitmap sent_;                // row-group vertices this rank has reported to their owner
  LargeArray<V> sent_parent_;  // the column-group-local parent it reported them with
  // Bottom-up, when gathered (the communicator has more than one member):
  Bitmap source_frontier_;            // frontier of the source group
  Bitmap source_has_edges_;           // its vertices with at least one edge (fixed)
  Bitmap source_core_;                // those not peeled (with a forest)
  Bitmap source_open_;                // those in no frontier gathered in this search: the mask
  bool source_open_current_ = false;  // source_open_ was set up in this search
  Bitmap ring_held_;                  // bottom-up: the piece this rank searches, on its way around the fold ring
  Bitmap ring_arriving_;              // and the next one, arriving from the predecessor
  // Bottom-up shortcut (graph/hub_neighbors.hpp): each target row's neighbour of highest
  // degree class (the bit width of its global degree), tested before the row's list, and
  // the rows that have edges here at all (the others can find no parent on this rank).
  LargeArray<V> hub_;
  Bitmap target_rows_with_edges_;
  // The current search: whether it is pruned, the level of its current frontier, and
  // this rank's deepest level with the trees hanging below (pruned searches).
  bool pruned_search_ = false;
  std::uint64_t level_ = 0;
  std::uint64_t deepest_ = 0;
  std::vector<std::uint64_t> anchors_reached_;  // pruned: the gathered anchors' visited bits
  // Pipelined top-down steps' buffers, kept from level to level and search to search so
  // that their pages are not mapped afresh each time (a level's last batch and its
  // arrivals run to megabytes): each thread's bucket per member, a batch, the arrivals.
  struct PipelineScratch {
    std::vector<std::vector<KeyedItem>> buckets;
    std::vector<KeyedItem> batch;
    std::vector<KeyedItem> arrived;
  };
  PipelineScratch pipeline_;
  // run(root, options)'s parents, and whether its last search's tree is still in them
  // (`dirty_`); `clear_all_` when a run into a caller's array has used visited_ since.
  LargeArray<std::int64_t> parent_;
  bool dirty_ = false;
  bool clear_all_ = false;
};

extern template class DistributedBfs<std::uint32_t>;
extern template class DistributedBfs<std::uint64_t>;

}  // namespace zbfs
