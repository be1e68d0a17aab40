#include "zbfs/bfs/direction_optimizing_bfs.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

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

// Blocks of a list (kGapBlock ids each) that one thread reads in a top-down step; longer
// lists are shared out in shares of this many blocks.
constexpr std::uint64_t kHeavyBlocks = 16;

// Below this much work a step runs on the calling thread alone. A parallel region costs
// a fork and a join, and libgomp's threads wait for each other spinning: where another
// process holds a core (ctest -j, a shared node), each join can wait for a whole time
// slice of the thread that was descheduled. A search of a long path has a step per
// vertex, each reading two edges; with 2 threads beside a competing load it took minutes
// instead of milliseconds.
constexpr std::uint64_t kParallelEdges = 4096;  // a top-down step's frontier edges
constexpr std::uint64_t kParallelWords = 64;    // bitmap words a bottom-up step scans
constexpr std::uint64_t kParallelItems = 4096;  // vertices converted or attached

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

// Every entry -1: nothing reached.
void fill_unreached(std::int64_t* parent, std::uint64_t n) {
  const auto vertices = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static) if (n >= kParallelItems)
  for (std::int64_t v = 0; v < vertices; ++v) parent[v] = -1;
}

}  // namespace

template <class V>
DirectionOptimizingBfs<V>::DirectionOptimizingBfs(const VertexTables<V>& graph, const Csr<V>* plain,
                                                  const CompressedCsr<V>* packed, std::uint64_t directed_edges,
                                                  const PeeledForest<V>* forest)
    : graph_(graph),
      plain_(plain),
      packed_(packed),
      num_directed_edges_(directed_edges),
      forest_(forest),
      original_(graph.original_ids()),
      visited_(graph.num_vertices()),
      front_(graph.num_vertices()),
      next_(graph.num_vertices()),
      queue_(graph.num_vertices()),
      next_queue_(graph.num_vertices()),
      parent_(graph.num_vertices()) {
  fill_unreached(parent_.data(), graph.num_vertices());
  if (forest != nullptr && forest->num_vertices() != graph.num_vertices())
    throw Error(ExitCode::kFailure, "the peeled forest belongs to another graph");
  with_rows([this](const auto& rows) { find_hubs(rows); });
}

template <class V>
DirectionOptimizingBfs<V>::DirectionOptimizingBfs(const CompressedCsr<V>& graph)
    : DirectionOptimizingBfs(graph, nullptr, &graph, graph.num_directed_edges(), nullptr) {}

template <class V>
template <class Rows>
void DirectionOptimizingBfs<V>::find_hubs(const Rows& rows) {
  // A vertex without edges gets hub 0, which no search reads: it starts every search
  // visited. With a forest the hub is a core neighbour (a peeled one is never in a pruned
  // search's frontier); every core vertex has one.
  const PeeledForest<V>* forest = forest_;
  const auto weight = [&rows, forest](V w) -> std::uint64_t {
    return forest != nullptr && forest->peeled(w) ? 0 : rows.degree(w);
  };
  hub_ = hub_neighbors<V>(rows, graph_.num_vertices(), weight, V{0});
  edgeless_ = rows_with_edges(rows, graph_.num_vertices());
  for (std::size_t w = 0; w < edgeless_.num_words(); ++w) {
    if (edgeless_.word(w) != 0) words_with_edges_ = w + 1;
    edgeless_.word(w) = ~edgeless_.word(w);
  }
}

template <class V>
DirectionOptimizingBfs<V>::DirectionOptimizingBfs(const Csr<V>& graph, const PeeledForest<V>* forest)
    : DirectionOptimizingBfs(graph, &graph, nullptr, graph.num_directed_edges(), forest) {
  if (forest != nullptr) {
    pruned_ = forest->start_visited(edgeless_);
    // Each peeled vertex's parent (in the input's ids) and anchor, the core vertex its
    // tree hangs from, in the forest's order.
    forest->attach_tables(original_, attach_parent_, attach_anchor_);
  }
}

