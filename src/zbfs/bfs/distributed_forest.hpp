// DistributedForest<V>: forest pruning (graph/peeled_forest.hpp) over MPI, for 1D and 2D.
// Each rank peels the vertices it owns; the rounds are the single-process ones, with the
// count and XOR of a vertex's remaining neighbours kept by its owner (the XOR of a 2D
// row's pieces reduced along the processor column) and each peeled vertex's removal sent
// to the owner of the neighbour it hangs from. Construction is collective (kernel 1).
//
// A search needs no peeling rounds: every peeled vertex also knows its anchor, the core
// vertex its tree hangs from (none for a tree component), and is reached exactly when
// its anchor is. So after the core search one masked bitmap gather tells every rank which
// anchors were reached (the anchors' bits only), and each rank attaches its own peeled
// vertices in one local pass, with the parent (the attach vertex, in the input's ids)
// stored at construction.
//
// Ids: an owned vertex by its sorted offset in this rank's piece; other vertices by
// their global sorted ids (the kernels' ids); parents in the input's global ids.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/topology/process_grid.hpp"
#include "zbfs/wire/exchanger.hpp"

namespace zbfs {

template <class V>
class DistributedForest {
 public:
  static constexpr int kMaxRounds = 64;
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};

  DistributedForest(const ProcessGrid& grid, const DistributedGraph<V>& graph, Exchanger& exchanger,
                    int max_rounds = kMaxRounds);

  // Per owned vertex (sorted offset).
  [[nodiscard]] bool peeled(std::uint64_t offset) const { return peeled_.test(offset); }
  [[nodiscard]] const Bitmap& peeled_bits() const { return peeled_; }
  // The vertex it hangs from (global sorted id); its own id for a tree component's root.
  [[nodiscard]] std::uint64_t attach(std::uint64_t offset) const { return attach_[offset]; }
  // The same vertex in the input's global ids: the parent the attach step writes.
  [[nodiscard]] std::uint64_t attach_original(std::uint64_t offset) const { return attach_original_[offset]; }
  // How many levels of peeled vertices hang below it (0: none); for core vertices too.
  [[nodiscard]] std::uint8_t height(std::uint64_t offset) const { return height_[offset]; }
  // Every owned vertex's attach vertex and height, by sorted offset (a device uploads them).
  [[nodiscard]] std::span<const std::uint64_t> attach_ids() const { return attach_.span(); }
  [[nodiscard]] std::span<const std::uint8_t> heights() const { return height_.span(); }
  // Owned vertices with a tree hanging below them (height > 0).
  [[nodiscard]] const Bitmap& has_trees() const { return has_trees_; }
  // An owned peeled vertex as the attach step reads it: the anchor_position() of the core
  // vertex its tree hangs from (its anchor; kNone in a tree component), its parent (the
  // attach vertex, input id), and its sorted and original offsets.
  struct PeeledVertex {
    std::uint64_t anchor_at;
    std::uint64_t parent;
    V offset;
    V original;
  };
  // Every owned peeled vertex, by ascending original offset: the attach step writes the
  // parent array in order.
  [[nodiscard]] std::span<const PeeledVertex> peeled_vertices() const { return peeled_vertices_.span(); }
  // Every rank's anchors, over the world's vertices laid out as a world gather of each
  // rank's piece (rank r's piece at words [r * words_per_block, ...)): the mask of the
  // one gather a search needs. anchor_position() finds a vertex there.
  [[nodiscard]] std::span<const std::uint64_t> anchor_mask() const { return anchor_mask_; }
  [[nodiscard]] std::uint64_t anchor_position(std::uint64_t global) const;
  // The row group's peeled vertices (row-group local ids): top-down steps never report
  // them to their owners.
  [[nodiscard]] const Bitmap& row_group_peeled() const { return row_group_peeled_; }
  // Over all ranks.
  [[nodiscard]] std::uint64_t num_peeled() const { return num_peeled_; }
  [[nodiscard]] std::uint64_t core_vertices() const { return core_vertices_; }
  [[nodiscard]] std::uint64_t core_directed_edges() const { return core_directed_edges_; }
  [[nodiscard]] int num_rounds() const { return rounds_; }

 private:
  // Peels in rounds; returns each round's owned vertices.
  std::vector<std::vector<V>> peel(const DistributedGraph<V>& graph, Exchanger& exchanger, int max_rounds);
  // Heights, rounds ascending: each peeled vertex raises its attach vertex's.
  void raise_heights(const std::vector<std::vector<V>>& rounds, Exchanger& exchanger);
  // Anchors and attach vertices' input ids, rounds descending: each peeled vertex reads
  // them from its attach vertex's owner.
  void find_anchors(const std::vector<std::vector<V>>& rounds, const DistributedGraph<V>& graph, Exchanger& exchanger);

  const ProcessGrid& grid_;
  std::uint64_t block_;
  std::uint64_t first_vertex_;
  Bitmap peeled_;
  LargeArray<std::uint64_t> attach_;
  LargeArray<std::uint64_t> attach_original_;
  LargeArray<std::uint64_t> anchor_;  // each vertex's anchor (global sorted id): construction only
  LargeArray<std::uint8_t> height_;
  Bitmap has_trees_;
  LargeArray<PeeledVertex> peeled_vertices_;
  std::vector<std::uint64_t> anchor_mask_;
  Bitmap row_group_peeled_;
  std::uint64_t num_peeled_ = 0;
  std::uint64_t core_vertices_ = 0;
  std::uint64_t core_directed_edges_ = 0;
  int rounds_ = 0;
};

extern template class DistributedForest<std::uint32_t>;
extern template class DistributedForest<std::uint64_t>;

}  // namespace zbfs
