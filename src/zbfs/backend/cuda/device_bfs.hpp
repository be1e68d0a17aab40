// Kernel 2 on a CUDA device (or through the host launcher, execution_target.hpp): the
// direction-optimizing BFS of DirectionOptimizingBfs with the graph resident in the
// target's memory, 32-bit vertex ids, the same DirectionPolicy on the same counts (so its
// steps and levels are the CPU kernel's), parents written on the target in the input's ids.
// - Top-down steps are balanced by edges, not vertices: an exclusive scan of the
//   frontier's degrees gives every frontier edge an index, each index finds its vertex by
//   binary search and claims its neighbour in the visited bitmap with an atomic OR and
//   marks it in the next bitmap; the next queue is built from that bitmap by a scan of
//   its words' populations.
// - Bottom-up steps take one unvisited vertex per index: its hub (highest-degree
//   neighbour) first, then its list until a neighbour is in the frontier bitmap (early
//   exit); found vertices set their bit of the next bitmap atomically, and one pass over
//   the words folds it into the visited bitmap and counts it.
// - Conversions: the queue sets its bits; the bitmap becomes a queue by a scan of the
//   words' populations.
// - Levels: the host reads each one's counts and decides the next direction, or (with
//   LevelLoop::kDevice / kGraph) the device does, by the same policy, and the host only
//   enqueues levels one ahead (device_level_loop.cuh).
// Plain C++ interface (the implementation is device_bfs.cu); construct once per graph (part
// of kernel 1), run() per root, then copy the parents out for counting and validation.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/execution_target.hpp"
#include "zbfs/bfs/bfs_options.hpp"
#include "zbfs/bfs/bfs_stats.hpp"

namespace zbfs::cuda_backend {

struct ResidentLists;  // resident_lists.cuh

// The host's degree-ordered graph as the device backend uploads it (all host pointers).
struct HostGraphView {
  std::uint64_t num_vertices = 0;
  const std::uint64_t* offsets = nullptr;    // num_vertices + 1
  const std::uint32_t* neighbors = nullptr;  // offsets[num_vertices]
  // Each vertex's highest-degree neighbour (a pruned search's: core neighbour), or nullptr:
  // found on the target, as graph/hub_neighbors.hpp finds them on the host.
  const std::uint32_t* hubs = nullptr;
  const std::uint32_t* original = nullptr;  // internal id -> input id; nullptr: the same
  // Bit per vertex: 1 for a vertex without edges (it starts every search visited), in
  // 64-bit words; the words past words_with_edges hold only such vertices.
  const std::uint64_t* edgeless = nullptr;
  std::uint64_t words_with_edges = 0;
  // The same offsets, neighbours and input ids where kernel 1 left them on the target
  // (device_kernel1.hpp): taken over instead of uploaded (nullptr: upload).
  std::shared_ptr<ResidentLists> resident;
};

// --prune (graph/peeled_forest.hpp), as the device backend uploads it (host pointers):
// the bit per vertex a pruned search starts visited (edgeless or peeled), the peeled
// vertices in the attach step's order with each one's anchor (internal id) and parent
// (input id), and each vertex's tree height.
struct HostForestView {
  const std::uint64_t* pruned = nullptr;
  std::uint64_t num_peeled = 0;
  const std::uint32_t* order = nullptr;
  const std::uint32_t* anchor = nullptr;
  const std::uint32_t* parent = nullptr;
  const std::uint8_t* heights = nullptr;
  std::uint64_t core_vertices = 0;
  std::uint64_t core_directed_edges = 0;
};

// A pruned search's start, found on the host: the core vertex it starts from (internal
// id), its level (the peeled chain from the root to it), the depth the chain's trees reach,
// and the parents (input ids) the chain takes once the trees are attached, the root's and
// the start's included.
struct PrunedStart {
  std::uint64_t start = 0;
  std::uint64_t level = 0;
  std::uint64_t deepest = 0;
  std::vector<std::pair<std::uint64_t, std::int64_t>> chain_parents;
};

class DeviceBfs {
 public:
  // Uploads the graph. Throws a usage error (exit status 2) when the device lacks the
  // memory (checked before anything is allocated) unless `force`.
  // `forest`: --prune's trees (nullptr: none), for run_pruned. `loop`: who drives the
  // levels (backend.hpp; device_level_loop.cuh).
  DeviceBfs(ExecutionTarget target, const HostGraphView& graph, bool force, const HostForestView* forest = nullptr,
            LevelLoop loop = LevelLoop::kHost);
  ~DeviceBfs();
  DeviceBfs(const DeviceBfs&) = delete;
  DeviceBfs& operator=(const DeviceBfs&) = delete;

  // Searches from `root` (an input id) starting at internal vertex `start` (its internal
  // id); parents stay in the target's memory until copy_parents.
  BfsStats run(std::uint64_t root, std::uint64_t start, const BfsOptions& options);
  // A pruned search (the forest given at construction): the core from `start.start` with
  // the peeled vertices visited from the start, then the attach step on the target.
  BfsStats run_pruned(std::uint64_t root, const PrunedStart& start, const BfsOptions& options);
  // The last search's parents, indexed by input id (-1: unreached).
  void copy_parents(std::span<std::int64_t> parent);
  // The hubs the bottom-up steps test first, one per internal id (tests compare them
  // with the host's).
  void copy_hubs(std::span<std::uint32_t> hubs);

  [[nodiscard]] ExecutionTarget target() const;
  [[nodiscard]] HostDeviceTraffic traffic() const;
  // The target memory a graph of n vertices and m directed edges takes (with `resident`
  // lists, what is not there yet): offsets and the
  // scan (8 bytes per vertex each), the parents (8), the neighbours (4 per edge), hubs,
  // original ids and two queues (4 each), five bitmaps, two scans of a bitmap's words (a
  // device-driven level loop's), and the runtime's own reserve.
  // With a forest of `peeled` vertices: its bitmap, heights (1 per vertex) and three
  // words a peeled vertex.
  static std::uint64_t memory_bytes(std::uint64_t n, std::uint64_t directed_edges, std::uint64_t peeled = 0,
                                    bool forest = false) {
    const std::uint64_t pruning = forest ? 8 * ((n + 63) / 64) + n + 3 * 4 * peeled : 0;
    return 8 * (n + 1) * 2 + 8 * n + 4 * directed_edges + 4 * 4 * n + 7 * 8 * ((n + 63) / 64) + 16 + pruning +
           (256ULL << 20);
  }

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace zbfs::cuda_backend