template <class V>
template <class Rows>
std::uint64_t DirectionOptimizingBfs<V>::top_down_step(const Rows& rows, std::int64_t* parent,
                                                       std::uint64_t& scout_count, const std::uint8_t* height,
                                                       std::uint8_t& tallest) {
  const V* queue = queue_.data();
  const V* original = original_;
  const auto size = static_cast<std::int64_t>(queue_size_);
  std::uint64_t next_size = 0;
  std::uint64_t scout = 0;
  std::uint8_t tall = tallest;
  // Threads share the step (and claims need the locked set) only when it is large enough.
  const bool shared = queue_edges_ >= kParallelEdges && omp_get_max_threads() > 1;
  // The lists of more than kHeavyBlocks blocks, (vertex, first block) per share of
  // kHeavyBlocks, read by all threads once the rest of the frontier is done: the few hubs
  // of an early step would otherwise leave all their work to one thread.
  std::vector<std::pair<V, std::uint64_t>> heavy_shares;
#pragma omp parallel if (shared) reduction(+ : scout) reduction(max : tall)
  {
    LocalQueue<V> local(next_queue_.data(), &next_size);
    std::vector<std::pair<V, std::uint64_t>> heavy;
    const auto visit_from = [&](V u) {
      return [&, u](V v) {
        if (visited_.claim(v, shared)) {
          set_parent(parent, original, v, u);
          local.push(v);
          scout += rows.degree(v);
          if (height != nullptr) tall = std::max(tall, height[v]);
        }
        return false;
      };
    };
#pragma omp for schedule(dynamic, 64) nowait
    for (std::int64_t i = 0; i < size; ++i) {
      const V u = queue[i];
      if (const std::uint64_t blocks = gap_blocks(rows.degree(u)); blocks > kHeavyBlocks) {
        for (std::uint64_t b = 0; b < blocks; b += kHeavyBlocks) heavy.emplace_back(u, b);
        continue;
      }
      rows.scan(u, visit_from(u));
    }
    if (!heavy.empty()) {
#pragma omp critical
      heavy_shares.insert(heavy_shares.end(), heavy.begin(), heavy.end());
    }
#pragma omp barrier
    const auto shares = static_cast<std::int64_t>(heavy_shares.size());
#pragma omp for schedule(dynamic, 1) nowait
    for (std::int64_t i = 0; i < shares; ++i) {
      const auto [u, first] = heavy_shares[static_cast<std::size_t>(i)];
      rows.scan_blocks(u, first, first + kHeavyBlocks, visit_from(u));
    }
    local.flush();
  }
  queue_.swap(next_queue_);
  queue_size_ = next_size;
  queue_edges_ = scout;
  scout_count = scout;
  tallest = tall;
  return next_size;
}

template <class V>
template <class Rows>
std::uint64_t DirectionOptimizingBfs<V>::bottom_up_step(const Rows& rows, std::int64_t* parent,
                                                        const std::uint8_t* height, std::uint8_t& tallest) {
  const V* hubs = hub_.data();
  const V* original = original_;
  const auto words = static_cast<std::int64_t>(words_with_edges_);
  std::uint64_t awake = 0;
  std::uint8_t tall = tallest;
#pragma omp parallel for schedule(dynamic, 64) if (words_with_edges_ >= kParallelWords) reduction(+ : awake) \
    reduction(max : tall)
  for (std::int64_t w = 0; w < words; ++w) {
    const auto word = static_cast<std::size_t>(w);
    std::uint64_t unvisited = ~visited_.word(word) & visited_.valid_mask(word);
    std::uint64_t found = 0;
    std::uint64_t scans = 0;
    const auto claim = [&](int bit, V v) {
      const std::uint64_t u = static_cast<std::uint64_t>(w) * 64 + static_cast<std::uint64_t>(bit);
      set_parent(parent, original, static_cast<V>(u), v);
      found |= std::uint64_t{1} << bit;
      if (height != nullptr) tall = std::max(tall, height[u]);
    };
    while (unvisited != 0) {
      const int bit = std::countr_zero(unvisited);
      unvisited &= unvisited - 1;
      const std::uint64_t u = static_cast<std::uint64_t>(w) * 64 + static_cast<std::uint64_t>(bit);
      // The hub first: on a Kronecker graph it finds most parents without the list.
      if (const V hub = hubs[u]; front_.test(hub)) {
        claim(bit, hub);
        continue;
      }
      scans |= std::uint64_t{1} << bit;
      rows.prefetch(u);
    }
    while (scans != 0) {
      const int bit = std::countr_zero(scans);
      scans &= scans - 1;
      const std::uint64_t u = static_cast<std::uint64_t>(w) * 64 + static_cast<std::uint64_t>(bit);
      rows.scan(u, [&](V v) {
        if (!front_.test(v)) return false;
        claim(bit, v);
        return true;
      });
    }
    next_.word(word) = found;
    visited_.word(word) |= found;
    awake += static_cast<std::uint64_t>(std::popcount(found));
  }
  front_.swap(next_);
  tallest = tall;
  return awake;
}

