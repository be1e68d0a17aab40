// DeviceLevelLoop: the one-process device search's levels driven by the device
// (--level-loop device / graph), where the host-driven loop (device_bfs.cu) reads each
// level's counts back, decides the next direction and launches that level's kernels.
// - The direction is decided on the device, by the host's own DirectionPolicy kept in
//   target memory (LevelControl): one thread at the start of each level.
// - Every level is the same fixed sequence of launches whatever its direction (so that it
//   can be captured once as a CUDA graph and replayed): the launches of the direction not
//   taken, and of a level after the search is done, get a count of 0 from the control
//   block and cost one small launch each (for_each_index_up_to). Only the two scans over
//   the frontier's words and the level's sums run at full size every level.
// - The frontier always ends a level as bits (`front`); a top-down level first builds its
//   queue from them with the exclusive scans of the words' populations and edges, which
//   give each queue entry its first edge (the edge-balanced expansion's scan) at once.
// - The host enqueues the next level before it waits for the last one's report (its
//   direction, frontier, discoveries and device clock times, 48 bytes through pinned
//   memory): the device always has a level queued, and at most one level is issued after
//   the search ends (a no-op).
// Its steps, levels and depth are the host-driven loop's exactly (tested through cuda-host).
#pragma once

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/scan.h>

#include <cstdint>
#include <cstring>
#include <cuda/std/bit>
#include <cuda/std/chrono>

#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/cuda/bitmap_kernels.cuh"
#include "zbfs/backend/cuda/launch.cuh"
#include "zbfs/backend/cuda/search_kernels.cuh"
#include "zbfs/bfs/bfs_stats.hpp"
#include "zbfs/bfs/direction_policy.hpp"

