#include "zbfs/bfs/distributed_bfs.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <string>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/graph/hub_neighbors.hpp"

namespace zbfs {

namespace {

// The bottom-up search of one bitmap word, in two halves: for each vertex in `unvisited`
// (bits of the word starting at local index `first`, each with a neighbour here), its hub
// (check_hubs: on a Kronecker graph the hub finds most parents without the list; the hubs
// by the rows' position, graph/adjacency_rows.hpp), then,
// for those whose hub is not in `frontier`, the first neighbour in the frontier
// (scan_lists; `rows`: the lists' rows view). Finds are reported as on_found(bit,
// neighbour), hubs' first. The lists to scan are prefetched while the other hubs are
// checked: the first line of each list was a miss the scan waited for.
struct HubChecks {
  std::uint64_t found = 0;  // found by their hubs
  std::uint64_t scans = 0;  // lists to scan
};
// A bottom-up step's counted work (metrics/work_counts.hpp), summed over its words.
struct ScanWork {
  std::uint64_t hub_checks = 0;
  std::uint64_t lists = 0;
  std::uint64_t entries = 0;
};
template <class V, class Rows, class OnFound>
inline HubChecks check_hubs(std::uint64_t unvisited, std::uint64_t first, const Rows& rows, const V* hubs,
                            const std::uint64_t* frontier, OnFound on_found) {
  HubChecks checks;
  for (; unvisited != 0; unvisited &= unvisited - 1) {
    const int bit = std::countr_zero(unvisited);
    const std::uint64_t vertex = first + static_cast<std::uint64_t>(bit);
    if (const V hub = hubs[rows.position(vertex)]; (frontier[hub >> 6] >> (hub & 63)) & 1) {
      checks.found |= std::uint64_t{1} << bit;
      on_found(bit, hub);
    } else {
      checks.scans |= std::uint64_t{1} << bit;
      rows.prefetch(vertex);
    }
  }
  return checks;
}
template <class V, class Rows, class OnFound>
inline std::uint64_t scan_lists(std::uint64_t scans, std::uint64_t first, const Rows& rows,
                                const std::uint64_t* frontier, std::uint64_t& entries, OnFound on_found) {
  std::uint64_t found = 0;
  for (; scans != 0; scans &= scans - 1) {
    const int bit = std::countr_zero(scans);
    rows.scan(first + static_cast<std::uint64_t>(bit), [&](V neighbour) {
      ++entries;
      if (((frontier[neighbour >> 6] >> (neighbour & 63)) & 1) == 0) return false;
      found |= std::uint64_t{1} << bit;
      on_found(bit, neighbour);
      return true;
    });
  }
  return found;
}
template <class V, class Rows, class OnFound>
inline std::uint64_t scan_unvisited(std::uint64_t unvisited, std::uint64_t first, const Rows& rows, const V* hubs,
                                    const std::uint64_t* frontier, ScanWork& work, OnFound on_found) {
  const HubChecks checks = check_hubs(unvisited, first, rows, hubs, frontier, on_found);
  work.hub_checks += static_cast<std::uint64_t>(std::popcount(unvisited));
  work.lists += static_cast<std::uint64_t>(std::popcount(checks.scans));
  return checks.found | scan_lists<V>(checks.scans, first, rows, frontier, work.entries, on_found);
}

// Discovers the owned vertex at `offset` in this level from the parent `candidate`.
// Every discoverer of a vertex not visited before this level lowers its parent (-1, none
// yet, compares as the largest unsigned), so a vertex found from several parents keeps
// the smallest whatever order threads or arrivals came in. Shared: `next` is set before
// `visited` (release) and `visited` is read with acquire, so a discoverer that finds the
// vertex visited a moment ago in this level finds it in `next` too and never takes it
// for one from an earlier level. (A claim then a store left both windows open, and a
// two-thread top-down step gave a different tree now and then.)
inline void discover(Bitmap& visited, Bitmap& next, std::uint64_t offset, std::int64_t& entry, std::int64_t candidate,
                     bool shared) {
  const std::size_t w = Bitmap::word_of(offset);
  const std::uint64_t mask = Bitmap::mask_of(offset);
  if (!shared) {
    if ((visited.word(w) & mask) == 0) {
      visited.word(w) |= mask;
      next.word(w) |= mask;
      entry = candidate;
    } else if ((next.word(w) & mask) != 0) {
      entry = std::min(entry, candidate);
    }
    return;
  }
  std::atomic_ref<std::uint64_t> visited_word(visited.word(w));
  std::atomic_ref<std::uint64_t> next_word(next.word(w));
  if ((visited_word.load(std::memory_order_acquire) & mask) == 0) {
    next_word.fetch_or(mask, std::memory_order_relaxed);
    visited_word.fetch_or(mask, std::memory_order_release);
  } else if ((next_word.load(std::memory_order_relaxed) & mask) == 0) {
    return;  // visited in an earlier level
  }
  std::atomic_ref<std::int64_t> at(entry);
  std::int64_t seen = at.load(std::memory_order_relaxed);
  while (static_cast<std::uint64_t>(candidate) < static_cast<std::uint64_t>(seen) &&
         !at.compare_exchange_weak(seen, candidate, std::memory_order_relaxed)) {
  }
}

}  // namespace

template <class V>
DistributedBfs<V>::DistributedBfs(const ProcessGrid& grid, const DistributedGraph<V>& graph, Exchanger& exchanger,
                                  PhaseMetrics& metrics, const DistributedForest<V>* forest)
    : grid_(grid),
      graph_(graph),
      forest_(forest),
      exchanger_(exchanger),
      metrics_(metrics),
      block_(grid.blocks().block()),
      first_vertex_(grid.my_first_vertex()),
      owned_original_(graph.order().original_offsets().data()),
      col_original_(graph.col_group_original().data()),
      col_original_rank_(graph.col_original_rank()),
      bottom_up_source_rank_(grid_layout(grid.partition()) ? graph.col_original_rank() : RowRank{}),
      bottom_up_source_original_(grid_layout(grid.partition()) ? graph.col_group_original().data()
                                                               : graph.row_group_original().data()),
      claims_(grid.row().size(), omp_get_max_threads()),
      visited_(block_),
      frontier_(block_),
      next_(block_),
      sent_(grid.row_group().local_size()),
      pruning_(grid, graph, forest, exchanger, metrics),
      protocol_(grid, exchanger, metrics, *this),
      sorted_parents_(graph.order().original_offsets()),
      parent_(block_) {
  std::fill_n(parent_.data(), block_, std::int64_t{-1});
  const TraversalLayout bottom_up = grid.bottom_up();
  if (bottom_up.expand->size() > 1) {
    source_has_edges_ = Bitmap(bottom_up.source.local_size());
    gather_has_edges(*bottom_up.expand, source_has_edges_, false);
    if (forest != nullptr) {
      source_core_ = Bitmap(bottom_up.source.local_size());
      gather_has_edges(*bottom_up.expand, source_core_, true);
    }
  }
  build_hubs(bottom_up);
  const TraversalLayout top_down = grid.top_down();
  keep_reported_parents(top_down);
  source_rows_with_edges_ = graph_.for_layout(top_down).with_rows(
      [&](const auto& rows) { return rows_with_edges(rows, top_down.source.local_size()); });
}

template <class V>
BfsStats DistributedBfs<V>::run(std::uint64_t root, std::span<std::int64_t> parent, const BfsOptions& options) {
  // Both checks give the same answer on every rank.
  check_root(root);
  if (parent.size() != block_) {
    throw Error(ExitCode::kFailure,
                "the parent array has " + std::to_string(parent.size()) + " entries, not " + std::to_string(block_),
                ErrorScope::kAllRanks);
  }
  const Stopwatch clock;
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    const auto n = static_cast<std::int64_t>(block_);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) parent[static_cast<std::size_t>(i)] = -1;
  }
  const double fill_s = clock.elapsed_s();
  // visited_ will be this search's: it no longer says what parent_ holds.
  clear_all_ = clear_all_ || dirty_;
  BfsStats stats = search(root, parent, options);
  stats.init_time_s += fill_s;
  return stats;
}

