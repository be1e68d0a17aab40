#include <thrust/fill.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/scan.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <cuda/std/bit>
#include <cuda/std/functional>
#include <optional>
#include <string>
#include <utility>

#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/cuda/bitmap_kernels.cuh"
#include "zbfs/backend/cuda/device_bfs.hpp"
#include "zbfs/backend/cuda/device_level_loop.cuh"
#include "zbfs/backend/cuda/launch.cuh"
#include "zbfs/backend/cuda/resident_lists.cuh"
#include "zbfs/backend/cuda/search_kernels.cuh"
#include "zbfs/bfs/direction_policy.hpp"
#include "zbfs/core/timer.hpp"

namespace zbfs::cuda_backend {
namespace {

// The host-driven loop's other bodies. Each is correct for any order of its indices.

struct FoldWord {
  std::uint64_t* visited;
  const std::uint64_t* next;
  ZBFS_HD void operator()(std::uint64_t w) const { visited[w] |= next[w]; }
};

// A pruned search's depth: the tallest tree hanging below a level's vertices, over the
// queue (top-down) or the discovered bits (bottom-up).
struct QueueHeight {
  const std::uint8_t* height;
  ZBFS_HD std::uint32_t operator()(Vertex v) const { return height[v]; }
};

// The attach step, one index per peeled vertex (the forest's order): a vertex is reached
// exactly when its anchor is, a core vertex the search visited (a tree component's
// anchor is peeled: never).
struct AnchorReached {
  const Vertex* anchor;
  const std::uint64_t* pruned;
  const std::uint64_t* visited;
  ZBFS_HD bool operator()(std::uint64_t i) const {
    const Vertex a = anchor[i];
    return (pruned[a >> 6] & bit_of(a)) == 0 && (visited[a >> 6] & bit_of(a)) != 0;
  }
};

struct AttachTree {
  AnchorReached reached;
  const Vertex* order;
  const Vertex* attach_parent;
  const Vertex* original;
  std::int64_t* parent;
  ZBFS_HD void operator()(std::uint64_t i) const {
    if (reached(i)) parent[input_id(original, order[i])] = static_cast<std::int64_t>(attach_parent[i]);
  }
};

struct CountReached {
  AnchorReached reached;
  ZBFS_HD std::uint64_t operator()(std::uint64_t i) const { return reached(i) ? 1 : 0; }
};

// Each row's hub, as hub_neighbors finds it on the host (graph/hub_neighbors.hpp): the
// neighbour of highest degree (0 for one a pruned search starts visited), the first in
// list order among equals; 0 for a row without neighbours. A neighbour's key is its
// weight above its position in the row, complemented below so that the first of equals
// is the largest (a degree and a position both fit 32 bits: fewer than 2^32 vertices).
// One index per kHubChunk list entries: the chunk's first row found by binary search,
// then each row it spans folded into that row's key with one atomic max, so a hub row of
// millions of entries spreads over many indices and contends on its key once per chunk.
constexpr std::uint64_t kHubChunk = 256;

struct HubKeys {
  const std::uint64_t* offsets;
  const Vertex* neighbors;
  const std::uint64_t* weightless;  // bits of neighbours weighing 0 (a pruned search's start-visited); or nullptr
  std::uint64_t rows;
  std::uint64_t entries;
  std::uint64_t* keys;
  ZBFS_HD void operator()(std::uint64_t chunk) const {
    std::uint64_t e = chunk * kHubChunk;
    const std::uint64_t end = e + kHubChunk < entries ? e + kHubChunk : entries;
    for (std::uint64_t row = entry_of_edge(offsets, rows, e); e < end; ++row) {
      const std::uint64_t first = offsets[row];
      const std::uint64_t row_end = offsets[row + 1] < end ? offsets[row + 1] : end;
      std::uint64_t best = 0;
      for (; e < row_end; ++e) {
        const Vertex w = neighbors[e];
        const std::uint64_t weight = weightless != nullptr && test_bit(weightless, w) ? 0 : offsets[w + 1] - offsets[w];
        const std::uint64_t key = weight << 32 | (0xFFFFFFFFULL - (e - first));
        best = key > best ? key : best;
      }
      auto word = shared_word(keys[row]);
      if (best > word.load(cuda::std::memory_order_relaxed)) word.fetch_max(best, cuda::std::memory_order_relaxed);
    }
  }
};

struct HubFromKey {
  const std::uint64_t* offsets;
  const Vertex* neighbors;
  const std::uint64_t* keys;
  Vertex* hubs;
  ZBFS_HD void operator()(std::uint64_t row) const {
    const std::uint64_t key = keys[row];
    hubs[row] = key == 0 ? 0 : neighbors[offsets[row] + (0xFFFFFFFFULL - (key & 0xFFFFFFFFULL))];
  }
};

}  // namespace

struct DeviceBfs::State {
  State(ExecutionTarget target, const HostGraphView& g, const HostForestView* forest, LevelLoop loop)
      : stream(target),
        n(g.num_vertices),
        words((g.num_vertices + 63) / 64),
        words_with_edges(g.words_with_edges),
        directed_edges(g.offsets[g.num_vertices]),
        offsets(g.resident ? std::move(g.resident->offsets) : DeviceArray<std::uint64_t>(target, n + 1)),
        neighbors(g.resident ? std::move(g.resident->neighbors) : DeviceArray<Vertex>(target, directed_edges)),
        hubs(target, n),
        original(g.resident ? std::move(g.resident->original)
                            : DeviceArray<Vertex>(target, g.original != nullptr ? n : 0)),
        edgeless(target, words),
        visited(target, words),
        front(target, words),
        next(target, words),
        queue(target, n),
        next_queue(target, n),
        scan(target, std::max(n + 1, words + 2)),
        parent(target, n),
        pruned(target, forest != nullptr ? words : 0),
        peeled_order(target, forest != nullptr ? forest->num_peeled : 0),
        peeled_anchor(target, forest != nullptr ? forest->num_peeled : 0),
        peeled_parent(target, forest != nullptr ? forest->num_peeled : 0),
        height(target, forest != nullptr ? n : 0) {
    if (!g.resident) {
      traffic.to_device += offsets.upload(stream, g.offsets, n + 1);
      traffic.to_device += neighbors.upload(stream, g.neighbors, directed_edges);
      if (g.original != nullptr) traffic.to_device += original.upload(stream, g.original, n);
    } else if (g.resident->num_vertices != n || offsets.size() != n + 1 || neighbors.size() < directed_edges ||
               (g.original != nullptr) != (original.size() == n)) {
      throw Error(ExitCode::kFailure, "the lists left on the target are another graph's");
    }
    traffic.to_device += edgeless.upload(stream, g.edgeless, words);
    if (forest != nullptr) {
      has_forest = true;
      core_vertices = forest->core_vertices;
      core_directed_edges = forest->core_directed_edges;
      traffic.to_device += pruned.upload(stream, forest->pruned, words);
      traffic.to_device += peeled_order.upload(stream, forest->order, forest->num_peeled);
      traffic.to_device += peeled_anchor.upload(stream, forest->anchor, forest->num_peeled);
      traffic.to_device += peeled_parent.upload(stream, forest->parent, forest->num_peeled);
      traffic.to_device += height.upload(stream, forest->heights, n);
    }
    if (g.hubs != nullptr) {
      traffic.to_device += hubs.upload(stream, g.hubs, n);
    } else {
      find_hubs();
    }
    if (loop != LevelLoop::kHost) level_loop = std::make_unique<DeviceLevelLoop>(stream, loop, words_with_edges);
  }