namespace zbfs::cuda_backend {

// A level's direction; kNoLevel once the search is done.
enum LevelKind : std::uint64_t { kNoLevel = 0, kTopDownLevel = 1, kBottomUpLevel = 2 };

// A level's counts over the new frontier's bits: its vertices, their edges (top-down
// levels: the policy's next scout count) and the tallest tree below them (--prune).
struct LevelSums {
  std::uint64_t vertices = 0;
  std::uint64_t edges = 0;
  std::uint64_t tallest = 0;
};
struct AddLevelSums {
  ZBFS_HD LevelSums operator()(const LevelSums& a, const LevelSums& b) const {
    return {a.vertices + b.vertices, a.edges + b.edges, a.tallest > b.tallest ? a.tallest : b.tallest};
  }
};

// What a level tells the host: its step, device clock times, and whether the search ended.
struct LevelReport {
  std::uint64_t kind = kNoLevel;
  std::uint64_t frontier = 0;
  std::uint64_t discovered = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t done = 0;
};

// The search's state in target memory, read and written by one thread at each level's
// start and end, and its launch sizes (zero for the launches a level does not take).
struct LevelControl {
  explicit LevelControl(const DirectionPolicy& rule) : policy(rule) {}
  DirectionPolicy policy;
  std::uint64_t kind = kNoLevel;  // the level running, or the last one
  std::uint64_t frontier = 0;     // the frontier's vertices (the last level's discoveries)
  std::uint64_t previous_awake = 0;
  std::uint64_t level = 0;  // --prune's depth: levels so far, the deepest tree's
  std::uint64_t deepest = 0;
  std::uint64_t done = 0;
  std::uint64_t queue_words = 0;  // top-down: the words the queue is built from
  std::uint64_t queue_size = 0;   // ... and its vertices and edges, once built
  std::uint64_t queue_edges = 0;
  std::uint64_t search_vertices = 0;  // bottom-up: the vertices that look for a parent
  std::uint64_t search_words = 0;     // ... and the words folded
  LevelSums sums;
  LevelReport report;
};
static_assert(std::is_trivially_copyable_v<LevelControl>, "the control block is copied as bytes");

// The search's arrays in target memory and its sizes (device_bfs.cu's State owns them).
struct LevelArrays {
  const std::uint64_t* offsets = nullptr;
  const Vertex* neighbors = nullptr;
  const Vertex* hubs = nullptr;
  const Vertex* original = nullptr;      // nullptr: input ids are internal ids
  const std::uint8_t* height = nullptr;  // --prune's tree heights; nullptr: none
  std::uint64_t* visited = nullptr;
  std::uint64_t* front = nullptr;
  std::uint64_t* next = nullptr;
  Vertex* queue = nullptr;
  std::uint64_t* edge_start = nullptr;  // a queue entry's first edge (the frontier's scan)
  std::int64_t* parent = nullptr;
  std::uint64_t words = 0;     // the words holding vertices with edges
  std::uint64_t vertices = 0;  // the vertices a bottom-up level looks at
  std::uint64_t edges = 0;     // the most edges a top-down level expands
  bool operator==(const LevelArrays&) const = default;
};

ZBFS_HD inline std::uint64_t clock_ns() {
  namespace chrono = cuda::std::chrono;
  return static_cast<std::uint64_t>(
      chrono::duration_cast<chrono::nanoseconds>(chrono::system_clock::now().time_since_epoch()).count());
}

// The level bodies, in launch order.

// Decides the level's direction as the host-driven loop would (run_levels' rule) and
// sets its launch sizes; after the search, a level of nothing.
struct BeginLevel {
  LevelControl* control;
  std::uint64_t* population;  // the word scans' totals start at 0
  std::uint64_t* edges;
  std::uint64_t words;
  std::uint64_t vertices;
  ZBFS_HD void operator()(std::uint64_t) const {
    LevelControl& s = *control;
    s.queue_words = s.queue_size = s.queue_edges = s.search_vertices = s.search_words = 0;
    population[words] = 0;
    edges[words] = 0;
    s.report = LevelReport{};
    s.report.start_ns = clock_ns();
    if (s.done != 0) {
      s.kind = kNoLevel;
      return;
    }
    bool bottom_up = s.kind == kBottomUpLevel && s.policy.stay_bottom_up(s.frontier, s.previous_awake);
    if (!bottom_up) {
      if (s.kind == kBottomUpLevel) s.policy.bottom_up_done();
      bottom_up = s.policy.go_bottom_up();
    }
    s.kind = bottom_up ? kBottomUpLevel : kTopDownLevel;
    s.previous_awake = s.frontier;
    s.report.frontier = s.frontier;
    if (bottom_up) {
      s.search_vertices = vertices;
      s.search_words = words;
    } else {
      s.queue_words = words;
    }
  }
};

// Top-down: each frontier word's population and edges (scanned next).
struct CountWord {
  const std::uint64_t* front;
  const std::uint64_t* offsets;
  std::uint64_t* population;
  std::uint64_t* edges;
  ZBFS_HD void operator()(std::uint64_t w) const {
    population[w] = static_cast<std::uint64_t>(cuda::std::popcount(front[w]));
    edges[w] = WordSum<ListDegree>{front, ListDegree{offsets}}(w);
  }
};

// Top-down: word w's vertices to the queue at their scanned positions, each with its
// first edge; the word is cleared for the level's discoveries. Index 0 sets the queue's
// size and edges, the launch sizes of the expansion that follows.
struct WriteQueue {
  std::uint64_t* front;
  const std::uint64_t* offsets;
  const std::uint64_t* population;
  const std::uint64_t* edges;
  std::uint64_t words;
  Vertex* queue;
  std::uint64_t* edge_start;
  LevelControl* control;
  ZBFS_HD void operator()(std::uint64_t w) const {
    std::uint64_t at = population[w];
    std::uint64_t edge = edges[w];
    for (std::uint64_t bits = front[w]; bits != 0; bits &= bits - 1) {
      const std::uint64_t v = w * 64 + static_cast<std::uint64_t>(cuda::std::countr_zero(bits));
      queue[at] = static_cast<Vertex>(v);
      edge_start[at++] = edge;
      edge += offsets[v + 1] - offsets[v];
    }
    front[w] = 0;
    if (w == 0) {
      control->queue_size = population[words];
      control->queue_edges = edges[words];
    }
  }
};

struct ClearWord {
  std::uint64_t* words;
  ZBFS_HD void operator()(std::uint64_t w) const { words[w] = 0; }
};

// Bottom-up: the found vertices join the visited ones and become the frontier.
struct FoldAndMove {
  std::uint64_t* visited;
  std::uint64_t* front;
  const std::uint64_t* next;
  ZBFS_HD void operator()(std::uint64_t w) const {
    visited[w] |= next[w];
    front[w] = next[w];
  }
};

// The level's sums over word w of the new frontier (a reduction's transform).
struct SumWord {
  const std::uint64_t* front;
  const std::uint64_t* offsets;
  const std::uint8_t* height;
  const LevelControl* control;
  ZBFS_HD LevelSums operator()(std::uint64_t w) const {
    LevelSums sums;
    sums.vertices = static_cast<std::uint64_t>(cuda::std::popcount(front[w]));
    if (sums.vertices == 0) return sums;
    if (control->kind == kTopDownLevel) sums.edges = WordSum<ListDegree>{front, ListDegree{offsets}}(w);
    if (height != nullptr) sums.tallest = WordHeight{front, height}(w);
    return sums;
  }
};

// The policy's bookkeeping for the level that ran, --prune's depth, and its report.
struct EndLevel {
  LevelControl* control;
  bool pruned;
  ZBFS_HD void operator()(std::uint64_t) const {
    LevelControl& s = *control;
    if (s.kind == kNoLevel) {
      s.report.done = 1;
      return;
    }
    const std::uint64_t discovered = s.sums.vertices;
    if (s.kind == kTopDownLevel) s.policy.top_down_done(s.sums.edges);
    ++s.level;
    if (pruned && discovered > 0 && s.level + s.sums.tallest > s.deepest) s.deepest = s.level + s.sums.tallest;
    s.frontier = discovered;
    if (discovered == 0) s.done = 1;
    s.report.kind = s.kind;
    s.report.discovered = discovered;
    s.report.end_ns = clock_ns();
    s.report.done = s.done;
  }
};

class DeviceLevelLoop {
 public:
  // `words`: the most words a frontier spans (the graph's words with edges).
  DeviceLevelLoop(const Stream& stream, LevelLoop loop, std::uint64_t words)
      : stream_(stream),
        replay_graph_(loop == LevelLoop::kGraph && stream.target() == ExecutionTarget::kDevice),
        population_(stream.target(), words + 1),
        edges_(stream.target(), words + 1),
        control_(stream.target(), 1) {
    if (stream.target() == ExecutionTarget::kDevice) {
      check_cuda(cudaMallocHost(reinterpret_cast<void**>(&reports_), 2 * sizeof(LevelReport)), "cudaMallocHost");
      for (cudaEvent_t& event : reported_) {
        check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
      }
    } else {
      reports_ = new LevelReport[2];
    }
  }
  ~DeviceLevelLoop() {
    if (stream_.target() == ExecutionTarget::kDevice) {
      if (level_graph_ != nullptr) cudaGraphExecDestroy(level_graph_);
      for (cudaEvent_t event : reported_) {
        if (event != nullptr) cudaEventDestroy(event);
      }
      cudaFreeHost(reports_);
    } else {
      delete[] reports_;
    }
  }
  DeviceLevelLoop(const DeviceLevelLoop&) = delete;
  DeviceLevelLoop& operator=(const DeviceLevelLoop&) = delete;