template <class V>
BfsStats DistributedBfs<V>::run(std::uint64_t root, const BfsOptions& options) {
  check_root(root);
  const Stopwatch clock;
  clear_parent();  // nothing to do when the caller cleared the last tree
  const double clear_s = clock.elapsed_s();
  BfsStats stats = search(root, parent_.span(), options);
  stats.init_time_s += clear_s;
  dirty_ = true;
  return stats;
}

template <class V>
void DistributedBfs<V>::clear_parent() {
  if (!dirty_ && !clear_all_) return;
  dirty_ = false;
  std::int64_t* parent = parent_.data();
  const auto n = static_cast<std::int64_t>(block_);
  std::uint64_t visited = 0;
  const auto words = static_cast<std::int64_t>(visited_.num_words());
#pragma omp parallel for schedule(static) reduction(+ : visited) if (words > (1 << 16))
  for (std::int64_t w = 0; w < words; ++w) visited += std::popcount(visited_.word(static_cast<std::size_t>(w)));
  // Past about n / 32 vertices, filling the piece costs less than scattered stores.
  if (clear_all_ || visited > block_ / 32) {
    clear_all_ = false;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) parent[i] = -1;
    return;
  }
  const V* owned_original = owned_original_;
#pragma omp parallel for schedule(static) if (words > (1 << 16))
  for (std::int64_t w = 0; w < words; ++w) {
    for (std::uint64_t bits = visited_.word(static_cast<std::size_t>(w)); bits != 0; bits &= bits - 1) {
      const std::uint64_t offset =
          static_cast<std::uint64_t>(w) * 64 + static_cast<std::uint64_t>(std::countr_zero(bits));
      parent[owned_original[offset]] = -1;
    }
  }
}

template <class V>
void DistributedBfs<V>::check_root(std::uint64_t root) const {
  if (root >= grid_.blocks().num_vertices()) {
    throw Error(ExitCode::kUsage, "search key " + std::to_string(root) + " is not a vertex", ErrorScope::kAllRanks);
  }
}

