// StepProtocol: the distributed direction-optimizing BFS's steps, written once for every
// backend. It owns what travels between ranks and in which order; a LocalSteps (the CPU
// search's bitmaps, or the device's piece through the host launcher) does what happens
// on one rank's piece between the exchanges.
//
// - Top-down: the expand group's frontier is gathered as ids (column exchange), the
//   local steps expand it (owned targets claimed at once, the others reported), and the
//   reports fold to their owners (row exchange), who claim them.
// - Bottom-up: the source group's frontier is gathered as a masked bitmap (only
//   positions that can still change: a vertex with edges in no frontier gathered yet in
//   this search). The local steps search this rank's own piece, then around the fold
//   group's ring each predecessor's piece with the visited bits the members before left
//   (Exchanger::shift_bitmap), so that a vertex found once is not searched again; what
//   they find for other members folds to its owners.
// - A level ends with the new frontier's counts summed over all ranks (the direction
//   policy's input); after the search, the predecessor reduction asks each reporter for
//   the parent it used (the exchanger's read, so that a route relays and merges it).
//
// How folds travel follows the exchanger's traits (FoldMode): ids, (vertex, parent)
// updates along a route in 1D, or a pipelined stream of updates (--overlap on) whose
// batches leave while the expansion goes on. Local steps that cannot carry parents (the
// device's) always fold ids.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/bfs/bfs_stats.hpp"
#include "zbfs/bfs/direction_policy.hpp"
#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/topology/process_grid.hpp"
#include "zbfs/wire/exchanger.hpp"
#include "zbfs/wire/id_messages.hpp"

namespace zbfs {

// How a search's folds travel, from the exchanger's traits at the search's start.
struct FoldMode {
  // 1D top-down folds send (vertex, parent) updates (the exchanger relays them).
  bool update_fold = false;
  // Top-down folds are pipelined (the exchanger's update stream) and carry (vertex,
  // parent) updates in 1D and 2D alike.
  bool pipelined = false;
  // A source reports each vertex once per search (false when the exchanger does not
  // merge: once per frontier edge that reaches it, as the Graph500 reference does).
  bool report_once = true;
  // A predecessor reduction follows the search: claims from another member's report
  // are remembered (LocalSteps::foreign_claims).
  bool reduce_after = false;
};

// One rank's part of the steps. Ids are global (sorted) vertex ids unless said local.
class LocalSteps {
 public:
  virtual ~LocalSteps() = default;
  // Whether top-down steps can send (vertex, parent) updates (update and pipelined folds).
  [[nodiscard]] virtual bool carries_parents() const = 0;

  // Top-down: this rank's frontier as ids, ascending.
  virtual std::vector<std::uint64_t> frontier_ids() = 0;
  // Expands `sources` (the expand group's frontier): owned targets are claimed, the
  // others reported to their owners (ids, or (vertex, parent) word pairs when
  // mode.update_fold), once per search each when mode.report_once.
  virtual OutgoingIds expand(const TraversalLayout& layout, std::span<const std::uint64_t> sources,
                             const FoldMode& mode) = 0;
  // Owners claim the ids that arrived from each member (their parents are asked for by
  // the predecessor reduction).
  virtual void claim(const IncomingIds& incoming, const FoldMode& mode) = 0;
  // Owners claim (vertex, parent) updates; a key less `key_base` is the vertex's offset in
  // this rank's block.
  virtual void claim_updates(std::span<const KeyedItem> arrived, std::uint64_t key_base) = 0;

  // Pipelined top-down (carries_parents() only): starts a step for `members` destinations;
  // expands sources from `begin` on, a chunk sized for batches of `batch_items`, into
  // per-destination buckets, and returns where the chunk ended; how many updates wait
  // for member d; moves them to the end of `batch` and returns how many.
  virtual void begin_pipelined(int members) = 0;
  virtual std::size_t expand_chunk(const TraversalLayout& layout, std::span<const std::uint64_t> sources,
                                   std::size_t begin, std::size_t batch_items, const FoldMode& mode) = 0;
  [[nodiscard]] virtual std::size_t waiting(std::size_t member) const = 0;
  virtual std::size_t drain(std::size_t member, std::vector<KeyedItem>& batch) = 0;