  // Runs a search's levels from `start` (its policy and first frontier, whose bits are in
  // arrays.front, visited already): each level's step goes to `stats`; returns the
  // control block as the search left it (--prune's depth).
  LevelControl run(const LevelArrays& arrays, const LevelControl& start, BfsStats& stats, HostDeviceTraffic& traffic) {
    traffic.to_device += control_.upload(stream_, &start, 1);
    std::uint64_t issued = 0;
    const auto issue = [&] {
      launch_level(arrays);
      LevelReport* to = reports_ + issued % 2;
      const LevelReport* from = &control_.data()->report;
      if (stream_.target() == ExecutionTarget::kDevice) {
        check_cuda(cudaMemcpyAsync(to, from, sizeof(LevelReport), cudaMemcpyDeviceToHost, stream_.get()),
                   "cudaMemcpyAsync");
        check_cuda(cudaEventRecord(reported_[issued % 2], stream_.get()), "cudaEventRecord");
      } else {
        std::memcpy(to, from, sizeof(LevelReport));
      }
      ++issued;
    };
    issue();
    for (std::uint64_t read = 0;; ++read) {
      issue();  // the device works on the next level while the host reads this one's report
      if (stream_.target() == ExecutionTarget::kDevice) {
        check_cuda(cudaEventSynchronize(reported_[read % 2]), "cudaEventSynchronize");
      }
      const LevelReport report = reports_[read % 2];
      traffic.to_host += sizeof(LevelReport);
      if (report.kind != kNoLevel) {
        const double t = static_cast<double>(report.end_ns - report.start_ns) * 1e-9;
        const bool bottom_up = report.kind == kBottomUpLevel;
        stats.steps.push_back(
            {bottom_up ? StepKind::kBottomUp : StepKind::kTopDown, report.frontier, report.discovered, t});
        (bottom_up ? stats.bottom_up_time_s : stats.top_down_time_s) += t;
      }
      if (report.done != 0) break;
    }
    LevelControl end = start;
    traffic.to_host += control_.download(stream_, &end, 1);  // after the level issued ahead
    return end;
  }