template <class V>
BfsStats DistributedBfs<V>::search(std::uint64_t root, std::span<std::int64_t> parent, const BfsOptions& options) {
  protocol_.begin_search();
  BfsStats stats;
  Stopwatch clock;
  const SearchStart start = pruning_.find_start(root, [this](std::uint64_t offset) { return visited_.test(offset); });
  pruned_search_ = start.pruned;
  pruning_.forget_anchors();  // visited_ is cleared below; attach_trees finds them again
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    if (pruned_search_) {
      // Peeled vertices start visited, and top-down steps never report them.
      std::copy_n(forest_->peeled_bits().data(), visited_.num_words(), visited_.data());
      std::copy_n(forest_->row_group_peeled().data(), sent_.num_words(), sent_.data());
    } else {
      visited_.clear();
      sent_.clear();
    }
    frontier_.clear();
    metrics_.add_work(WorkKind::kBitmapWords, visited_.num_words() + sent_.num_words() + frontier_.num_words());
    // Threads sharing a step claim vertices and lower their parents (discover()).
    sorted_parents_.prepare(omp_get_max_threads() > 1);
    if (grid_.owns(start.id)) {
      const std::uint64_t offset = start.id - first_vertex_;
      visited_.set(offset);
      frontier_.set(offset);
      sorted_parents_[offset] = static_cast<std::int64_t>(start.start_parent());
    }
  }
  stats.init_time_s = clock.elapsed_s();

  std::uint64_t root_degree = start.degree.value_or(0);
  if (!start.degree) {
    root_degree = grid_.owns(start.id) ? graph_.owned_degree()[start.id - first_vertex_] : 0;
    const ScopedPhase phase(metrics_, Phase::kTerminationCheck);
    root_degree = grid_.world().allreduce(root_degree, ReduceOp::kSum);
  }
  pruning_.begin_levels(start);
  LevelCounts level{1, root_degree};
  DirectionPolicy policy(options, pruned_search_ ? forest_->core_vertices() : grid_.blocks().num_vertices(),
                         pruned_search_ ? forest_->core_directed_edges() : graph_.global_directed_edges(), root_degree);

  protocol_.run(policy, level, stats);
  if (pruned_search_) attach_trees(parent, root, start, stats);
  scatter_parents(parent, stats);
  return stats;
}

template <class V>
void DistributedBfs<V>::scatter_parents(std::span<std::int64_t> parent, BfsStats& stats) {
  const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
  const Stopwatch clock;
  const std::uint64_t* visited = visited_.data();
  if (pruned_search_) {
    // The core's reached vertices (all peeled ones start visited; attach_trees wrote theirs).
    const std::uint64_t* peeled = forest_->peeled_bits().data();
    sorted_parents_.move_to(parent, [&](std::uint64_t w) { return visited[w] & ~peeled[w]; });
  } else {
    sorted_parents_.move_to(parent, [&](std::uint64_t w) { return visited[w]; });
  }
  metrics_.add_work(WorkKind::kBitmapWords, visited_.num_words());
  stats.output_time_s = clock.elapsed_s();
}

template <class V>
void DistributedBfs<V>::attach_trees(std::span<std::int64_t> parent, std::uint64_t root, const SearchStart& start,
                                     BfsStats& stats) {
  const Stopwatch clock;
  const std::span<const std::uint64_t> anchors =
      pruning_.anchors_reached(start, std::span<const std::uint64_t>(visited_.data(), visited_.num_words()));
  std::uint64_t attached = 0;
  std::uint64_t deepest = pruning_.deepest();
  {
    const ScopedPhase phase(metrics_, Phase::kLocalExpansion);
    using Peeled = typename DistributedForest<V>::PeeledVertex;
    const Peeled* peeled = forest_->peeled_vertices().data();
    const std::uint64_t* reached = anchors.data();
    std::int64_t* out = parent.data();
    const auto count = static_cast<std::int64_t>(forest_->peeled_vertices().size());
    const std::uint64_t own_tree = pruning_.own_tree_anchor(start);
    // In original order: the parent array is written from front to back.
#pragma omp parallel for schedule(static) reduction(+ : attached) reduction(max : deepest)
    for (std::int64_t i = 0; i < count; ++i) {
      const Peeled& vertex = peeled[i];
      const std::uint64_t at = vertex.anchor_at;
      if (at == DistributedForest<V>::kNone || ((reached[at / 64] >> (at % 64)) & 1) == 0) continue;
      out[vertex.original] = static_cast<std::int64_t>(vertex.parent);
      ++attached;
      if (at == own_tree) deepest = std::max(deepest, pruning_.own_tree_depth(start, vertex.offset));
    }
    for (const auto& [offset, by] : pruning_.chain_parents(start, root)) {
      out[owned_original_[offset]] = static_cast<std::int64_t>(by);
    }
  }
  pruning_.finish(start, attached, deepest, clock, stats);
}

