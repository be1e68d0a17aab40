// DistributedPrunedSearch<V>: what a distributed pruned search (--prune) does around its
// core search, for every backend's distributed BFS (the CPU's DistributedBfs, the
// device's DeviceDistributedBfs): the walk from a peeled root to the core (one allreduce
// per hop), the depth the levels reach with the trees hanging below them, and the attach
// step's collectives (one masked bitmap gather of the anchors' visited bits, unless the
// last search reached the start and so the same anchors; the counts over all ranks). The
// local attach, writing the reached peeled vertices' parents, is the backend's own: on
// its threads or on its device, with own_tree_depth() for the root's own tree.
// Collective calls say so; everything else is local.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "zbfs/bfs/bfs_stats.hpp"
#include "zbfs/bfs/distributed_forest.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/topology/process_grid.hpp"
#include "zbfs/wire/exchanger.hpp"

namespace zbfs {

template <class V>
class DistributedPrunedSearch {
 public:
  // A peeled root's way to the core: a vertex from the root (first) to the last peeled
  // one, in sorted and in input global ids.
  struct ChainLink {
    std::uint64_t id = 0;
    std::uint64_t original = 0;
  };
  // Where a search starts: the root, or for a pruned search from a peeled root the core
  // vertex its chain ends at.
  struct Start {
    bool pruned = false;
    // Sorted global id; on ranks that do not own the start, any id of the start's piece
    // (ownership is all they ask).
    std::uint64_t id = 0;
    std::uint64_t original = 0;  // input global id
    std::vector<ChainLink> chain;
    // The start's degree when the chain walk's collective brought it to every rank.
    std::optional<std::uint64_t> degree;
    // Pruned: the last search reached the start, so it searched the same component and
    // reached the same anchors (anchors_reached() skips the gather).
    bool anchors_known = false;
    // The parent the start's owner gives it: the root itself, or the chain's last vertex.
    [[nodiscard]] std::uint64_t start_parent() const { return chain.empty() ? original : chain.back().original; }
  };

  // `forest`: the graph's peeled trees, or nullptr (no search is pruned). All must outlive
  // this object.
  DistributedPrunedSearch(const ProcessGrid& grid, const DistributedGraph<V>& graph, const DistributedForest<V>* forest,
                          Exchanger& exchanger, PhaseMetrics& metrics);

  [[nodiscard]] const DistributedForest<V>* forest() const { return forest_; }

  // Collective: where a search from `root` (an input id) starts. `reached_last(offset)`:
  // whether the last search reached this owned vertex, asked only while the last
  // search's anchors are current (see forget_anchors()).
  Start find_start(std::uint64_t root, const std::function<bool(std::uint64_t)>& reached_last);
  // The visited bits the last search left are about to go: its anchors are no longer
  // known (a search clears them).
  void forget_anchors() { anchors_current_ = false; }

  // A pruned search's depth: its start's level and the trees below a core root; then,
  // for each level counted, its vertices here and the tallest tree below them.
  void begin_levels(const Start& start);
  void level_counted(std::uint64_t vertices, std::uint64_t tallest);

  // After the core search: the anchors' reached bits over the world (anchor_mask()'s
  // layout), gathered from this rank's owned visited words unless the start says they
  // are known (collective then). The last search's anchors are current afterwards.
  std::span<const std::uint64_t> anchors_reached(const Start& start, std::span<const std::uint64_t> visited);
  // The anchor position (anchor_mask()'s) of the root's own tree, where the root is
  // peeled (DistributedForest::kNone otherwise).
  [[nodiscard]] std::uint64_t own_tree_anchor(const Start& start) const;
  // The level below which a peeled vertex of the root's own tree (its owned offset)
  // reaches: a vertex hanging from the chain's i-th vertex (the start at i =
  // chain.size()) is at level i + 1, but for the one the chain came up by; 0 for one
  // that hangs from none of them.
  [[nodiscard]] std::uint64_t own_tree_depth(const Start& start, std::uint64_t offset) const;
  // The chain's parents on this rank: each owned chain vertex's owned offset and parent
  // (pointing back towards the root).
  [[nodiscard]] std::vector<std::pair<std::uint64_t, std::uint64_t>> chain_parents(const Start& start,
                                                                                   std::uint64_t root) const;
  // Collective: the attach step's totals into `stats` (its step, its time since `clock`
  // started, and the search's depth): `attached` and `deepest` are this rank's.
  void finish(const Start& start, std::uint64_t attached, std::uint64_t deepest, const Stopwatch& clock,
              BfsStats& stats);
  // This rank's deepest level so far (the attach step starts from it).
  [[nodiscard]] std::uint64_t deepest() const { return deepest_; }

 private:
  const ProcessGrid& grid_;
  const DistributedGraph<V>& graph_;
  const DistributedForest<V>* forest_;
  Exchanger& exchanger_;
  PhaseMetrics& metrics_;
  std::uint64_t first_vertex_;
  // The current search: the level of its frontier, and this rank's deepest level with the
  // trees hanging below.
  std::uint64_t level_ = 0;
  std::uint64_t deepest_ = 0;
  std::vector<std::uint64_t> anchors_reached_;  // the gathered anchors' visited bits
  // Whether anchors_reached_ holds the last search's, a pruned one whose visited bits
  // still stand: a search that starts at a core vertex it reached covers the same
  // component, reaches the same anchors, and skips the gather (a collective over all
  // ranks, most of the attach step at 4 ranks).
  bool anchors_current_ = false;
  std::uint64_t anchors_attached_ = 0;  // the vertices they hang, over all ranks
};

extern template class DistributedPrunedSearch<std::uint32_t>;
extern template class DistributedPrunedSearch<std::uint64_t>;

}  // namespace zbfs