  // The hubs found on the target (HubKeys), each row's key in the scan's words, which no
  // search uses yet.
  void find_hubs() {
    std::uint64_t* keys = scan.data();
    on_policy(stream, [&](auto policy) { thrust::fill(policy, keys, keys + n, std::uint64_t{0}); });
    for_each_index(
        stream, (directed_edges + kHubChunk - 1) / kHubChunk,
        HubKeys{offsets.data(), neighbors.data(), has_forest ? pruned.data() : nullptr, n, directed_edges, keys});
    for_each_index(stream, n, HubFromKey{offsets.data(), neighbors.data(), keys, hubs.data()});
    stream.synchronize();
  }

  void zero(const DeviceArray<std::uint64_t>& array, std::uint64_t count) {
    on_policy_async(stream, [&](auto policy) { thrust::fill(policy, array.data(), array.data() + count, 0); });
  }
  // scan[0, count) scanned in place, scan[count] its total, all left in target memory.
  void scan_on_target(std::uint64_t count) {
    std::uint64_t* at = scan.data();
    on_policy_async(stream, [&](auto policy) {
      thrust::fill(policy, at + count, at + count + 1, std::uint64_t{0});
      thrust::exclusive_scan(policy, at, at + count + 1, at);
    });
  }
  std::uint64_t scan_counts(std::uint64_t count) {
    return cuda_backend::scan_counts(stream, scan.data(), count, traffic.to_host);
  }
  std::uint64_t population(const DeviceArray<std::uint64_t>& bits) {
    return on_policy(stream, [&](auto policy) {
      return thrust::transform_reduce(policy, thrust::counting_iterator<std::uint64_t>(0),
                                      thrust::counting_iterator<std::uint64_t>(words_with_edges),
                                      WordPopulation{bits.data()}, std::uint64_t{0}, cuda::std::plus<std::uint64_t>());
    });
  }