template <class V>
void DirectionOptimizingBfs<V>::queue_to_front_bitmap() {
  front_.clear();
  const V* queue = queue_.data();
  const auto size = static_cast<std::int64_t>(queue_size_);
#pragma omp parallel for schedule(static) if (queue_size_ >= kParallelItems)
  for (std::int64_t i = 0; i < size; ++i) front_.set_atomic(queue[i]);
}

template <class V>
void DirectionOptimizingBfs<V>::front_bitmap_to_queue() {
  // Only words_with_edges_: a step reaches nobody past them, and the words there may hold
  // an edgeless root of an earlier step, which bottom-up steps leave in place.
  const auto words = static_cast<std::int64_t>(words_with_edges_);
  std::uint64_t size = 0;
#pragma omp parallel if (words_with_edges_ >= kParallelWords)
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
  queue_edges_ = UINT64_MAX;  // not counted: a frontier after bottom-up steps is large
}

template <class V>
std::uint64_t DirectionOptimizingBfs<V>::attach_trees(std::int64_t* parent, const std::vector<V>& chain,
                                                      std::uint64_t root) {
  // A peeled vertex is reached exactly when its anchor is (a core vertex: its visited bit
  // is the search's; a tree component's "anchor" is a peeled vertex, visited from the
  // start, but no search from the core reaches it, so it is skipped).
  const V* original = original_;
  const V* order = forest_->order().data();
  const V* attach_parent = attach_parent_.data();
  const V* anchor = attach_anchor_.data();
  const Bitmap& peeled = forest_->peeled_bits();
  const auto count = static_cast<std::int64_t>(attach_anchor_.size());
  std::uint64_t attached = 0;
#pragma omp parallel for schedule(static) if (attach_anchor_.size() >= kParallelItems) reduction(+ : attached)
  for (std::int64_t i = 0; i < count; ++i) {
    const V a = anchor[i];
    if (peeled.test(a) || !visited_.test(a)) continue;
    const V v = order[i];
    parent[original != nullptr ? original[v] : v] = static_cast<std::int64_t>(attach_parent[i]);
    ++attached;
  }
  // The chain's parents point back towards the root.
  if (!chain.empty()) {
    parent[root] = static_cast<std::int64_t>(root);
    for (std::size_t i = 1; i < chain.size(); ++i) set_parent(parent, original, chain[i], chain[i - 1]);
  }
  return attached;
}

template <class V>
BfsStats DirectionOptimizingBfs<V>::run(std::uint64_t root, std::span<std::int64_t> parent_out,
                                        const BfsOptions& options) {
  const std::uint64_t n = graph_.num_vertices();
  if (parent_out.size() != n) throw Error(ExitCode::kFailure, "parent array size does not match the graph");
  if (root >= n) throw Error(ExitCode::kFailure, "BFS root out of range");
  const Stopwatch clock;
  fill_unreached(parent_out.data(), n);
  const double fill_s = clock.elapsed_s();
  // The visited bitmap will be this search's: it no longer says what parent_ holds.
  clear_all_ = clear_all_ || dirty_;
  BfsStats stats = search(root, parent_out.data(), options);
  stats.init_time_s += fill_s;
  return stats;
}

template <class V>
BfsStats DirectionOptimizingBfs<V>::run(std::uint64_t root, const BfsOptions& options) {
  if (root >= graph_.num_vertices()) throw Error(ExitCode::kFailure, "BFS root out of range");
  const Stopwatch clock;
  clear_parent();  // nothing to do when the caller cleared the last tree
  const double clear_s = clock.elapsed_s();
  BfsStats stats = search(root, parent_.data(), options);
  stats.init_time_s += clear_s;
  dirty_ = true;
  last_root_ = root;
  clear_all_ = forest_ != nullptr;
  last_reached_ = 1;
  for (const BfsStep& step : stats.steps)
    last_reached_ += step.kind == StepKind::kAttach ? 0 : step.discovered_vertices;
  return stats;
}

