#include "zbfs/bfs/distributed_bfs.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <vector>

#include "zbfs/core/timer.hpp"

namespace zbfs {

template <class V>
DistributedBfs<V>::DistributedBfs(const ProcessGrid& grid, const DistributedGraph<V>& graph, Exchanger& exchanger,
                                  PhaseMetrics& metrics)
    : grid_(grid),
      graph_(graph),
      exchanger_(exchanger),
      metrics_(metrics),
      block_(grid.blocks().block()),
      first_vertex_(grid.my_first_vertex()),
      visited_(block_),
      frontier_(block_),
      next_(block_),
      winner_(block_),
      sent_(grid.row_group().local_size()),
      sent_parent_(grid.row_group().local_size()),
      source_frontier_(grid.bottom_up().source.local_size()),
      target_visited_(grid.bottom_up().target.local_size()) {}

template <class V>
BfsStats DistributedBfs<V>::run(std::uint64_t root, std::span<std::int64_t> parent, const BfsOptions& options) {
  BfsStats stats;
  Stopwatch clock;
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    visited_.clear();
    frontier_.clear();
    sent_.clear();
    const auto n = static_cast<std::int64_t>(block_);
    std::int32_t* winner = winner_.data();
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      parent[static_cast<std::size_t>(i)] = -1;
      winner[i] = -1;
    }
    if (grid_.owns(root)) {
      const std::uint64_t offset = root - first_vertex_;
      visited_.set(offset);
      frontier_.set(offset);
      parent[offset] = static_cast<std::int64_t>(root);
    }
  }
  stats.init_time_s = clock.elapsed_s();

  std::uint64_t root_degree = grid_.owns(root) ? graph_.owned_degree()[root - first_vertex_] : 0;
  {
    const ScopedPhase phase(metrics_, Phase::kTerminationCheck);
    root_degree = grid_.world().allreduce(root_degree, ReduceOp::kSum);
  }
  LevelCounts level{1, root_degree};
  std::uint64_t edges_to_check = graph_.global_directed_edges();
  std::uint64_t scout_count = level.frontier_edges;
  const auto wake_limit = static_cast<double>(grid_.blocks().num_vertices()) / options.beta;

  while (level.frontier > 0) {
    const bool go_bottom_up = options.direction == Direction::kBottomUp ||
                              (options.direction == Direction::kAuto &&
                               static_cast<double>(scout_count) > static_cast<double>(edges_to_check) / options.alpha);
    if (go_bottom_up) {
      std::uint64_t awake = level.frontier;
      std::uint64_t previous_awake = 0;
      do {
        previous_awake = awake;
        clock.restart();
        level = bottom_up_step(parent);
        awake = level.frontier;
        const double t = clock.elapsed_s();
        stats.steps.push_back({StepKind::kBottomUp, previous_awake, awake, t});
        stats.bottom_up_time_s += t;
      } while (awake > 0 && (options.direction == Direction::kBottomUp || awake >= previous_awake ||
                             static_cast<double>(awake) > wake_limit));
      scout_count = 1;
    } else {
      edges_to_check -= std::min(edges_to_check, scout_count);
      const std::uint64_t frontier = level.frontier;
      clock.restart();
      level = top_down_step(parent);
      scout_count = level.frontier_edges;
      const double t = clock.elapsed_s();
      stats.steps.push_back({StepKind::kTopDown, frontier, level.frontier, t});
      stats.top_down_time_s += t;
    }
  }
  reduce_predecessors(parent);
  return stats;
}

