#include "zbfs/bfs/distributed_pruned_search.hpp"

#include <algorithm>

namespace zbfs {

template <class V>
DistributedPrunedSearch<V>::DistributedPrunedSearch(const ProcessGrid& grid, const DistributedGraph<V>& graph,
                                                    const DistributedForest<V>* forest, Exchanger& exchanger,
                                                    PhaseMetrics& metrics)
    : grid_(grid),
      graph_(graph),
      forest_(forest),
      exchanger_(exchanger),
      metrics_(metrics),
      first_vertex_(grid.my_first_vertex()) {
  if (forest != nullptr) anchors_reached_.assign(forest->anchor_mask().size(), 0);
}

template <class V>
typename DistributedPrunedSearch<V>::Start DistributedPrunedSearch<V>::find_start(
    std::uint64_t root, const std::function<bool(std::uint64_t)>& reached_last) {
  const ScopedPhase phase(metrics_, Phase::kTerminationCheck);
  Start start;
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
    // from (sorted and input ids), its degree, and whether the last search reached it.
    std::uint64_t info[6] = {0, 0, 0, 0, 0, 0};
    if (first ? root_owned : grid_.owns(id)) {
      const std::uint64_t offset = id - first_vertex_;
      info[0] = id;
      info[1] = forest_->peeled(offset) ? 1 : 0;
      info[2] = forest_->attach(offset);
      info[3] = forest_->attach_original(offset);
      info[4] = graph_.owned_degree()[offset];
      info[5] = anchors_current_ && reached_last(offset) ? 1 : 0;
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
void DistributedPrunedSearch<V>::begin_levels(const Start& start) {
  // The start's level, and with a core root the trees hanging from it (a chain's start
  // has the root's tree among them: the attach step counts its others).
  level_ = start.chain.size();
  deepest_ = level_;
  if (start.pruned && start.chain.empty() && grid_.owns(start.id))
    deepest_ += forest_->height(start.id - first_vertex_);
}

template <class V>
void DistributedPrunedSearch<V>::level_counted(std::uint64_t vertices, std::uint64_t tallest) {
  ++level_;
  if (vertices > 0) deepest_ = std::max(deepest_, level_ + tallest);
}

template <class V>
std::span<const std::uint64_t> DistributedPrunedSearch<V>::anchors_reached(const Start& start,
                                                                           std::span<const std::uint64_t> visited) {
  if (!start.anchors_known) {
    const ScopedPhase phase(metrics_, Phase::kColumnExchange);
    exchanger_.gather_bitmap(grid_.world(), visited, anchors_reached_, forest_->anchor_mask());
  }
  anchors_current_ = true;
  return anchors_reached_;
}

template <class V>
std::uint64_t DistributedPrunedSearch<V>::own_tree_anchor(const Start& start) const {
  return start.chain.empty() ? DistributedForest<V>::kNone : forest_->anchor_position(start.id);
}

template <class V>
std::uint64_t DistributedPrunedSearch<V>::own_tree_depth(const Start& start, std::uint64_t offset) const {
  const std::uint64_t by = forest_->attach(offset);
  const std::uint64_t self = first_vertex_ + offset;
  const std::vector<ChainLink>& chain = start.chain;
  std::uint64_t deepest = 0;
  for (std::size_t c = 0; c <= chain.size(); ++c) {
    const std::uint64_t link = c < chain.size() ? chain[c].id : start.id;
    if (by == link && (c == 0 || self != chain[c - 1].id)) {
      deepest = std::max<std::uint64_t>(deepest, c + 1 + forest_->height(offset));
    }
  }
  return deepest;
}

template <class V>
std::vector<std::pair<std::uint64_t, std::uint64_t>> DistributedPrunedSearch<V>::chain_parents(
    const Start& start, std::uint64_t root) const {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> parents;
  const std::vector<ChainLink>& chain = start.chain;
  for (std::size_t c = 0; c < chain.size(); ++c) {
    if (grid_.owns(chain[c].id))
      parents.emplace_back(chain[c].id - first_vertex_, c == 0 ? root : chain[c - 1].original);
  }
  return parents;
}

template <class V>
void DistributedPrunedSearch<V>::finish(const Start& start, std::uint64_t attached, std::uint64_t deepest,
                                        const Stopwatch& clock, BfsStats& stats) {
  {
    const ScopedPhase phase(metrics_, Phase::kTerminationCheck);
    // The same anchors hang the same trees: their count is the last search's.
    if (!start.anchors_known) anchors_attached_ = grid_.world().allreduce(attached, ReduceOp::kSum);
    attached = anchors_attached_;
    deepest = grid_.world().allreduce(deepest, ReduceOp::kMax);
  }
  const double seconds = clock.elapsed_s();
  stats.steps.push_back({StepKind::kAttach, 0, attached, seconds});
  stats.attach_time_s = seconds;
  stats.depth = deepest;
}

template class DistributedPrunedSearch<std::uint32_t>;
template class DistributedPrunedSearch<std::uint64_t>;

}  // namespace zbfs