template <class V>
std::vector<std::uint64_t> DistributedBfs<V>::frontier_ids() {
  std::vector<std::uint64_t> mine;
  for (std::size_t w = 0; w < frontier_.num_words(); ++w) {
    for (std::uint64_t bits = frontier_.word(w); bits != 0; bits &= bits - 1) {
      mine.push_back(first_vertex_ + w * 64 + static_cast<std::uint64_t>(std::countr_zero(bits)));
    }
  }
  metrics_.add_work(WorkKind::kBitmapWords, frontier_.num_words());
  metrics_.add_work(WorkKind::kQueued, mine.size());
  return mine;
}

template <class V>
OutgoingIds DistributedBfs<V>::expand(const TraversalLayout& layout, std::span<const std::uint64_t> sources,
                                      const FoldMode& mode) {
  next_.clear();
  const LocalCsr<V>& graph = graph_.for_layout(layout);
  const int my_member = layout.fold->rank();
  const std::uint64_t block = block_;
  const std::uint64_t my_first_local = static_cast<std::uint64_t>(my_member) * block;
  const FastDivider by_block = grid_.blocks().by_block();
  const int threads = omp_get_max_threads();
  OutgoingBuilder builder(layout.fold->size(), threads);
  const auto count = static_cast<std::int64_t>(sources.size());
  V* sent_parent = sent_parent_.data();
  const RowRank reported = reported_;
  const bool pairs = mode.update_fold;
  const bool filter_sent = mode.report_once;
  const V* source_original = col_original_;
  const RowRank source_rank = col_original_rank_;
  std::int64_t* parent = sorted_parents_.data();
  const bool shared = threads > 1;
  const Bitmap& with_edges = source_rows_with_edges_;
  std::uint64_t lists = 0;
  std::uint64_t entries = 0;
  graph.with_rows([&](const auto& rows) {
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
#pragma omp for schedule(dynamic, 64) reduction(+ : lists, entries)
      for (std::int64_t i = 0; i < count; ++i) {
        const std::uint64_t u = sources[static_cast<std::size_t>(i)];
        const std::uint64_t source_local = layout.source.to_local(u);
        if (!with_edges.test(source_local)) continue;
        ++lists;
        entries += graph.degree(source_local);
        const std::uint64_t source_position = source_rank.position(source_local);
        rows.scan(source_local, [&](V target_local) {
          // Owned targets by one unsigned comparison: a division per edge would cost more
          // than the rest of the loop.
          const std::uint64_t offset = target_local - my_first_local;
          if (offset < block) {
            discover(visited_, next_, offset, parent[offset],
                     static_cast<std::int64_t>(layout.source.to_global(source_original[source_position])), shared);
          } else if (pairs) {
            // The pair goes out as it is, once per search unless merging is off.
            if (filter_sent && !sent_.claim(target_local, shared)) return false;
            auto& bucket = builder.bucket(t, static_cast<int>(by_block.divide(target_local)));
            bucket.push_back(layout.target.to_global(target_local));
            bucket.push_back(layout.source.to_global(source_original[source_position]));
          } else if (sent_.claim(target_local, shared)) {
            sent_parent[reported.position(target_local)] = static_cast<V>(source_local);
            builder.bucket(t, static_cast<int>(by_block.divide(target_local)))
                .push_back(layout.target.to_global(target_local));
          }
          return false;
        });
      }
    }
  });
  OutgoingIds outgoing = builder.finish();
  metrics_.add_work(WorkKind::kBitmapWords, next_.num_words());  // cleared at the start
  metrics_.add_work(WorkKind::kLists, lists);
  metrics_.add_work(WorkKind::kListEntries, entries);
  metrics_.add_work(WorkKind::kQueued, outgoing.ids.size());
  return outgoing;
}

template <class V>
void DistributedBfs<V>::begin_pipelined(int members) {
  bucket_members_ = static_cast<std::size_t>(members);
  buckets_.resize(static_cast<std::size_t>(omp_get_max_threads()) * bucket_members_);
  for (std::vector<KeyedItem>& bucket : buckets_) bucket.clear();
  next_.clear();
  metrics_.add_work(WorkKind::kBitmapWords, next_.num_words());
}

// Lists this long are split at the owned ids before they are expanded.
constexpr std::ptrdiff_t kSplitListAt = 32;

