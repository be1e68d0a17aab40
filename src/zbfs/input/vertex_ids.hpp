// VertexIds: how zbfs's dense internal vertex ids map to the ids of the graph's source,
// for results reported in the user's ids. Generated graphs and files read as they are
// map by an offset (Matrix Market ids start at 1); with --relabel the map is a sorted
// table of the file's ids less that offset, split among the ranks by ranges of internal
// ids (rank r holds ids [first(r), first(r + 1))), and the offset is added to what the
// table gives. compact_vertex_ids builds it: a distributed sort of the ids that occur,
// which keeps their order, so internal ids sort as the file's do.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "zbfs/core/edge.hpp"
#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

class VertexIds {
 public:
  VertexIds() = default;
  static VertexIds with_base(std::uint64_t base);
  // Collective: `mine` holds the file ids of internal ids first_of_mine, first_of_mine + 1, ...
  static VertexIds from_table(const Communicator& world, std::vector<std::uint64_t> mine);

  [[nodiscard]] bool relabelled() const { return !first_of_rank_.empty(); }
  [[nodiscard]] std::uint64_t base() const { return base_; }

  // Collective: the source ids of `internal` (any ranks' ids, each below the vertex count).
  [[nodiscard]] std::vector<std::uint64_t> to_source(const Communicator& world,
                                                     std::span<const std::uint64_t> internal) const;
  // Collective, every rank passing the same ids: the internal id of each source id, or
  // nothing when the graph has no such vertex (below n when not relabelled).
  [[nodiscard]] std::vector<std::optional<std::uint64_t>> to_internal(const Communicator& world,
                                                                      std::span<const std::uint64_t> source,
                                                                      std::uint64_t num_vertices) const;

 private:
  friend VertexIds compact_vertex_ids(const Communicator& world, std::span<Edge> edges, std::uint64_t& num_vertices,
                                      std::uint64_t base);

  std::uint64_t base_ = 0;
  std::vector<std::uint64_t> table_;          // relabelled: file ids of my internal range
  std::vector<std::uint64_t> first_of_rank_;  // relabelled: P + 1 bounds of the ranges
};

// Collective: renumbers the ends of every rank's `edges` densely (0 .. n - 1, in the order
// of the original ids) and returns the map back to the source's ids, each an edge's id
// plus `base` (1 for a Matrix Market file's, whose edges hold id - 1); `num_vertices`
// receives n.
VertexIds compact_vertex_ids(const Communicator& world, std::span<Edge> edges, std::uint64_t& num_vertices,
                             std::uint64_t base = 0);

}  // namespace zbfs