  // Bottom-up: this rank's frontier bits (one block's words), and the source group's
  // positions a gather starts the search masked to.
  virtual std::span<const std::uint64_t> frontier_words() = 0;
  virtual std::span<const std::uint64_t> open_positions() = 0;
  // Searches this rank's own piece against the source group's frontier (empty: this
  // rank's own frontier is all of it); found vertices are claimed at once.
  virtual void search_own(const TraversalLayout& layout, std::span<const std::uint64_t> frontier) = 0;
  // This rank's visited bits (one block's words), where the ring starts.
  virtual void copy_visited(std::span<std::uint64_t> held) = 0;
  // Searches member `member`'s piece, whose visited bits so far are `piece_visited`: the
  // vertices found are added to it and queued for `member` in `builder`.
  virtual void search_piece(const TraversalLayout& layout, std::span<const std::uint64_t> frontier, int member,
                            std::span<std::uint64_t> piece_visited, OutgoingBuilder& builder) = 0;

  // The level's end: the next frontier becomes the frontier; its vertices and (when
  // asked) their edges, on this rank.
  virtual LevelCounts count_level(bool with_edges) = 0;

  // Predecessor reduction: the vertices claimed from another member's report, by that
  // member (any order within one); the parents this rank reported row-group vertices
  // with; and the answers written as the vertices' parents.
  virtual OutgoingIds foreign_claims() = 0;
  virtual void reported_parents(std::span<const std::uint64_t> vertices, std::span<std::uint64_t> parents) = 0;
  virtual void set_parents(std::span<const std::uint64_t> vertices, std::span<const std::uint64_t> parents) = 0;
};

class StepProtocol {
 public:
  // `local` must outlive this object.
  StepProtocol(const ProcessGrid& grid, Exchanger& exchanger, PhaseMetrics& metrics, LocalSteps& local);

  // At a search's start: the fold mode from the exchanger's traits (a codec trial may have
  // changed its paths since the last search); the bottom-up mask starts afresh.
  void begin_search();
  [[nodiscard]] const FoldMode& mode() const { return mode_; }

  // The levels from the start's counts, then the predecessor reduction. Collective.
  void run(DirectionPolicy& policy, LevelCounts level, BfsStats& stats);

  LevelCounts top_down();
  LevelCounts bottom_up();
  // Sums a level's counts over all ranks (after the local steps' count_level).
  LevelCounts finish_level(bool with_edges);
  void reduce_predecessors();

 private:
  LevelCounts top_down_pipelined(const TraversalLayout& layout, std::span<const std::uint64_t> sources);
  LevelCounts fold(const TraversalLayout& layout, const OutgoingIds& outgoing, bool with_edges);
  // The source group's frontier, gathered masked; empty when the expand group is this
  // rank alone.
  std::span<const std::uint64_t> gather_source_frontier(const TraversalLayout& layout);

  const ProcessGrid& grid_;
  Exchanger& exchanger_;
  PhaseMetrics& metrics_;
  LocalSteps& local_;
  FoldMode mode_;
  // Bottom-up, when gathered: the source group's frontier and the positions that can
  // still change in this search.
  std::vector<std::uint64_t> source_frontier_;
  std::vector<std::uint64_t> source_open_;
  bool source_open_current_ = false;
  // The ring's piece on its way around the fold group, and the next one arriving.
  std::vector<std::uint64_t> ring_held_;
  std::vector<std::uint64_t> ring_arriving_;
  // Pipelined top-down steps' batch and arrivals, kept from level to level so that their
  // pages are not mapped afresh each time.
  std::vector<KeyedItem> batch_;
  std::vector<KeyedItem> arrived_;
};

}  // namespace zbfs