template <class V>
std::size_t DistributedBfs<V>::expand_chunk(const TraversalLayout& layout, std::span<const std::uint64_t> sources,
                                            std::size_t begin, std::size_t batch_items, const FoldMode& mode) {
  const LocalCsr<V>& graph = graph_.for_layout(layout);
  const int threads = omp_get_max_threads();
  // Chunks of sources with this many edges: long enough that the threads' start and the
  // poll cost little against them, short enough that batches leave soon after they fill
  // and arrivals are claimed while the expansion goes on (docs/performance.md). Small
  // batches get short chunks, so that they do leave one by one.
  const std::uint64_t chunk_edges = std::clamp<std::uint64_t>(batch_items, 64, 4096)
                                    << std::bit_width(static_cast<unsigned>(threads));
  std::size_t end = begin;
  const Bitmap& with_edges = source_rows_with_edges_;
  std::uint64_t lists = 0;
  std::uint64_t entries = 0;
  for (; end < sources.size() && entries + (end - begin) < chunk_edges; ++end) {
    const std::uint64_t source_local = layout.source.to_local(sources[end]);
    if (!with_edges.test(source_local)) continue;
    ++lists;
    entries += graph.degree(source_local);
  }
  metrics_.add_work(WorkKind::kLists, lists);
  metrics_.add_work(WorkKind::kListEntries, entries);
  const std::uint64_t block = block_;
  const std::uint64_t my_first_local = static_cast<std::uint64_t>(layout.fold->rank()) * block;
  const FastDivider by_block = grid_.blocks().by_block();
  const std::size_t destinations = bucket_members_;
  const bool filter_sent = mode.report_once;
  const V* source_original = col_original_;
  const RowRank source_rank = col_original_rank_;
  std::int64_t* parent = sorted_parents_.data();
  const bool shared = threads > 1;
  const bool by_id = !graph.weighted();  // SSSP's lists are ordered by weight
  const auto first = static_cast<std::int64_t>(begin);
  const auto last = static_cast<std::int64_t>(end);
  graph.with_rows([&](const auto& rows) {
#pragma omp parallel num_threads(threads) if (shared && last - first > 64)
    {
      const auto t = static_cast<std::size_t>(omp_get_thread_num());
#pragma omp for schedule(dynamic, 16)
      for (std::int64_t i = first; i < last; ++i) {
        const std::uint64_t source_local = layout.source.to_local(sources[static_cast<std::size_t>(i)]);
        if (!with_edges.test(source_local)) continue;
        const std::uint64_t parent_global =
            layout.source.to_global(source_original[source_rank.position(source_local)]);
        const auto found_here = [&](V target_local) {
          // Perhaps found in this level already, by an update that arrived: the
          // smallest parent wins, so the tree does not depend on arrival times.
          const std::uint64_t offset = target_local - my_first_local;
          discover(visited_, next_, offset, parent[offset], static_cast<std::int64_t>(parent_global), shared);
        };
        const auto found_there = [&](V target_local) {
          if (!filter_sent || sent_.claim(target_local, shared)) {
            const std::uint64_t owner = by_block.divide(target_local);
            buckets_[t * destinations + owner].push_back({target_local - owner * block, parent_global});
          }
        };
        if constexpr (requires { rows.list(source_local); }) {
          const auto [list, list_end] = rows.list(source_local);
          if (by_id && list_end - list >= kSplitListAt) {
            // A list sorted by id holds each owner's together: no branch per edge on whose
            // it is (a miss on half the edges at two ranks).
            const auto below = [](V id, std::uint64_t bound) { return id < bound; };  // 2^32 fits
            const V* mine = std::lower_bound(list, list_end, my_first_local, below);
            const V* mine_end = std::lower_bound(mine, list_end, my_first_local + block, below);
            for (const V* at = list; at < mine; ++at) found_there(*at);
            for (const V* at = mine; at < mine_end; ++at) found_here(*at);
            for (const V* at = mine_end; at < list_end; ++at) found_there(*at);
            continue;
          }
        }
        rows.scan(source_local, [&](V target_local) {
          if (target_local - my_first_local < block) {
            found_here(target_local);
          } else {
            found_there(target_local);
          }
          return false;
        });
      }
    }
  });
  return end;
}

template <class V>
std::size_t DistributedBfs<V>::waiting(std::size_t member) const {
  std::size_t items = 0;
  for (std::size_t at = member; at < buckets_.size(); at += bucket_members_) items += buckets_[at].size();
  return items;
}

template <class V>
std::size_t DistributedBfs<V>::drain(std::size_t member, std::vector<KeyedItem>& batch) {
  std::size_t moved = 0;
  for (std::size_t at = member; at < buckets_.size(); at += bucket_members_) {
    std::vector<KeyedItem>& bucket = buckets_[at];
    batch.insert(batch.end(), bucket.begin(), bucket.end());
    moved += bucket.size();
    bucket.clear();
  }
  metrics_.add_work(WorkKind::kQueued, moved);
  return moved;
}

template <class V>
void DistributedBfs<V>::claim_updates(std::span<const KeyedItem> arrived, std::uint64_t key_base) {
  const auto count = static_cast<std::int64_t>(arrived.size());
  bool foreign = false;
  // Forking threads costs more than claiming a few thousand updates.
  const bool parallel = count > 4096;
  const bool shared = parallel && omp_get_max_threads() > 1;
  std::int64_t* parent = sorted_parents_.data();
#pragma omp parallel for schedule(static) reduction(|| : foreign) if (parallel)
  for (std::int64_t i = 0; i < count; ++i) {
    const KeyedItem& item = arrived[static_cast<std::size_t>(i)];
    const std::uint64_t offset = item.key - key_base;
    if (offset >= block_) {
      foreign = true;
      continue;
    }
    discover(visited_, next_, offset, parent[offset], static_cast<std::int64_t>(item.value), shared);
  }
  metrics_.add_work(WorkKind::kArrivals, arrived.size());
  if (foreign) throw Error(ExitCode::kFailure, "update fold: a vertex arrived at a rank that does not own it");
}

