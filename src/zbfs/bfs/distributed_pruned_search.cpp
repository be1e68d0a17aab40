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
  bool anchors_known = false;
  for (bool first = true;; first = false) {
    // The vertex's owner says: its sorted id, whether it is peeled, the vertex it hangs
    // from (sorted and input ids), its degree, and whether the last search reached it
    // (anchors_current_: before this search clears visited_).
    std::uint64_t info[6] = {0, 0, 0, 0, 0, 0};
    if (first ? root_owned : grid_.owns(id)) {
      const std::uint64_t offset = id - first_vertex_;
      info[0] = id;
      info[1] = forest_->peeled(offset) ? 1 : 0;
      info[2] = forest_->attach(offset);
      info[3] = forest_->attach_original(offset);
      info[4] = graph_.owned_degree()[offset];
      info[5] = anchors_current_ && visited_.test(offset) ? 1 : 0;
    }
    grid_.world().allreduce(std::span<std::uint64_t>(info), ReduceOp::kSum);
    id = info[0];
    if (first) start.id = id;
    if (first || info[1] == 0) start.degree = info[4];
    anchors_known = info[5] != 0;
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
  start.anchors_known = anchors_known;
  return start;
}

template <class V>
void DistributedBfs<V>::attach_trees(std::span<std::int64_t> parent, std::uint64_t root, const SearchStart& start,
                                     BfsStats& stats) {
  Stopwatch clock;
  const Communicator& world = grid_.world();
  if (!start.anchors_known) {
    const ScopedPhase phase(metrics_, Phase::kColumnExchange);
    exchanger_.gather_bitmap(world, std::span<const std::uint64_t>(visited_.data(), visited_.num_words()),
                             anchors_reached_, forest_->anchor_mask());
  }
  anchors_current_ = true;
  std::uint64_t attached = 0;
  std::uint64_t deepest = deepest_;
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    using Peeled = typename DistributedForest<V>::PeeledVertex;
    const Peeled* peeled = forest_->peeled_vertices().data();
    const std::uint64_t* reached = anchors_reached_.data();
    std::int64_t* out = parent.data();
    const auto count = static_cast<std::int64_t>(forest_->peeled_vertices().size());
    const std::vector<ChainLink>& chain = start.chain;
    // The root's own tree hangs from the start (a chain's last vertex): its depth counts.
    const std::uint64_t start_at = chain.empty() ? DistributedForest<V>::kNone : forest_->anchor_position(start.id);
    // In original order: the parent array is written from front to back.
#pragma omp parallel for schedule(static) reduction(+ : attached) reduction(max : deepest)
    for (std::int64_t i = 0; i < count; ++i) {
      const Peeled& vertex = peeled[i];
      const std::uint64_t at = vertex.anchor_at;
      if (at == DistributedForest<V>::kNone || ((reached[at / 64] >> (at % 64)) & 1) == 0) continue;
      out[vertex.original] = static_cast<std::int64_t>(vertex.parent);
      ++attached;
      if (at != start_at) continue;
      // The root's own tree: a vertex hanging from the chain's i-th vertex (the start
      // at i = chain.size()) is at level i + 1, but for the one the chain came up by.
      const V o = vertex.offset;
      const std::uint64_t by = forest_->attach(o);
      const std::uint64_t self = first_vertex_ + o;
      for (std::size_t c = 0; c <= chain.size(); ++c) {
        const std::uint64_t link = c < chain.size() ? chain[c].id : start.id;
        if (by == link && (c == 0 || self != chain[c - 1].id)) {
          deepest = std::max<std::uint64_t>(deepest, c + 1 + forest_->height(o));
        }
      }
    }
    // The chain's parents point back towards the root.
    for (std::size_t c = 0; c < chain.size(); ++c) {
      if (!grid_.owns(chain[c].id)) continue;
      const std::uint64_t offset = chain[c].id - first_vertex_;
      out[owned_original_[offset]] = static_cast<std::int64_t>(c == 0 ? root : chain[c - 1].original);
    }
  }
  {
    const ScopedPhase phase(metrics_, Phase::kTerminationCheck);
    // The same anchors hang the same trees: their count is the last search's.
    if (!start.anchors_known) anchors_attached_ = world.allreduce(attached, ReduceOp::kSum);
    attached = anchors_attached_;
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
