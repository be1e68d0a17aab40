// DistributedBfs's pruned search (--prune): the walk from a peeled root to the core, and
// the trees attached after the core search (distributed_bfs.hpp).
#include <omp.h>

#include <algorithm>
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
void DistributedBfs<V>::attach_trees(std::span<std::int64_t> parent, std::uint64_t root, const SearchStart& start,
                                     BfsStats& stats) {
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
    const std::span<const V> peeled = forest_->peeled_offsets();
    const std::uint64_t* reached = anchors_reached_.data();
    const auto count = static_cast<std::int64_t>(peeled.size());
    const std::vector<ChainLink>& chain = start.chain;
#pragma omp parallel for schedule(static) reduction(+ : attached) reduction(max : deepest)
    for (std::int64_t i = 0; i < count; ++i) {
      const V o = peeled[static_cast<std::size_t>(i)];
      const std::uint64_t anchor = forest_->anchor(o);
      if (anchor == DistributedForest<V>::kNone) continue;
      const std::uint64_t at = forest_->anchor_position(anchor);
      if (((reached[at / 64] >> (at % 64)) & 1) == 0) continue;
      parent[owned_original_[o]] = static_cast<std::int64_t>(forest_->attach_original(o));
      ++attached;
      if (chain.empty() || anchor != start.id) continue;
      // The root's own tree: a vertex hanging from the chain's i-th vertex (the start
      // at i = chain.size()) is at level i + 1, but for the one the chain came up by.
      const std::uint64_t by = forest_->attach(o);
      const std::uint64_t self = first_vertex_ + o;
      for (std::size_t k = 0; k <= chain.size(); ++k) {
        const std::uint64_t link = k < chain.size() ? chain[k].id : start.id;
        if (by == link && (k == 0 || self != chain[k - 1].id)) {
          deepest = std::max<std::uint64_t>(deepest, k + 1 + forest_->height(o));
        }
      }
    }
    // The chain's parents point back towards the root.
    for (std::size_t k = 0; k < start.chain.size(); ++k) {
      if (!grid_.owns(start.chain[k].id)) continue;
      const std::uint64_t offset = start.chain[k].id - first_vertex_;
      parent[owned_original_[offset]] = static_cast<std::int64_t>(k == 0 ? root : start.chain[k - 1].original);
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
template void DistributedBfs<std::uint32_t>::attach_trees(std::span<std::int64_t>, std::uint64_t, const SearchStart&,
                                                          BfsStats&);
template void DistributedBfs<std::uint64_t>::attach_trees(std::span<std::int64_t>, std::uint64_t, const SearchStart&,
                                                          BfsStats&);

}  // namespace zbfs