template <class V>
void DirectionOptimizingBfs<V>::clear_parent() {
  if (!dirty_ && !clear_all_) return;
  std::int64_t* parent = parent_.data();
  const std::uint64_t n = graph_.num_vertices();
  dirty_ = false;
  if (clear_all_ || last_reached_ > n / 32) {
    clear_all_ = false;
    fill_unreached(parent, n);
    return;
  }
  // The reached vertices are visited but did not start so (the edgeless ones did), and
  // all lie in the words with edges; the root may be edgeless.
  parent[last_root_] = -1;
  const V* original = original_;
  const auto words = static_cast<std::int64_t>(words_with_edges_);
#pragma omp parallel for schedule(static) if (words > (1 << 16))
  for (std::int64_t w = 0; w < words; ++w) {
    std::uint64_t bits = visited_.word(static_cast<std::size_t>(w)) & ~edgeless_.word(static_cast<std::size_t>(w));
    while (bits != 0) {
      const auto v =
          static_cast<V>(static_cast<std::uint64_t>(w) * 64 + static_cast<std::uint64_t>(std::countr_zero(bits)));
      bits &= bits - 1;
      parent[original != nullptr ? original[v] : v] = -1;
    }
  }
}

template <class V>
BfsStats DirectionOptimizingBfs<V>::search(std::uint64_t root, std::int64_t* parent, const BfsOptions& options) {
  const std::uint64_t n = graph_.num_vertices();
  BfsStats stats;
  Stopwatch clock;
  // Where the search starts: the root, or for a pruned search from a peeled root the core
  // vertex at the end of its chain (root first, the core vertex not included).
  V start = static_cast<V>(graph_.internal_id(root));
  std::vector<V> chain;
  bool pruned = false;
  if (forest_ != nullptr) {
    // A tree that hangs from no core vertex is searched whole.
    if (const std::optional<V> core = forest_->core_start(start, chain)) {
      pruned = true;
      start = *core;
    }
  }
  // Vertices without edges (and a pruned search's peeled ones) start visited: bottom-up
  // steps then skip them (parent stays -1 until the attach step).
  const Bitmap& starts_visited = pruned ? pruned_ : edgeless_;
  std::memcpy(visited_.data(), starts_visited.data(), visited_.num_words() * sizeof(std::uint64_t));
  stats.init_time_s = clock.elapsed_s();

  parent[root] = static_cast<std::int64_t>(root);
  if (!chain.empty()) set_parent(parent, original_, start, chain.back());
  visited_.set(start);
  queue_[0] = start;
  queue_size_ = 1;
  queue_edges_ = with_rows([start](const auto& rows) { return rows.degree(start); });
  DirectionPolicy policy(options, pruned ? forest_->core_vertices() : n,
                         pruned ? forest_->core_directed_edges() : num_directed_edges_, queue_edges_);
  // A pruned search's depth: each level's vertices with the trees hanging from them.
  const std::uint8_t* height = pruned ? forest_->heights() : nullptr;
  std::uint64_t level = chain.size();
  std::uint64_t deepest = pruned ? forest_->chain_depth(plain_->offsets(), plain_->neighbor_data(), chain, start) : 0;
  const auto discovered_level = [&](std::uint64_t discovered, std::uint8_t tallest) {
    ++level;
    if (discovered > 0) deepest = std::max(deepest, level + tallest);
  };

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
        std::uint8_t tallest = 0;
        awake = with_rows([&](const auto& rows) { return bottom_up_step(rows, parent, height, tallest); });
        const double t = clock.elapsed_s();
        stats.steps.push_back({StepKind::kBottomUp, previous_awake, awake, t});
        stats.bottom_up_time_s += t;
        discovered_level(awake, tallest);
      } while (policy.stay_bottom_up(awake, previous_awake));
      clock.restart();
      front_bitmap_to_queue();
      stats.conversion_time_s += clock.elapsed_s();
      policy.bottom_up_done();
    } else {
      const std::uint64_t frontier = queue_size_;
      clock.restart();
      std::uint64_t frontier_edges = 0;
      std::uint8_t tallest = 0;
      const std::uint64_t discovered =
          with_rows([&](const auto& rows) { return top_down_step(rows, parent, frontier_edges, height, tallest); });
      policy.top_down_done(frontier_edges);
      const double t = clock.elapsed_s();
      stats.steps.push_back({StepKind::kTopDown, frontier, discovered, t});
      stats.top_down_time_s += t;
      discovered_level(discovered, tallest);
    }
  }
  if (pruned) {
    clock.restart();
    const std::uint64_t attached = attach_trees(parent, chain, root);
    const double t = clock.elapsed_s();
    stats.steps.push_back({StepKind::kAttach, 0, attached, t});
    stats.attach_time_s = t;
    stats.depth = deepest;
  }
  return stats;
}

template class DirectionOptimizingBfs<std::uint32_t>;
template class DirectionOptimizingBfs<std::uint64_t>;

}  // namespace zbfs
