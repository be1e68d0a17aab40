#include "zbfs/bfs/step_protocol.hpp"

#include <omp.h>

#include <algorithm>
#include <memory>

#include "zbfs/codec/sorted_set.hpp"
#include "zbfs/core/error.hpp"

namespace zbfs {

StepProtocol::StepProtocol(const ProcessGrid& grid, Exchanger& exchanger, PhaseMetrics& metrics, LocalSteps& local)
    : grid_(grid), exchanger_(exchanger), metrics_(metrics), local_(local) {
  const TraversalLayout bottom_up = grid.bottom_up();
  if (bottom_up.expand->size() > 1) {
    source_frontier_.assign(bottom_up.source.words(), 0);
    source_open_.assign(bottom_up.source.words(), 0);
  }
  if (bottom_up.fold->size() > 1) {
    ring_held_.assign(grid.blocks().words_per_block(), 0);
    ring_arriving_.assign(grid.blocks().words_per_block(), 0);
  }
  // No begin_search() here: `local` is still being built (the protocol is its member),
  // and every search begins with one.
}

void StepProtocol::begin_search() {
  const ExchangeTraits traits = exchanger_.traits();
  const bool parents = local_.carries_parents();
  mode_.update_fold = parents && traits.relays_updates && grid_.partition() == Partition::k1D;
  mode_.pipelined = parents && traits.pipelines_updates;
  mode_.report_once = !(mode_.update_fold || mode_.pipelined) || traits.merges_updates;
  // In 1D only top-down steps fold (bottom-up folds along one rank): with parents carried
  // by every fold, nothing is left to reduce.
  mode_.reduce_after =
      grid_.row().size() > 1 && !mode_.update_fold && !(mode_.pipelined && grid_.partition() == Partition::k1D);
  source_open_current_ = false;
}

void StepProtocol::run(DirectionPolicy& policy, LevelCounts level, BfsStats& stats) {
  // Each step's counters, from a snapshot before it to its end.
  const auto counted = [&](auto step) {
    metrics_.begin_level();
    const PhaseMetrics before = metrics_;
    const LevelCounts counts = step();
    stats.level_work.push_back(level_work_between(before, metrics_));
    return counts;
  };
  run_levels(
      policy, level, stats, [&] { return counted([&] { return top_down(); }); },
      [&] { return counted([&] { return bottom_up(); }); });
  reduce_predecessors();
}

LevelCounts StepProtocol::top_down() {
  const TraversalLayout layout = grid_.top_down();
  std::vector<std::uint64_t> sources;
  {
    const ScopedPhase phase(metrics_, Phase::kColumnExchange);
    sources = exchanger_.gather_ids(*layout.expand, local_.frontier_ids());
  }
  if (mode_.pipelined) return top_down_pipelined(layout, sources);
  OutgoingIds outgoing;
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    outgoing = local_.expand(layout, sources, mode_);
  }
  return fold(layout, outgoing, true);
}

LevelCounts StepProtocol::top_down_pipelined(const TraversalLayout& layout, std::span<const std::uint64_t> sources) {
  const Communicator& fold_comm = *layout.fold;
  std::unique_ptr<UpdateStream> stream;
  {
    const ScopedPhase phase(metrics_, Phase::kRowExchange);
    // Keys are offsets in the owner's block, values global ids: at scale 32 and below an
    // update is one word.
    stream = exchanger_.open_updates(fold_comm, grid_.blocks().block(), grid_.blocks().num_vertices());
  }
  const auto members = static_cast<std::size_t>(fold_comm.size());
  const std::size_t batch_items = stream->batch_items();
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    local_.begin_pipelined(fold_comm.size());
  }
  const auto claim = [&] {
    if (arrived_.empty()) return;
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    local_.claim_updates(arrived_, 0);
  };
  for (std::size_t begin = 0; begin < sources.size();) {
    {
      const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
      begin = local_.expand_chunk(layout, sources, begin, batch_items, mode_);
    }
    {
      // Each destination's full batch leaves while the expansion goes on.
      const ScopedPhase phase(metrics_, Phase::kRowExchange);
      for (std::size_t d = 0; d < members; ++d) {
        if (local_.waiting(d) < batch_items) continue;
        batch_.clear();
        local_.drain(d, batch_);
        stream->push(static_cast<int>(d), batch_);
      }
      arrived_.clear();
      stream->poll(arrived_);
    }
    claim();
  }
  {
    const ScopedPhase phase(metrics_, Phase::kRowExchange);
    std::vector<std::uint64_t> counts(members, 0);
    batch_.clear();
    for (std::size_t d = 0; d < members; ++d) counts[d] = local_.drain(d, batch_);
    arrived_.clear();
    stream->finish(batch_, counts, arrived_);
  }
  claim();
  return finish_level(true);
}