  // One top-down step over the queue; returns the new queue's size and sets its edges.
  // One round trip to the device: the frontier's edges are known from the step that
  // built the queue (or the start's degree), and the next queue's size and edges come
  // back together at the end, two words read at once.
  std::uint64_t top_down_step(std::uint64_t& frontier_edges) {
    for_each_index(stream, queue_size, FrontierDegree{offsets.data(), queue.data(), scan.data()});
    std::uint64_t edges = 0;
    if (queue_edges) {
      edges = *queue_edges;
      scan_on_target(queue_size);
    } else {
      edges = scan_counts(queue_size);  // a queue whose edges were not counted: counted here
    }
    zero(next, words_with_edges);
    for_each_index(stream, edges,
                   ExpandEdge<FixedCount>{offsets.data(),
                                          neighbors.data(),
                                          queue.data(),
                                          scan.data(),
                                          {queue_size},
                                          visited.data(),
                                          original_ids(),
                                          parent.data(),
                                          next.data()});
    // The next queue from the discovered bits by a scan of their words' populations: no
    // shared tail for every discovery to contend on, and the queue comes out sorted.
    for_each_index(stream, words_with_edges, StorePopulation{next.data(), scan.data()});
    scan_on_target(words_with_edges);
    for_each_index(stream, words_with_edges, WritePositions<Vertex>{next.data(), scan.data(), 0, next_queue.data()});
    std::swap(queue, next_queue);
    read_queue_counts(next);
    frontier_edges = *queue_edges;
    return queue_size;
  }

  std::uint64_t bottom_up_step() {
    zero(next, words_with_edges);
    for_each_index(stream, searched_vertices(),
                   SearchParent{offsets.data(), neighbors.data(), hubs.data(), visited.data(), front.data(),
                                next.data(), original_ids(), parent.data()});
    for_each_index(stream, words_with_edges, FoldWord{visited.data(), next.data()});
    const std::uint64_t awake = population(next);
    std::swap(front, next);
    return awake;
  }

  void queue_to_front_bitmap() {
    zero(front, words);
    for_each_index(stream, queue_size, SetListedBits<Vertex>{queue.data(), 0, front.data()});
  }
  // The queue and its edges (for the top-down step that follows), read together.
  void front_bitmap_to_queue() {
    for_each_index(stream, words_with_edges, StorePopulation{front.data(), scan.data()});
    scan_on_target(words_with_edges);
    for_each_index(stream, words_with_edges, WritePositions<Vertex>{front.data(), scan.data(), 0, queue.data()});
    read_queue_counts(front);
  }
  // The queue's size (scan[words_with_edges], the scan's total) and its edges, summed from
  // the bits it came from into scan[words_with_edges + 1]: one wait for both.
  void read_queue_counts(const DeviceArray<std::uint64_t>& bits) {
    const auto word_edges = thrust::make_transform_iterator(
        thrust::counting_iterator<std::uint64_t>(0), WordSum<ListDegree>{bits.data(), ListDegree{offsets.data()}});
    sum_into(stream, word_edges, words_with_edges, scan.data() + words_with_edges + 1);
    std::uint64_t counts[2] = {0, 0};
    traffic.to_host += scan.download(stream, counts, 2, words_with_edges);
    queue_size = counts[0];
    queue_edges = counts[1];
  }