template <class V>
std::span<const std::uint64_t> DistributedBfs<V>::frontier_words() {
  return {frontier_.data(), static_cast<std::size_t>(grid_.blocks().words_per_block())};
}

template <class V>
std::span<const std::uint64_t> DistributedBfs<V>::open_positions() {
  const Bitmap& open = pruned_search_ ? source_core_ : source_has_edges_;
  return {open.data(), open.num_words()};
}

template <class V>
void DistributedBfs<V>::search_own(const TraversalLayout& layout, std::span<const std::uint64_t> gathered) {
  const LocalCsr<V>& graph = graph_.for_layout(layout);
  const auto words_per_block = static_cast<std::int64_t>(grid_.blocks().words_per_block());
  const std::size_t my_first_word = static_cast<std::size_t>(layout.fold->rank()) * grid_.blocks().words_per_block();
  // Raw pointers: parent stores (int64) may alias any uint64 member, which would make
  // the compiler reload every member after each store.
  const std::uint64_t* frontier = gathered.empty() ? frontier_.data() : gathered.data();
  const V* hubs = hub_.data();
  const V* hub_original = hub_original_.data();
  const std::uint64_t* rows_with_edges = target_rows_with_edges_.data() + my_first_word;
  std::uint64_t* next = next_.data();
  std::uint64_t* visited = visited_.data();
  std::int64_t* parent_of = sorted_parents_.data();
  const V* source_original = bottom_up_source_original_;
  const RowRank source_rank = bottom_up_source_rank_;
  // Bottom-up sources are a column group, or all of 1D: contiguous, so a local index
  // becomes global by one addition.
  const std::uint64_t source_base = layout.source.to_global(0);
  std::uint64_t hub_checks = 0;
  std::uint64_t lists = 0;
  std::uint64_t entries = 0;
  // Each thread owns whole words, so no two threads write the same word.
  graph.with_rows([&](const auto& rows) {
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : hub_checks, lists, entries)
    for (std::int64_t w = 0; w < words_per_block; ++w) {
      const auto owned_word = static_cast<std::size_t>(w);
      // A parent's original id: the hub's from a table read in step with the hubs; a
      // list's is a random read in a table of 4 bytes a source (4 MiB in 1D at scale 20),
      // prefetched when found and read once the word's lists are done.
      const std::uint64_t first = (my_first_word + owned_word) * 64;
      std::int64_t* word_parents = parent_of + owned_word * 64;
      const std::uint64_t unvisited = ~visited[owned_word] & rows_with_edges[owned_word];
      const HubChecks checks = check_hubs(unvisited, first, rows, hubs, frontier, [&](int bit, V) {
        word_parents[bit] = static_cast<std::int64_t>(
            source_base + hub_original[rows.position(first + static_cast<std::uint64_t>(bit))]);
      });
      hub_checks += static_cast<std::uint64_t>(std::popcount(unvisited));
      lists += static_cast<std::uint64_t>(std::popcount(checks.scans));
      std::array<std::uint64_t, 64> found_from;  // the parents' positions in source_original
      const std::uint64_t listed =
          scan_lists<V>(checks.scans, first, rows, frontier, entries, [&](int bit, V source_local) {
            const std::uint64_t at = source_rank.position(source_local);
            __builtin_prefetch(source_original + at);
            found_from[static_cast<std::size_t>(bit)] = at;
          });
      for (std::uint64_t bits = listed; bits != 0; bits &= bits - 1) {
        const auto bit = static_cast<std::size_t>(std::countr_zero(bits));
        word_parents[bit] = static_cast<std::int64_t>(source_base + source_original[found_from[bit]]);
      }
      const std::uint64_t found = checks.found | listed;
      // Every owned word is written here, so next_ needs no clearing first.
      next[owned_word] = found;
      visited[owned_word] |= found;
    }
  });
  metrics_.add_work(WorkKind::kBitmapWords, static_cast<std::uint64_t>(words_per_block));
  metrics_.add_work(WorkKind::kHubChecks, hub_checks);
  metrics_.add_work(WorkKind::kLists, lists);
  metrics_.add_work(WorkKind::kListEntries, entries);
}

template <class V>
void DistributedBfs<V>::copy_visited(std::span<std::uint64_t> held) {
  std::copy_n(visited_.data(), held.size(), held.data());
  metrics_.add_work(WorkKind::kBitmapWords, held.size());
}

