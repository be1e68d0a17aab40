#include "zbfs/bfs/direction_optimizing_bfs.hpp"

#include <omp.h>

#include <array>
#include <atomic>
#include <bit>
#include <cstring>

#include "zbfs/bfs/direction_policy.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/graph/hub_neighbors.hpp"

namespace zbfs {
namespace {

// Per-thread staging buffer for discovered vertices, flushed to a shared array in bulk
// so that threads contend on the shared tail only once per kCapacity vertices.
template <class V>
class LocalQueue {
 public:
  LocalQueue(V* shared, std::uint64_t* shared_size) : shared_(shared), shared_size_(shared_size) {}
  void push(V v) {
    items_[count_++] = v;
    if (count_ == kCapacity) flush();
  }
  void flush() {
    if (count_ == 0) return;
    const std::uint64_t at = std::atomic_ref<std::uint64_t>(*shared_size_).fetch_add(count_, std::memory_order_relaxed);
    std::memcpy(shared_ + at, items_.data(), count_ * sizeof(V));
    count_ = 0;
  }

 private:
  static constexpr std::size_t kCapacity = 2048;
  std::array<V, kCapacity> items_{};
  std::size_t count_ = 0;
  V* shared_;
  std::uint64_t* shared_size_;
};

// parent[child] = by, both in the input's ids: `original` maps internal ids to them, or
// is nullptr when the graph keeps the input's ids.
template <class V>
void set_parent(std::int64_t* parent, const V* original, V child, V by) {
  if (original != nullptr) {
    parent[original[child]] = static_cast<std::int64_t>(original[by]);
  } else {
    parent[child] = static_cast<std::int64_t>(by);
  }
}

}  // namespace

template <class V>
DirectionOptimizingBfs<V>::DirectionOptimizingBfs(const Csr<V>& graph)
    : graph_(graph),
      original_(graph.original_ids()),
      visited_(graph.num_vertices()),
      front_(graph.num_vertices()),
      next_(graph.num_vertices()),
      queue_(graph.num_vertices()),
      next_queue_(graph.num_vertices()) {
  const std::uint64_t* off = graph.offsets();
  // A vertex without edges gets hub 0, which no search reads: it starts every search visited.
  hub_ = hub_neighbors<V>(
      off, graph.neighbor_data(), graph.num_vertices(), [off](V w) { return off[w + 1] - off[w]; }, V{0});
  edgeless_ = rows_with_edges(off, graph.num_vertices());
  for (std::size_t w = 0; w < edgeless_.num_words(); ++w) {
    if (edgeless_.word(w) != 0) words_with_edges_ = w + 1;
    edgeless_.word(w) = ~edgeless_.word(w);
  }
}

template <class V>
std::uint64_t DirectionOptimizingBfs<V>::top_down_step(std::int64_t* parent, std::uint64_t& scout_count) {
  const std::uint64_t* off = graph_.offsets();
  const V* adj = graph_.neighbor_data();
  const V* queue = queue_.data();
  const V* original = original_;
  const auto size = static_cast<std::int64_t>(queue_size_);
  std::uint64_t next_size = 0;
  std::uint64_t scout = 0;
  const bool shared = omp_get_max_threads() > 1;
#pragma omp parallel reduction(+ : scout)
  {
    LocalQueue<V> local(next_queue_.data(), &next_size);
#pragma omp for schedule(dynamic, 64) nowait
    for (std::int64_t i = 0; i < size; ++i) {
      const V u = queue[i];
      for (std::uint64_t e = off[u], end = off[u + 1]; e < end; ++e) {
        const V v = adj[e];
        if (visited_.claim(v, shared)) {
          set_parent(parent, original, v, u);
          local.push(v);
          scout += off[v + 1] - off[v];
        }
      }
    }
    local.flush();
  }
  queue_.swap(next_queue_);
  queue_size_ = next_size;
  scout_count = scout;
  return next_size;
}

template <class V>
std::uint64_t DirectionOptimizingBfs<V>::bottom_up_step(std::int64_t* parent) {
  const std::uint64_t* off = graph_.offsets();
  const V* adj = graph_.neighbor_data();
  const V* hubs = hub_.data();
  const V* original = original_;
  const auto words = static_cast<std::int64_t>(words_with_edges_);
  std::uint64_t awake = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : awake)
  for (std::int64_t w = 0; w < words; ++w) {
    const auto word = static_cast<std::size_t>(w);
    std::uint64_t unvisited = ~visited_.word(word) & visited_.valid_mask(word);
    std::uint64_t found = 0;
    while (unvisited != 0) {
      const int bit = std::countr_zero(unvisited);
      unvisited &= unvisited - 1;
      const std::uint64_t u = static_cast<std::uint64_t>(w) * 64 + static_cast<std::uint64_t>(bit);
      const auto claim = [&](V v) {
        set_parent(parent, original, static_cast<V>(u), v);
        found |= std::uint64_t{1} << bit;
      };
      // The hub first: on a Kronecker graph it finds most parents without the list.
      if (const V hub = hubs[u]; front_.test(hub)) {
        claim(hub);
        continue;
      }
      for (std::uint64_t e = off[u], end = off[u + 1]; e < end; ++e) {
        if (const V v = adj[e]; front_.test(v)) {
          claim(v);
          break;
        }
      }
    }
    next_.word(word) = found;
    visited_.word(word) |= found;
    awake += static_cast<std::uint64_t>(std::popcount(found));
  }
  front_.swap(next_);
  return awake;
}