  [[nodiscard]] const Vertex* original_ids() const { return original.size() != 0 ? original.data() : nullptr; }
  // The vertices a bottom-up step looks at: those of the words with edges.
  [[nodiscard]] std::uint64_t searched_vertices() const { return std::min(n, words_with_edges * 64); }

  // The tallest tree below the vertices a step discovered (a pruned search's depth).
  std::uint32_t tallest_in_queue() {
    const Vertex* q = queue.data();
    return on_policy(stream, [&](auto policy) {
      return thrust::transform_reduce(policy, q, q + queue_size, QueueHeight{height.data()}, std::uint32_t{0},
                                      Larger{});
    });
  }
  std::uint32_t tallest_in_front() {
    return on_policy(stream, [&](auto policy) {
      return thrust::transform_reduce(policy, thrust::counting_iterator<std::uint64_t>(0),
                                      thrust::counting_iterator<std::uint64_t>(words_with_edges),
                                      WordHeight{front.data(), height.data()}, std::uint32_t{0}, Larger{});
    });
  }

  // Hangs the peeled vertices whose anchors were reached; returns how many.
  std::uint64_t attach_trees() {
    const AnchorReached reached{peeled_anchor.data(), pruned.data(), visited.data()};
    const std::uint64_t count = peeled_order.size();
    for_each_index(stream, count,
                   AttachTree{reached, peeled_order.data(), peeled_parent.data(), original_ids(), parent.data()});
    return on_policy(stream, [&](auto policy) {
      return thrust::transform_reduce(policy, thrust::counting_iterator<std::uint64_t>(0),
                                      thrust::counting_iterator<std::uint64_t>(count), CountReached{reached},
                                      std::uint64_t{0}, cuda::std::plus<std::uint64_t>());
    });
  }

  // A search from internal vertex `start`; with `prune`, on the core (the peeled vertices
  // start visited), then the attach step and the chain's parents.
  BfsStats search(std::uint64_t root, std::uint64_t start, const BfsOptions& options, const PrunedStart* prune);
  // Its levels, driven by the host or by the device (--level-loop); each returns the
  // deepest level a pruned search reached (from `level` and `deepest`, its start's).
  std::uint64_t levels_on_host(DirectionPolicy& policy, bool pruned, std::uint64_t level, std::uint64_t deepest,
                               BfsStats& stats);
  std::uint64_t levels_on_device(const DirectionPolicy& policy, bool pruned, std::uint64_t level, std::uint64_t deepest,
                                 BfsStats& stats);

