// DistributedBfs's pruned search (--prune): the walk from a peeled root to the core, and
// the trees attached after the core search (distributed_bfs.hpp).
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "zbfs/bfs/distributed_bfs.hpp"
#include "zbfs/core/timer.hpp"

namespace zbfs {

template <class V>
typename DistributedBfs<V>::SearchStart DistributedBfs<V>::find_start(std::uint64_t root) {
  const ScopedPhase phase(metrics_, Phase::kTerminationCheck);
  SearchStart start;
  start.original = root;
  // Only the owner knows the root's sorted id.
  const bool root_owned = grid_.owns(root);
  // Off the owner the root itself stands in: the same piece, so the same owner.
  const std::uint64_t root_id = root_owned ? first_vertex_ + graph_.order().sorted_offset(root - first_vertex_) : root;
  if (forest_ == nullptr) {
    start.id = root_id;
    return start;
  }
  std::uint64_t id = root_id;
  std::uint64_t original = root;
  for (bool first = true;; first = false) {
    // The vertex's owner says: its sorted id, whether it is peeled, the vertex it hangs
    // from (sorted and input ids), and its degree.
    std::uint64_t info[5] = {0, 0, 0, 0, 0};
    if (first ? root_owned : grid_.owns(id)) {
      const std::uint64_t offset = id - first_vertex_;
      info[0] = id;
      info[1] = forest_->peeled(offset) ? 1 : 0;
      info[2] = forest_->attach(offset);
      info[3] = forest_->attach_original(offset);
      info[4] = graph_.owned_degree()[offset];
    }
    grid_.world().allreduce(std::span<std::uint64_t>(info), ReduceOp::kSum);
    id = info[0];
    if (first) start.id = id;
    if (first || info[1] == 0) start.degree = info[4];
    if (info[1] == 0) break;  // a core vertex (or one without edges): the search starts here
    if (info[2] == id) {
      // A tree that hangs from no core vertex: searched whole, unpruned, from the root
      // (start.degree is still the root's).
      start.chain.clear();
      return start;
    }
    start.chain.push_back({id, original});
    id = info[2];
    original = info[3];
  }
  start.pruned = true;
  start.id = id;
  start.original = original;
  return start;
}

template <class V>
void DistributedBfs<V>::attach_trees(std::uint64_t root, const SearchStart& start, BfsStats& stats) {
  Stopwatch clock;
  const Communicator& world = grid_.world();
  {
    const ScopedPhase phase(metrics_, Phase::kColumnExchange);
    exchanger_.gather_bitmap(world, std::span<const std::uint64_t>(visited_.data(), visited_.num_words()),
                             anchors_reached_, forest_->anchor_mask());
  }
  std::uint64_t attached = 0;
  std::uint64_t deepest = deepest_;
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    // Parents go to sorted offsets, as the steps' (scatter_parents moves them all).
    attached_.clear();
    const std::span<const V> peeled = forest_->peeled_offsets();
    const std::uint64_t* anchor_at = forest_->peeled_anchor_positions().data();
    const std::uint64_t* reached = anchors_reached_.data();
    std::uint64_t* attached_bits = attached_.data();
    std::int64_t* out = sorted_parents_.data();
    const auto count = static_cast<std::int64_t>(peeled.size());
    const std::vector<ChainLink>& chain = start.chain;
    // The root's own tree hangs from the start (a chain's last vertex): its depth counts.
    const std::uint64_t start_at = chain.empty() ? DistributedForest<V>::kNone : forest_->anchor_position(start.id);
    // The peeled offsets ascend: a thread gathers a word's attached bits and ORs them in
    // once the word is done (atomically: two threads share the word at their seam).
    const auto flush = [attached_bits](std::uint64_t word, std::uint64_t bits) {
      if (bits != 0) std::atomic_ref<std::uint64_t>(attached_bits[word]).fetch_or(bits, std::memory_order_relaxed);
    };
#pragma omp parallel reduction(+ : attached) reduction(max : deepest)
    {
      std::uint64_t word = 0;
      std::uint64_t bits = 0;
#pragma omp for schedule(static)
      for (std::int64_t i = 0; i < count; ++i) {
        const auto k = static_cast<std::size_t>(i);
        const std::uint64_t at = anchor_at[k];
        if (at == DistributedForest<V>::kNone || ((reached[at / 64] >> (at % 64)) & 1) == 0) continue;
        const V o = peeled[k];
        out[o] = static_cast<std::int64_t>(forest_->attach_original(o));
        if (o / 64 != word) {
          flush(word, bits);
          word = o / 64;
          bits = 0;
        }
        bits |= std::uint64_t{1} << (o % 64);
        ++attached;
        if (at != start_at) continue;
        // The root's own tree: a vertex hanging from the chain's i-th vertex (the start
        // at i = chain.size()) is at level i + 1, but for the one the chain came up by.
        const std::uint64_t by = forest_->attach(o);
        const std::uint64_t self = first_vertex_ + o;
        for (std::size_t c = 0; c <= chain.size(); ++c) {
          const std::uint64_t link = c < chain.size() ? chain[c].id : start.id;
          if (by == link && (c == 0 || self != chain[c - 1].id)) {
            deepest = std::max<std::uint64_t>(deepest, c + 1 + forest_->height(o));
          }
        }
      }
      flush(word, bits);
    }
    // The chain's parents point back towards the root.
    for (std::size_t c = 0; c < chain.size(); ++c) {
      if (!grid_.owns(chain[c].id)) continue;
      const std::uint64_t offset = chain[c].id - first_vertex_;
      out[offset] = static_cast<std::int64_t>(c == 0 ? root : chain[c - 1].original);
      attached_.set(offset);
    }
  }
  {
    const ScopedPhase phase(metrics_, Phase::kTerminationCheck);
    attached = world.allreduce(attached, ReduceOp::kSum);
    deepest = world.allreduce(deepest, ReduceOp::kMax);
  }
  const double t = clock.elapsed_s();
  stats.steps.push_back({StepKind::kAttach, 0, attached, t});
  stats.attach_time_s = t;
  stats.depth = deepest;
}

// The members defined here, for both id widths (the class is instantiated in
// distributed_bfs.cpp).
template DistributedBfs<std::uint32_t>::SearchStart DistributedBfs<std::uint32_t>::find_start(std::uint64_t);
template DistributedBfs<std::uint64_t>::SearchStart DistributedBfs<std::uint64_t>::find_start(std::uint64_t);
template void DistributedBfs<std::uint32_t>::attach_trees(std::uint64_t, const SearchStart&, BfsStats&);
template void DistributedBfs<std::uint64_t>::attach_trees(std::uint64_t, const SearchStart&, BfsStats&);

}  // namespace zbfs