 private:
  // The level: directly, or (graph) its launches captured once and replayed. The first
  // level runs directly either way: it sizes the temporary storage the scans and the
  // reduction take, which a captured graph must find allocated.
  void launch_level(const LevelArrays& arrays) {
    if (!replay_graph_ || !warmed_) {
      enqueue_level(arrays);
      warmed_ = true;
      return;
    }
    if (level_graph_ == nullptr || !(captured_ == arrays)) capture(arrays);
    check_cuda(cudaGraphLaunch(level_graph_, stream_.get()), "cudaGraphLaunch");
  }

  void capture(const LevelArrays& arrays) {
    if (level_graph_ != nullptr) cudaGraphExecDestroy(level_graph_);
    level_graph_ = nullptr;
    check_cuda(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
    cudaGraph_t graph = nullptr;
    try {
      enqueue_level(arrays);
    } catch (...) {
      cudaStreamEndCapture(stream_.get(), &graph);
      if (graph != nullptr) cudaGraphDestroy(graph);
      throw;
    }
    check_cuda(cudaStreamEndCapture(stream_.get(), &graph), "cudaStreamEndCapture");
    const cudaError_t status = cudaGraphInstantiate(&level_graph_, graph, 0);
    cudaGraphDestroy(graph);
    check_cuda(status, "cudaGraphInstantiate");
    captured_ = arrays;
  }

  // One level's launches, the same whatever it does.
  void enqueue_level(const LevelArrays& a) {
    LevelControl* c = control_.data();
    std::uint64_t* population = population_.data();
    std::uint64_t* edges = edges_.data();
    const std::uint64_t words = a.words;
    for_each_index(stream_, 1, BeginLevel{c, population, edges, words, a.vertices});
    // Top-down: the queue and each entry's first edge from the frontier's bits, then the
    // edge-balanced expansion into the cleared bits.
    for_each_index_up_to(stream_, &c->queue_words, words, CountWord{a.front, a.offsets, population, edges});
    on_policy_async(stream_, storage_, [&](auto policy) {
      thrust::exclusive_scan(policy, population, population + words + 1, population);
      thrust::exclusive_scan(policy, edges, edges + words + 1, edges);
    });
    for_each_index_up_to(stream_, &c->queue_words, words,
                         WriteQueue{a.front, a.offsets, population, edges, words, a.queue, a.edge_start, c});
    for_each_index_up_to(
        stream_, &c->queue_edges, a.edges,
        ExpandEdge<CountAt>{
            a.offsets, a.neighbors, a.queue, a.edge_start, {&c->queue_size}, a.visited, a.original, a.parent, a.front});
    // Bottom-up: the unvisited vertices look for parents in the frontier's bits.
    for_each_index_up_to(stream_, &c->search_words, words, ClearWord{a.next});
    for_each_index_up_to(
        stream_, &c->search_vertices, a.vertices,
        SearchParent{a.offsets, a.neighbors, a.hubs, a.visited, a.front, a.next, a.original, a.parent});
    for_each_index_up_to(stream_, &c->search_words, words, FoldAndMove{a.visited, a.front, a.next});
    // The new frontier's counts, and the policy's step.
    const auto sums = thrust::make_transform_iterator(thrust::counting_iterator<std::uint64_t>(0),
                                                      SumWord{a.front, a.offsets, a.height, c});
    reduce_into(stream_, storage_, sums, words, &c->sums, AddLevelSums{}, LevelSums{});
    for_each_index(stream_, 1, EndLevel{c, a.height != nullptr});
  }

  const Stream& stream_;
  bool replay_graph_;
  bool warmed_ = false;
  DeviceArray<std::uint64_t> population_;  // the frontier words' populations, scanned
  DeviceArray<std::uint64_t> edges_;       // ... and their edges, scanned
  DeviceArray<LevelControl> control_;
  // The level's own temporary storage (Thrust's scans, CUB's reduction): a captured graph
  // keeps its address, so nothing else may grow or free it.
  TemporaryStorage storage_;
  LevelReport* reports_ = nullptr;  // pinned: two levels in flight
  cudaEvent_t reported_[2] = {nullptr, nullptr};
  cudaGraphExec_t level_graph_ = nullptr;
  LevelArrays captured_;
};

}  // namespace zbfs::cuda_backend