LevelCounts StepProtocol::fold(const TraversalLayout& layout, const OutgoingIds& outgoing, bool with_edges) {
  // 1D bottom-up folds along a communicator of one rank, and sends ids.
  if (mode_.update_fold && layout.fold == &grid_.row()) {
    // The top-down step queued (vertex, parent) word pairs.
    std::vector<KeyedItem> items(outgoing.ids.size() / 2);
    std::vector<std::uint64_t> counts(outgoing.counts.size());
    for (std::size_t d = 0; d < counts.size(); ++d) counts[d] = outgoing.counts[d] / 2;
    for (std::size_t i = 0; i < items.size(); ++i) items[i] = {outgoing.ids[2 * i], outgoing.ids[2 * i + 1]};
    std::vector<KeyedItem> arrived;
    {
      const ScopedPhase phase(metrics_, Phase::kRowExchange);
      arrived = exchanger_.update(*layout.fold, items, counts);
    }
    if (!arrived.empty()) {
      const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
      local_.claim_updates(arrived, grid_.my_first_vertex());
    }
    return finish_level(with_edges);
  }
  IncomingIds incoming;
  {
    const ScopedPhase phase(metrics_, Phase::kRowExchange);
    incoming = exchanger_.all_to_all(*layout.fold, outgoing, IdsAre::kSet);
  }
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    local_.claim(incoming, mode_);
  }
  return finish_level(with_edges);
}

std::span<const std::uint64_t> StepProtocol::gather_source_frontier(const TraversalLayout& layout) {
  // Gathering along a communicator of one rank would only copy this rank's own bitmap.
  if (layout.expand->size() == 1) return {};
  const ScopedPhase phase(metrics_, Phase::kColumnExchange);
  if (!source_open_current_) {
    const std::span<const std::uint64_t> open = local_.open_positions();
    std::copy(open.begin(), open.end(), source_open_.begin());
    source_open_current_ = true;
  }
  exchanger_.gather_bitmap(*layout.expand, local_.frontier_words(), source_frontier_, source_open_);
  // A vertex is in one frontier only: later gathers leave these positions out.
  std::uint64_t* open = source_open_.data();
  const std::uint64_t* gathered = source_frontier_.data();
  const auto words = static_cast<std::int64_t>(source_open_.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t w = 0; w < words; ++w) open[w] &= ~gathered[w];
  metrics_.add_work(WorkKind::kBitmapWords, source_open_.size());
  return source_frontier_;
}

LevelCounts StepProtocol::bottom_up() {
  const TraversalLayout layout = grid_.bottom_up();
  const std::span<const std::uint64_t> frontier = gather_source_frontier(layout);
  // The fold group's pieces go around its ring: each member searches its own piece
  // first, then, for each predecessor in turn, that member's piece with the visited bits
  // the members before it left, and passes them on. A vertex found once is skipped by
  // the members after, so no member scans the rows another has settled (the RIKEN/Fugaku
  // code's bottom-up does the same).
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    local_.search_own(layout, frontier);
  }
  const Communicator& fold_comm = *layout.fold;
  const int members = fold_comm.size();
  OutgoingBuilder builder(members, omp_get_max_threads());
  if (members > 1) {
    std::span<std::uint64_t> held(ring_held_);
    std::span<std::uint64_t> arriving(ring_arriving_);
    {
      const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
      local_.copy_visited(held);
    }
    for (int k = 1; k < members; ++k) {
      {
        const ScopedPhase phase(metrics_, Phase::kRowExchange);
        exchanger_.shift_bitmap(fold_comm, held, arriving);
      }
      std::swap(held, arriving);
      const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
      local_.search_piece(layout, frontier, (fold_comm.rank() + members - k) % members, held, builder);
    }
  }
  return fold(layout, builder.finish(), false);
}

LevelCounts StepProtocol::finish_level(bool with_edges) {
  LevelCounts level;
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    level = local_.count_level(with_edges);
  }
  std::uint64_t counts[2] = {level.frontier, level.frontier_edges};
  const ScopedPhase phase(metrics_, Phase::kTerminationCheck);
  grid_.world().allreduce(std::span<std::uint64_t>(counts), ReduceOp::kSum);
  return {counts[0], counts[1]};
}

void StepProtocol::reduce_predecessors() {
  const ScopedPhase phase(metrics_, Phase::kPredecessorReduction);
  // Alone in its row a rank discovered every vertex it owns itself (the same on all
  // ranks), and update folds brought the parents along.
  if (!mode_.reduce_after) return;
  // Ask each reporting member for the parent it used, in vertex order. Each member's
  // claims are distinct ids of this rank's piece, dense enough that sort_set's bitmap
  // pass beats a comparison sort.
  OutgoingIds requests = local_.foreign_claims();
  std::vector<std::uint64_t> sorted;
  for (std::size_t s = 0, first = 0; s < requests.counts.size(); first += requests.counts[s], ++s) {
    const std::span<std::uint64_t> claimed(requests.ids.data() + first, requests.counts[s]);
    sort_set(claimed, sorted);
    std::copy(sorted.begin(), sorted.end(), claimed.begin());
  }
  const std::vector<std::uint64_t> parents =
      exchanger_.read_batch(grid_.row(), requests.ids, requests.counts, 1,
                            [&](std::span<const std::uint64_t> wanted, std::span<std::uint64_t> out) {
                              local_.reported_parents(wanted, out);
                            });
  if (parents.size() != requests.ids.size()) throw Error(ExitCode::kFailure, "predecessor reduction: answers lost");
  local_.set_parents(requests.ids, parents);
}

}  // namespace zbfs