  Stream stream;
  std::uint64_t n;
  std::uint64_t words;
  std::uint64_t words_with_edges;
  std::uint64_t directed_edges;
  DeviceArray<std::uint64_t> offsets;
  DeviceArray<Vertex> neighbors;
  DeviceArray<Vertex> hubs;
  DeviceArray<Vertex> original;
  DeviceArray<std::uint64_t> edgeless;
  DeviceArray<std::uint64_t> visited;
  DeviceArray<std::uint64_t> front;
  DeviceArray<std::uint64_t> next;
  DeviceArray<Vertex> queue;
  DeviceArray<Vertex> next_queue;
  DeviceArray<std::uint64_t> scan;
  DeviceArray<std::int64_t> parent;
  // --prune: the start-visited bits, the attach step's tables, the trees' heights.
  DeviceArray<std::uint64_t> pruned;
  DeviceArray<Vertex> peeled_order;
  DeviceArray<Vertex> peeled_anchor;
  DeviceArray<Vertex> peeled_parent;
  DeviceArray<std::uint8_t> height;
  bool has_forest = false;
  std::uint64_t core_vertices = 0;
  std::uint64_t core_directed_edges = 0;
  std::uint64_t queue_size = 0;
  // The queue's edges, where the step that built it counted them (a top-down step, or the
  // start); unknown after a bottom-up phase.
  std::optional<std::uint64_t> queue_edges;
  HostDeviceTraffic traffic;
  // --level-loop device / graph; nullptr: the host drives the levels.
  std::unique_ptr<DeviceLevelLoop> level_loop;
};

DeviceBfs::DeviceBfs(ExecutionTarget target, const HostGraphView& graph, bool force, const HostForestView* forest,
                     LevelLoop loop) {
  if (graph.num_vertices > (std::uint64_t{1} << 32)) {
    throw_usage_error("the device backend numbers vertices in 32 bits; this graph has " +
                      std::to_string(graph.num_vertices));
  }
  if (target == ExecutionTarget::kDevice) {
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    // Lists kernel 1 left on the device are there already.
    const std::uint64_t n = graph.num_vertices;
    const std::uint64_t there = graph.resident ? 8 * (n + 1) + 4 * graph.offsets[n] + 4 * n : 0;
    require_device_memory(
        memory_bytes(n, graph.offsets[n], forest != nullptr ? forest->num_peeled : 0, forest != nullptr) - there,
        free_bytes, total_bytes, force);
  }
  state_ = std::make_unique<State>(target, graph, forest, loop);
}

DeviceBfs::~DeviceBfs() = default;

ExecutionTarget DeviceBfs::target() const { return state_->stream.target(); }

HostDeviceTraffic DeviceBfs::traffic() const { return state_->traffic; }

BfsStats DeviceBfs::run(std::uint64_t root, std::uint64_t start, const BfsOptions& options) {
  return state_->search(root, start, options, nullptr);
}

BfsStats DeviceBfs::run_pruned(std::uint64_t root, const PrunedStart& start, const BfsOptions& options) {
  if (!state_->has_forest) throw Error(ExitCode::kFailure, "a pruned device search needs the forest");
  return state_->search(root, start.start, options, &start);
}

BfsStats DeviceBfs::State::search(std::uint64_t root, std::uint64_t start, const BfsOptions& options,
                                  const PrunedStart* prune) {
  State& s = *this;
  BfsStats stats;
  Stopwatch clock;
  std::int64_t* parent_of = s.parent.data();
  on_policy(s.stream, [&](auto policy) { thrust::fill(policy, parent_of, parent_of + s.n, std::int64_t{-1}); });
  // Vertices without edges (and a pruned search's peeled ones) start visited.
  s.visited.assign(s.stream, prune != nullptr ? s.pruned : s.edgeless);
  // A device-driven loop starts each level from the frontier's bits.
  std::uint64_t* front_bits = s.level_loop ? s.front.data() : nullptr;
  if (front_bits != nullptr) s.zero(s.front, s.words);
  const auto start_vertex = static_cast<Vertex>(start);
  for_each_index(s.stream, 1, StartSearch{parent_of, s.visited.data(), s.queue.data(), front_bits, root, start_vertex});
  s.queue_size = 1;
  std::uint64_t start_degree = 0;
  {
    std::uint64_t ends[2] = {0, 0};
    s.traffic.to_host += s.offsets.download(s.stream, ends, 2, start);
    start_degree = ends[1] - ends[0];
  }
  s.queue_edges = start_degree;
  s.stream.synchronize();
  stats.init_time_s = clock.elapsed_s();

  DirectionPolicy policy(options, prune != nullptr ? s.core_vertices : s.n,
                         prune != nullptr ? s.core_directed_edges : s.directed_edges, start_degree);
  // A pruned search's depth: each level's vertices with the trees hanging from them.
  const std::uint64_t level = prune != nullptr ? prune->level : 0;
  const std::uint64_t deepest = prune != nullptr ? prune->deepest : 0;
  const std::uint64_t depth = s.level_loop ? s.levels_on_device(policy, prune != nullptr, level, deepest, stats)
                                           : s.levels_on_host(policy, prune != nullptr, level, deepest, stats);
  if (prune != nullptr) {
    clock.restart();
    const std::uint64_t attached = s.attach_trees();
    // The chain from a peeled root: its parents point back towards the root.
    for (const auto& [vertex, chain_parent] : prune->chain_parents) {
      s.traffic.to_device += s.parent.upload(s.stream, &chain_parent, 1, vertex);
    }
    s.stream.synchronize();
    const double t = clock.elapsed_s();
    stats.steps.push_back({StepKind::kAttach, 0, attached, t});
    stats.attach_time_s = t;
    stats.depth = depth;
  }
  return stats;
}

std::uint64_t DeviceBfs::State::levels_on_host(DirectionPolicy& policy, bool pruned, std::uint64_t level,
                                               std::uint64_t deepest, BfsStats& stats) {
  State& s = *this;
  Stopwatch clock;
  const auto discovered_level = [&](std::uint64_t discovered, bool bottom_up) {
    ++level;
    if (!pruned || discovered == 0) return;
    deepest = std::max<std::uint64_t>(deepest, level + (bottom_up ? s.tallest_in_front() : s.tallest_in_queue()));
  };
  while (s.queue_size > 0) {
    if (policy.go_bottom_up()) {
      clock.restart();
      s.queue_to_front_bitmap();
      s.stream.synchronize();
      stats.conversion_time_s += clock.elapsed_s();
      std::uint64_t awake = s.queue_size;
      std::uint64_t previous_awake = 0;
      do {
        previous_awake = awake;
        clock.restart();
        awake = s.bottom_up_step();
        discovered_level(awake, true);
        const double t = clock.elapsed_s();
        stats.steps.push_back({StepKind::kBottomUp, previous_awake, awake, t});
        stats.bottom_up_time_s += t;
      } while (policy.stay_bottom_up(awake, previous_awake));
      clock.restart();
      s.front_bitmap_to_queue();
      s.stream.synchronize();
      stats.conversion_time_s += clock.elapsed_s();
      policy.bottom_up_done();
    } else {
      const std::uint64_t frontier = s.queue_size;
      clock.restart();
      std::uint64_t frontier_edges = 0;
      const std::uint64_t discovered = s.top_down_step(frontier_edges);
      discovered_level(discovered, false);
      policy.top_down_done(frontier_edges);
      const double t = clock.elapsed_s();
      stats.steps.push_back({StepKind::kTopDown, frontier, discovered, t});
      stats.top_down_time_s += t;
    }
  }
  return deepest;
}

std::uint64_t DeviceBfs::State::levels_on_device(const DirectionPolicy& policy, bool pruned, std::uint64_t level,
                                                 std::uint64_t deepest, BfsStats& stats) {
  State& s = *this;
  LevelControl start{policy};
  start.frontier = 1;
  start.level = level;
  start.deepest = deepest;
  const LevelArrays arrays{
      s.offsets.data(), s.neighbors.data(), s.hubs.data(),         s.original_ids(), pruned ? s.height.data() : nullptr,
      s.visited.data(), s.front.data(),     s.next.data(),         s.queue.data(),   s.scan.data(),
      s.parent.data(),  s.words_with_edges, s.searched_vertices(), s.directed_edges};
  return s.level_loop->run(arrays, start, stats, s.traffic).deepest;
}

void DeviceBfs::copy_hubs(std::span<std::uint32_t> hubs) {
  State& s = *state_;
  if (hubs.size() != s.n) throw Error(ExitCode::kFailure, "hub array size does not match the graph");
  s.traffic.to_host += s.hubs.download(s.stream, hubs.data(), s.n);
}

void DeviceBfs::copy_parents(std::span<std::int64_t> parent) {
  State& s = *state_;
  if (parent.size() != s.n) throw Error(ExitCode::kFailure, "parent array size does not match the graph");
  s.traffic.to_host += s.parent.download(s.stream, parent.data(), s.n);
}

}  // namespace zbfs::cuda_backend
