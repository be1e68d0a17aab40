// The Graph500 validator over MPI, checking the same five rules as validate_bfs_tree
// (validator.hpp) without any rank holding the whole graph or parent array: tree levels
// come from rounds in which every vertex reads its parent's level from the parent's
// owner; every rank then goes through its share of the input edge list (the slice kernel
// 1 was built from, or the generator's share produced again) and reads the level and
// parent of both ends of each tuple from their owners, in batches; confirmations of
// parent links go back to the owners. Every read and confirmation goes through the
// exchanger, so a route relays them (a hub vertex asked for by many ranks is answered
// once per merge point) and the codecs apply. Collective; every rank gets the same report.
#pragma once

#include <cstdint>
#include <span>

#include "zbfs/core/input_edges.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/topology/process_grid.hpp"
#include "zbfs/validate/validator.hpp"
#include "zbfs/wire/exchanger.hpp"

namespace zbfs {

// Collective: the depth of every vertex of this rank's piece in the parent tree of
// `root` (-1 where unreached, or where the parents do not lead to the root).
LargeArray<std::int64_t> bfs_tree_levels(const ProcessGrid& grid, Exchanger& exchanger, std::uint64_t root,
                                         std::span<const std::int64_t> parent);

// `parent`: this rank's piece of the parent array, as DistributedBfs::run fills it.
// `slice`: this rank's part of the input edges (the ranks' parts make up the list, in any
// order; stored, or produced again round by round).
ValidationReport validate_distributed_bfs_tree(const ProcessGrid& grid, const InputEdges& slice, Exchanger& exchanger,
                                               std::uint64_t root, std::span<const std::int64_t> parent,
                                               PhaseMetrics& metrics,
                                               std::uint64_t edges_per_round = std::uint64_t{1} << 20);

// Kernel 3's tree by the rules of validate_sssp_tree (sssp_validator.hpp), distributed as
// the BFS validator is: levels from the parent chains (rule 1), then every rank reads the
// (level, parent, distance) of both ends of each of its weighted tuples from their
// owners, checks the triangle rule and sends each tree link's vote (the distance
// confirmed, or only the link) to the child's owner. `distance`: this rank's piece,
// beside `parent`; `slice` must carry weights. Collective; every rank gets the same
// report.
ValidationReport validate_distributed_sssp_tree(const ProcessGrid& grid, const InputEdges& slice, Exchanger& exchanger,
                                                std::uint64_t root, std::span<const std::int64_t> parent,
                                                std::span<const float> distance, PhaseMetrics& metrics,
                                                std::uint64_t edges_per_round = std::uint64_t{1} << 20);

}  // namespace zbfs