template <class V>
typename DistributedBfs<V>::LevelCounts DistributedBfs<V>::top_down_step(std::span<std::int64_t> parent) {
  const TraversalLayout layout = grid_.top_down();
  std::vector<std::uint64_t> sources;
  {
    const ScopedPhase phase(metrics_, Phase::kColumnExchange);
    std::vector<std::uint64_t> mine;
    for (std::size_t w = 0; w < frontier_.num_words(); ++w) {
      for (std::uint64_t bits = frontier_.word(w); bits != 0; bits &= bits - 1) {
        mine.push_back(first_vertex_ + w * 64 + static_cast<std::uint64_t>(std::countr_zero(bits)));
      }
    }
    sources = exchanger_.gather_ids(*layout.expand, mine);
  }

  OutgoingIds outgoing;
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    next_.clear();
    const LocalCsr<V>& graph = graph_.for_layout(layout);
    const int my_member = layout.fold->rank();
    const std::uint64_t block = block_;
    const int threads = omp_get_max_threads();
    OutgoingBuilder builder(layout.fold->size(), threads);
    const auto count = static_cast<std::int64_t>(sources.size());
    V* sent_parent = sent_parent_.data();
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
#pragma omp for schedule(dynamic, 64)
      for (std::int64_t i = 0; i < count; ++i) {
        const std::uint64_t u = sources[static_cast<std::size_t>(i)];
        const std::uint64_t source_local = layout.source.to_local(u);
        for (const V target_local : graph.neighbors(source_local)) {
          const auto member = static_cast<int>(target_local / block);
          if (member == my_member) {
            const std::uint64_t offset = target_local - static_cast<std::uint64_t>(member) * block;
            if (!visited_.test(offset) && visited_.set_atomic(offset)) {
              parent[offset] = static_cast<std::int64_t>(u);
              next_.set_atomic(offset);
            }
          } else if (!sent_.test(target_local) && sent_.set_atomic(target_local)) {
            sent_parent[target_local] = static_cast<V>(source_local);
            builder.bucket(t, member).push_back(layout.target.to_global(target_local));
          }
        }
      }
    }
    outgoing = builder.finish();
  }
  IncomingIds incoming;
  {
    const ScopedPhase phase(metrics_, Phase::kRowExchange);
    incoming = exchanger_.all_to_all(*layout.fold, outgoing);
  }
  claim_incoming(incoming);
  return finish_level();
}

template <class V>
typename DistributedBfs<V>::LevelCounts DistributedBfs<V>::bottom_up_step(std::span<std::int64_t> parent) {
  const TraversalLayout layout = grid_.bottom_up();
  const std::size_t words_per_block = static_cast<std::size_t>(grid_.blocks().words_per_block());
  {
    const ScopedPhase phase(metrics_, Phase::kColumnExchange);
    exchanger_.gather_bitmap(*layout.expand, std::span<const std::uint64_t>(&frontier_.word(0), words_per_block),
                             std::span<std::uint64_t>(&source_frontier_.word(0), source_frontier_.num_words()));
  }
  {
    const ScopedPhase phase(metrics_, Phase::kRowExchange);
    exchanger_.gather_bitmap(*layout.fold, std::span<const std::uint64_t>(&visited_.word(0), words_per_block),
                             std::span<std::uint64_t>(&target_visited_.word(0), target_visited_.num_words()));
  }

  OutgoingIds outgoing;
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    next_.clear();
    const LocalCsr<V>& graph = graph_.for_layout(layout);
    const auto my_member = static_cast<std::size_t>(layout.fold->rank());
    const int threads = omp_get_max_threads();
    OutgoingBuilder builder(layout.fold->size(), threads);
    V* sent_parent = sent_parent_.data();
    const auto words = static_cast<std::int64_t>(target_visited_.num_words());
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      // Each thread owns whole words of the target group, and the owned piece is
      // word-aligned inside it, so the plain bit writes below never share a word.
#pragma omp for schedule(dynamic, 256)
      for (std::int64_t w = 0; w < words; ++w) {
        const auto word = static_cast<std::size_t>(w);
        const std::size_t member = word / words_per_block;
        for (std::uint64_t unvisited = ~target_visited_.word(word); unvisited != 0; unvisited &= unvisited - 1) {
          const std::uint64_t target_local = word * 64 + static_cast<std::uint64_t>(std::countr_zero(unvisited));
          for (const V source_local : graph.neighbors(target_local)) {
            if (!source_frontier_.test(source_local)) continue;
            if (member == my_member) {
              const std::uint64_t offset = target_local - member * block_;
              visited_.set(offset);
              next_.set(offset);
              parent[offset] = static_cast<std::int64_t>(layout.source.to_global(source_local));
            } else {
              sent_.set(target_local);
              sent_parent[target_local] = source_local;
              builder.bucket(t, static_cast<int>(member)).push_back(layout.target.to_global(target_local));
            }
            break;
          }
        }
      }
    }
    outgoing = builder.finish();
  }
  IncomingIds incoming;
  {
    const ScopedPhase phase(metrics_, Phase::kRowExchange);
    incoming = exchanger_.all_to_all(*layout.fold, outgoing);
  }
  claim_incoming(incoming);
  return finish_level();
}

