// The one-process device search's kernel bodies (device_bfs.cu), which its host-driven
// level loop and the device-driven one (device_level_loop.cuh) both launch: the start,
// the frontier's degrees, the edge-balanced top-down step and the bottom-up search for a
// parent. Each is correct for any order of its indices (launch.cuh).
#pragma once

#include <cstdint>

#include "zbfs/backend/cuda/bitmap_kernels.cuh"
#include "zbfs/backend/cuda/launch.cuh"

namespace zbfs::cuda_backend {

using Vertex = std::uint32_t;

ZBFS_HD inline std::uint64_t input_id(const Vertex* original, Vertex v) {
  return original != nullptr ? original[v] : v;
}

// The start: its parent, its visited bit, the first queue, and (for a device-driven
// level loop, which starts every level from the frontier's bits) its bit of `front`.
struct StartSearch {
  std::int64_t* parent;
  std::uint64_t* visited;
  Vertex* queue;
  std::uint64_t* front;  // nullptr: no frontier bitmap
  std::uint64_t root;    // input id
  Vertex start;          // internal id
  ZBFS_HD void operator()(std::uint64_t) const {
    parent[root] = static_cast<std::int64_t>(root);
    visited[start >> 6] |= bit_of(start);
    queue[0] = start;
    if (front != nullptr) front[start >> 6] |= bit_of(start);
  }
};

struct FrontierDegree {
  const std::uint64_t* offsets;
  const Vertex* queue;
  std::uint64_t* degree;
  ZBFS_HD void operator()(std::uint64_t i) const {
    const Vertex u = queue[i];
    degree[i] = offsets[u + 1] - offsets[u];
  }
};

// Top-down, one index per frontier edge (`scan`: the exclusive scan of the degrees of the
// queue's `frontier()` vertices; FixedCount or CountAt, launch.cuh).
template <class Count>
struct ExpandEdge {
  const std::uint64_t* offsets;
  const Vertex* neighbors;
  const Vertex* queue;
  const std::uint64_t* scan;
  Count frontier;
  std::uint64_t* visited;
  const Vertex* original;
  std::int64_t* parent;
  std::uint64_t* next;
  ZBFS_HD void operator()(std::uint64_t e) const {
    const std::uint64_t lo = entry_of_edge(scan, frontier(), e);
    const Vertex u = queue[lo];
    const Vertex v = neighbors[offsets[u] + (e - scan[lo])];
    if (!claim_bit(visited, v)) return;
    parent[input_id(original, v)] = static_cast<std::int64_t>(input_id(original, u));
    shared_word(next[v >> 6]).fetch_or(bit_of(v), cuda::std::memory_order_relaxed);
  }
};

// Bottom-up, one index per vertex: an unvisited vertex looks for a parent in the frontier,
// its hub first, then its list, and stops at the first. The visited bitmap is only read
// during the step (the found vertices are folded in afterwards).
struct SearchParent {
  const std::uint64_t* offsets;
  const Vertex* neighbors;
  const Vertex* hubs;
  const std::uint64_t* visited;
  const std::uint64_t* front;
  std::uint64_t* next;
  const Vertex* original;
  std::int64_t* parent;
  ZBFS_HD void operator()(std::uint64_t v) const {
    const std::uint64_t mask = bit_of(v);
    if ((visited[v >> 6] & mask) != 0) return;
    Vertex by = hubs[v];
    bool found = (front[by >> 6] & bit_of(by)) != 0;
    for (std::uint64_t e = offsets[v], end = offsets[v + 1]; !found && e < end; ++e) {
      by = neighbors[e];
      found = (front[by >> 6] & bit_of(by)) != 0;
    }
    if (!found) return;
    parent[input_id(original, static_cast<Vertex>(v))] = static_cast<std::int64_t>(input_id(original, by));
    shared_word(next[v >> 6]).fetch_or(mask, cuda::std::memory_order_relaxed);
  }
};

}  // namespace zbfs::cuda_backend