template <class V>
void DistributedBfs<V>::search_piece(const TraversalLayout& layout, std::span<const std::uint64_t> gathered, int member,
                                     std::span<std::uint64_t> piece_visited, OutgoingBuilder& builder) {
  const LocalCsr<V>& graph = graph_.for_layout(layout);
  const std::uint64_t* frontier = gathered.empty() ? frontier_.data() : gathered.data();
  const std::size_t first_word = static_cast<std::size_t>(member) * grid_.blocks().words_per_block();
  const V* hubs = hub_.data();
  const std::uint64_t* rows_with_edges = target_rows_with_edges_.data() + first_word;
  V* sent_parent = sent_parent_.data();
  const RowRank reported = reported_;
  const PieceGroup target = layout.target;
  const auto words = static_cast<std::int64_t>(piece_visited.size());
  std::uint64_t hub_checks = 0;
  std::uint64_t lists = 0;
  std::uint64_t entries = 0;
  std::uint64_t queued = 0;
  graph.with_rows([&](const auto& rows) {
#pragma omp parallel
    {
      const int t = omp_get_thread_num();
      ScanWork work;
      std::uint64_t found = 0;
#pragma omp for schedule(dynamic, 64) nowait
      for (std::int64_t w = 0; w < words; ++w) {
        const auto i = static_cast<std::size_t>(w);
        const std::size_t word = first_word + i;
        piece_visited[i] |= scan_unvisited(~piece_visited[i] & rows_with_edges[i], word * 64, rows, hubs, frontier,
                                           work, [&](int bit, V source_local) {
                                             const std::uint64_t target_local =
                                                 word * 64 + static_cast<std::uint64_t>(bit);
                                             sent_.set(target_local);
                                             sent_parent[reported.position(target_local)] = source_local;
                                             builder.bucket(t, member).push_back(target.to_global(target_local));
                                             ++found;
                                           });
      }
#pragma omp atomic
      hub_checks += work.hub_checks;
#pragma omp atomic
      lists += work.lists;
#pragma omp atomic
      entries += work.entries;
#pragma omp atomic
      queued += found;
    }
  });
  metrics_.add_work(WorkKind::kBitmapWords, piece_visited.size());
  metrics_.add_work(WorkKind::kHubChecks, hub_checks);
  metrics_.add_work(WorkKind::kLists, lists);
  metrics_.add_work(WorkKind::kListEntries, entries);
  metrics_.add_work(WorkKind::kQueued, queued);
}

template <class V>
void DistributedBfs<V>::claim(const IncomingIds& incoming, const FoldMode& mode) {
  std::int64_t* parent = sorted_parents_.data();
  for (int s = 0; s < incoming.num_sources(); ++s) {
    const std::span<const std::uint64_t> ids = incoming.from(s);
    metrics_.add_work(WorkKind::kArrivals, ids.size());
    const auto count = static_cast<std::int64_t>(ids.size());
    // Forking threads costs more than claiming a few thousand ids.
    const bool parallel = count > 4096;
    const bool shared = parallel && omp_get_max_threads() > 1;
#pragma omp parallel for schedule(static) if (parallel)
    for (std::int64_t i = 0; i < count; ++i) {
      const std::uint64_t offset = ids[static_cast<std::size_t>(i)] - first_vertex_;
      if (visited_.claim(offset, shared)) {
        parent[offset] = -2 - s;
        next_.claim(offset, shared);
        // The predecessor reduction asks s for these, without scanning the whole piece.
        if (mode.reduce_after) claims_.bucket(omp_get_thread_num(), s).push_back(first_vertex_ + offset);
      }
    }
  }
}

template <class V>
LevelCounts DistributedBfs<V>::count_level(bool with_edges) {
  frontier_.swap(next_);
  const std::span<const std::uint64_t> degree = graph_.owned_degree();
  std::uint64_t vertices = 0;
  std::uint64_t edges = 0;
  // A pruned search's depth: the tallest tree hanging below this level's vertices.
  std::uint64_t tallest = 0;
  const std::uint64_t* trees = pruned_search_ ? forest_->has_trees().data() : nullptr;
  const auto words = static_cast<std::int64_t>(frontier_.num_words());
  // Waking the other threads costs more than counting a few hundred KiB alone.
#pragma omp parallel for schedule(static) reduction(+ : vertices, edges) reduction(max : tallest) if (words > (1 << 16))
  for (std::int64_t w = 0; w < words; ++w) {
    const std::uint64_t bits_in_word = frontier_.word(static_cast<std::size_t>(w));
    vertices += static_cast<std::uint64_t>(std::popcount(bits_in_word));
    if (trees != nullptr) {
      for (std::uint64_t bits = bits_in_word & trees[w]; bits != 0; bits &= bits - 1) {
        tallest = std::max<std::uint64_t>(tallest, forest_->height(static_cast<std::uint64_t>(w) * 64 +
                                                                   static_cast<std::uint64_t>(std::countr_zero(bits))));
      }
    }
    if (!with_edges) continue;
    for (std::uint64_t bits = bits_in_word; bits != 0; bits &= bits - 1) {
      edges += degree[static_cast<std::size_t>(w) * 64 + static_cast<std::size_t>(std::countr_zero(bits))];
    }
  }
  if (pruned_search_) pruning_.level_counted(vertices, tallest);
  metrics_.add_work(WorkKind::kBitmapWords, frontier_.num_words());
  metrics_.add_work(WorkKind::kClaimed, vertices);
  return {vertices, edges};
}