template <class V>
void DistributedBfs<V>::claim_incoming(const IncomingIds& incoming) {
  const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
  std::int32_t* winner = winner_.data();
  for (int s = 0; s < incoming.num_sources(); ++s) {
    const std::span<const std::uint64_t> ids = incoming.from(s);
    const auto count = static_cast<std::int64_t>(ids.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < count; ++i) {
      const std::uint64_t offset = ids[static_cast<std::size_t>(i)] - first_vertex_;
      if (!visited_.test(offset) && visited_.set_atomic(offset)) {
        winner[offset] = s;
        next_.set_atomic(offset);
      }
    }
  }
}

template <class V>
typename DistributedBfs<V>::LevelCounts DistributedBfs<V>::finish_level() {
  frontier_.swap(next_);
  std::uint64_t counts[2] = {0, 0};
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    const std::span<const std::uint64_t> degree = graph_.owned_degree();
    std::uint64_t vertices = 0;
    std::uint64_t edges = 0;
    const auto words = static_cast<std::int64_t>(frontier_.num_words());
#pragma omp parallel for schedule(static) reduction(+ : vertices, edges)
    for (std::int64_t w = 0; w < words; ++w) {
      const std::uint64_t bits_in_word = frontier_.word(static_cast<std::size_t>(w));
      vertices += static_cast<std::uint64_t>(std::popcount(bits_in_word));
      for (std::uint64_t bits = bits_in_word; bits != 0; bits &= bits - 1) {
        edges += degree[static_cast<std::size_t>(w) * 64 + static_cast<std::size_t>(std::countr_zero(bits))];
      }
    }
    counts[0] = vertices;
    counts[1] = edges;
  }
  const ScopedPhase phase(metrics_, Phase::kTerminationCheck);
  grid_.world().allreduce(std::span<std::uint64_t>(counts), ReduceOp::kSum);
  return {counts[0], counts[1]};
}

template <class V>
void DistributedBfs<V>::reduce_predecessors(std::span<std::int64_t> parent) {
  const ScopedPhase phase(metrics_, Phase::kPredecessorReduction);
  const Communicator& row = grid_.row();
  // Ask each reporting rank for the parent it used.
  OutgoingBuilder builder(row.size(), 1);
  for (std::uint64_t offset = 0; offset < block_; ++offset) {
    const std::int32_t s = winner_[offset];
    if (s >= 0) builder.bucket(0, s).push_back(first_vertex_ + offset);
  }
  const OutgoingIds requests = builder.finish();
  const IncomingIds asked = exchanger_.all_to_all(row, requests);

  OutgoingIds answers;
  answers.ids.resize(asked.ids.size());
  answers.counts.resize(static_cast<std::size_t>(row.size()));
  const PieceGroup& targets = grid_.row_group();
  const PieceGroup& sources = grid_.col_group();
  for (int s = 0; s < asked.num_sources(); ++s) answers.counts[static_cast<std::size_t>(s)] = asked.from(s).size();
  const auto asked_count = static_cast<std::int64_t>(asked.ids.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < asked_count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    answers.ids[k] = sources.to_global(sent_parent_[targets.to_local(asked.ids[k])]);
  }
  const IncomingIds answered = exchanger_.all_to_all(row, answers);
  // Answers come back in the order of the requests, grouped by the same ranks.
  for (std::size_t k = 0; k < requests.ids.size(); ++k) {
    parent[requests.ids[k] - first_vertex_] = static_cast<std::int64_t>(answered.ids[k]);
  }
}

template class DistributedBfs<std::uint32_t>;
template class DistributedBfs<std::uint64_t>;

}  // namespace zbfs