template <class V>
void DirectionOptimizingBfs<V>::queue_to_front_bitmap() {
  front_.clear();
  const V* queue = queue_.data();
  const auto size = static_cast<std::int64_t>(queue_size_);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < size; ++i) front_.set_atomic(queue[i]);
}

template <class V>
void DirectionOptimizingBfs<V>::front_bitmap_to_queue() {
  // Only words_with_edges_: a step reaches nobody past them, and the words there may hold
  // an edgeless root of an earlier step, which bottom-up steps leave in place.
  const auto words = static_cast<std::int64_t>(words_with_edges_);
  std::uint64_t size = 0;
#pragma omp parallel
  {
    LocalQueue<V> local(queue_.data(), &size);
#pragma omp for schedule(static) nowait
    for (std::int64_t w = 0; w < words; ++w) {
      std::uint64_t bits = front_.word(static_cast<std::size_t>(w));
      while (bits != 0) {
        const int bit = std::countr_zero(bits);
        bits &= bits - 1;
        local.push(static_cast<V>(static_cast<std::uint64_t>(w) * 64 + static_cast<std::uint64_t>(bit)));
      }
    }
    local.flush();
  }
  queue_size_ = size;
}

template <class V>
BfsStats DirectionOptimizingBfs<V>::run(std::uint64_t root, std::span<std::int64_t> parent_out,
                                        const BfsOptions& options) {
  const std::uint64_t n = graph_.num_vertices();
  if (parent_out.size() != n) throw Error(ExitCode::kFailure, "parent array size does not match the graph");
  if (root >= n) throw Error(ExitCode::kFailure, "BFS root out of range");
  BfsStats stats;
  std::int64_t* parent = parent_out.data();

  Stopwatch clock;
  const auto vertices = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < vertices; ++v) parent[v] = -1;
  // Vertices without edges start visited: bottom-up steps then skip them (parent stays -1).
  std::memcpy(visited_.data(), edgeless_.data(), visited_.num_words() * sizeof(std::uint64_t));
  stats.init_time_s = clock.elapsed_s();

  parent[root] = static_cast<std::int64_t>(root);
  const std::uint64_t start = graph_.internal_id(root);
  visited_.set(start);
  queue_[0] = static_cast<V>(start);
  queue_size_ = 1;
  DirectionPolicy policy(options, n, graph_.num_directed_edges(), graph_.degree(start));

  while (queue_size_ > 0) {
    if (policy.go_bottom_up()) {
      clock.restart();
      queue_to_front_bitmap();
      stats.conversion_time_s += clock.elapsed_s();
      std::uint64_t awake = queue_size_;
      std::uint64_t previous_awake = 0;
      do {
        previous_awake = awake;
        clock.restart();
        awake = bottom_up_step(parent);
        const double t = clock.elapsed_s();
        stats.steps.push_back({StepKind::kBottomUp, previous_awake, awake, t});
        stats.bottom_up_time_s += t;
      } while (policy.stay_bottom_up(awake, previous_awake));
      clock.restart();
      front_bitmap_to_queue();
      stats.conversion_time_s += clock.elapsed_s();
      policy.bottom_up_done();
    } else {
      const std::uint64_t frontier = queue_size_;
      clock.restart();
      std::uint64_t frontier_edges = 0;
      const std::uint64_t discovered = top_down_step(parent, frontier_edges);
      policy.top_down_done(frontier_edges);
      const double t = clock.elapsed_s();
      stats.steps.push_back({StepKind::kTopDown, frontier, discovered, t});
      stats.top_down_time_s += t;
    }
  }
  return stats;
}

template class DirectionOptimizingBfs<std::uint32_t>;
template class DirectionOptimizingBfs<std::uint64_t>;

}  // namespace zbfs