template <class V>
OutgoingIds DistributedBfs<V>::foreign_claims() {
  OutgoingIds claims = claims_.finish();
  metrics_.add_work(WorkKind::kQueued, claims.ids.size());
  return claims;
}

template <class V>
void DistributedBfs<V>::reported_parents(std::span<const std::uint64_t> vertices, std::span<std::uint64_t> parents) {
  const PieceGroup& targets = grid_.row_group();
  const PieceGroup& sources = grid_.col_group();
  const auto count = static_cast<std::int64_t>(vertices.size());
  bool foreign = false;
#pragma omp parallel for schedule(static) reduction(|| : foreign)
  for (std::int64_t i = 0; i < count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    // Only vertices of this row group were reported from here; another would index past
    // the reported parents.
    if (!targets.contains(vertices[k]) || !reported_.has(targets.to_local(vertices[k]))) {
      foreign = true;
      continue;
    }
    const V source_local = sent_parent_[reported_.position(targets.to_local(vertices[k]))];
    parents[k] = sources.to_global(col_original_[col_original_rank_.position(source_local)]);
  }
  metrics_.add_work(WorkKind::kArrivals, vertices.size());
  if (foreign) throw Error(ExitCode::kFailure, "predecessor reduction: asked for a vertex this rank never reported");
}

template <class V>
void DistributedBfs<V>::set_parents(std::span<const std::uint64_t> vertices, std::span<const std::uint64_t> parents) {
  for (std::size_t k = 0; k < vertices.size(); ++k) {
    sorted_parents_[vertices[k] - first_vertex_] = static_cast<std::int64_t>(parents[k]);
  }
  metrics_.add_work(WorkKind::kArrivals, vertices.size());
}

template <class V>
void DistributedBfs<V>::gather_has_edges(const Communicator& comm, Bitmap& has_edges, bool core_only) const {
  const ScopedPhase phase(metrics_, Phase::kConstruction);
  zbfs::gather_has_edges(
      graph_, comm, grid_.blocks().words_per_block(),
      [this, core_only](std::size_t v) { return core_only && forest_->peeled(v); },
      std::span<std::uint64_t>(has_edges.data(), has_edges.num_words()));
}

template <class V>
void DistributedBfs<V>::build_hubs(const TraversalLayout& layout) {
  const ScopedPhase phase(metrics_, Phase::kConstruction);
  // A peeled vertex is never in a pruned search's frontier: a hub is a core neighbour.
  hub_ = bottom_up_hubs(graph_, layout, [this](std::size_t v) { return forest_ != nullptr && forest_->peeled(v); });
  // The hubs' original ids, read in step with the hubs where a parent is written.
  hub_original_ = LargeArray<V>(hub_.size());  // by position, as the hubs
  const auto targets = static_cast<std::int64_t>(hub_.size());
  // A row without neighbours has hub 0, which a table by position may not hold: its
  // entry is never read.
  const RowRank source_rank = bottom_up_source_rank_;
  const std::uint64_t sources =
      grid_layout(grid_.partition()) ? graph_.col_group_original().size() : graph_.row_group_original().size();
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < targets; ++v) {
    const std::uint64_t at = source_rank.position(hub_[v]);
    hub_original_[v] = at < sources ? bottom_up_source_original_[at] : V{0};
  }
  target_rows_with_edges_ = graph_.for_layout(layout).with_rows(
      [&](const auto& rows) { return rows_with_edges(rows, layout.target.local_size()); });
}

template <class V>
void DistributedBfs<V>::keep_reported_parents(const TraversalLayout& top_down) {
  const ScopedPhase phase(metrics_, Phase::kConstruction);
  const std::uint64_t targets = grid_.row_group().local_size();
  if (!graph_.may_keep_sparse()) {
    sent_parent_ = LargeArray<V>(targets);
    return;
  }
  // The row-group vertices this rank can report: its top-down lists' neighbours (in 2D,
  // the rows of its transposed lists, which bottom-up ring steps report from).
  Bitmap reported(targets);
  const LocalCsr<V>& csr = graph_.for_layout(top_down);
  csr.with_positions([&](const auto& lists) {
    const auto rows = static_cast<std::int64_t>(csr.positions());
#pragma omp parallel for schedule(dynamic, 1024)
    for (std::int64_t k = 0; k < rows; ++k) {
      lists.scan(static_cast<std::uint64_t>(k), [&](V target) {
        reported.claim(target, true);
        return false;
      });
    }
  });
  const std::uint64_t present = reported.count();
  if (!graph_.sparse_pays_here(present, targets, sizeof(V))) {
    sent_parent_ = LargeArray<V>(targets);
    return;
  }
  reported_index_ = RowIndex(std::move(reported));
  reported_ = reported_index_.rank();
  sent_parent_ = LargeArray<V>(reported_index_.count());
}

template class DistributedBfs<std::uint32_t>;
template class DistributedBfs<std::uint64_t>;

}  // namespace zbfs
