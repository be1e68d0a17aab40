// Helpers of the multi-rank tests: the grid shapes a rank count allows, and gathering a
// distributed parent array onto every rank in vertex order. Collective where they say so.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/core/packed_edge_list.hpp"
#include "zbfs/generator/kronecker.hpp"
#include "zbfs/topology/process_grid.hpp"
#include "zbfs/wire/routed/route_choice.hpp"

namespace zbfs::testing {

struct Layout {
  Partition partition;
  GridShape shape;
};

// 1D, and 2D on every R x C factorisation of `ranks`.
// Every route kind, with merging and without (merging first).
inline std::vector<RouteChoice> every_route() {
  std::vector<RouteChoice> all;
  for (const RouteKind kind :
       {RouteKind::kDirect, RouteKind::kSparse, RouteKind::kGrid2, RouteKind::kGridK, RouteKind::kHypercube}) {
    for (const bool dedup : {true, false}) {
      RouteChoice route;
      route.kind = kind;
      route.dedup = dedup;
      all.push_back(route);
    }
  }
  return all;
}

inline std::vector<Layout> all_layouts(int ranks) {
  std::vector<Layout> layouts{{Partition::k1D, {1, ranks}}};
  for (int r = 1; r <= ranks; ++r) {
    if (ranks % r == 0) layouts.push_back({Partition::k2D, {r, ranks / r}});
  }
  // Hybrid in nodes of two ranks (or of one where the count is odd): its own partition
  // through every 2D code path.
  layouts.push_back({Partition::kHybrid, *hybrid_grid(ranks, ranks % 2 == 0 ? 2 : 1)});
  return layouts;
}

// This rank's slice of the generator's edge list.
inline PackedEdgeList my_slice(const KroneckerGenerator& generator, const ProcessGrid& grid) {
  const EdgeSliceRange range = edge_slice_of(generator.num_edges(), grid.rank(), grid.size());
  return generate_edge_slice(generator, range.first, range.count);
}

// Collective: the whole parent array (num_vertices entries) on every rank.
inline std::vector<std::int64_t> gather_parents(const ProcessGrid& grid, std::span<const std::int64_t> owned) {
  const std::uint64_t block = grid.blocks().block();
  std::vector<std::uint64_t> mine(owned.begin(), owned.end());
  std::vector<std::uint64_t> all(block * static_cast<std::uint64_t>(grid.size()));
  grid.world().allgather(std::span<const std::uint64_t>(mine), std::span<std::uint64_t>(all));
  std::vector<std::int64_t> parent(grid.blocks().num_vertices());
  for (int w = 0; w < grid.size(); ++w) {
    const std::uint64_t first = grid.blocks().first_vertex(grid.shape().piece_of_rank(w));
    for (std::uint64_t o = 0; o < block && first + o < parent.size(); ++o) {
      parent[first + o] = static_cast<std::int64_t>(all[static_cast<std::uint64_t>(w) * block + o]);
    }
  }
  return parent;
}

}  // namespace zbfs::testing
