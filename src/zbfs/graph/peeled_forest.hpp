// PeeledForest<V>: forest pruning (the SC24 addition to the RIKEN/Fugaku Graph500 code).
// A Kronecker graph hangs about a fifth of its vertices with edges off its 2-core as
// trees: vertices of degree 1, the vertices left with degree 1 once those are gone, and
// so on. A BFS from a core vertex reaches a hanging vertex only through the neighbour it
// hangs from (its "attach" vertex), one level further, so the search can run on the core
// alone, with the peeled vertices marked visited from the start, and attach the trees
// afterwards, round by round, from the core outwards.
//
// Peeling runs in synchronous rounds: a round removes every vertex whose remaining
// degree is 1 (or 0, the last vertex of a tree component), and records the one neighbour
// it still had. The remaining neighbour is tracked without scanning lists: each vertex
// keeps the count and the XOR of its remaining neighbours, so when the count reaches 1
// the XOR is that neighbour. Two adjacent vertices left with only each other (the last
// edge of a tree component) are removed together; the smaller id becomes the component's
// root and the larger hangs from it. Rounds stop at `max_rounds`: whatever is left is
// searched as core, which is correct for any number of rounds (a long path just stays
// partly unpeeled rather than costing a round per vertex).
//
// Local, no MPI; OpenMP parallel. Ids are the graph's (internal ids of a degree-ordered
// Csr).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/large_array.hpp"

namespace zbfs {

template <class V>
class PeeledForest {
 public:
  // Rounds past this leave the rest in the core; heights then fit a byte.
  static constexpr int kMaxRounds = 64;

  PeeledForest() = default;
  PeeledForest(const std::uint64_t* offsets, const V* adjacency, std::uint64_t num_vertices,
               int max_rounds = kMaxRounds);

  [[nodiscard]] std::uint64_t num_vertices() const { return peeled_.size(); }
  [[nodiscard]] std::uint64_t num_peeled() const { return order_.size(); }
  [[nodiscard]] bool peeled(std::uint64_t v) const { return peeled_.test(v); }
  [[nodiscard]] const Bitmap& peeled_bits() const { return peeled_; }
  // The neighbour a peeled vertex hangs from; itself for the root of a tree component
  // (which no search from the core reaches). Meaningless for core vertices.
  [[nodiscard]] V attach(std::uint64_t v) const { return attach_[v]; }
  // How many levels of peeled vertices hang below v (0: none), for the search's depth.
  [[nodiscard]] std::uint8_t height(std::uint64_t v) const { return height_[v]; }
  [[nodiscard]] const std::uint8_t* heights() const { return height_.data(); }
  // The peeled vertices, the last round first (the order attaching needs: a vertex hangs
  // from one peeled in a later round, or from the core), each round ascending by id.
  [[nodiscard]] std::span<const V> order() const { return order_.span(); }
  // order()[round_starts()[i], round_starts()[i + 1]) is one round.
  [[nodiscard]] std::span<const std::uint64_t> round_starts() const { return round_starts_; }
  [[nodiscard]] std::size_t num_rounds() const { return round_starts_.empty() ? 0 : round_starts_.size() - 1; }
  // Vertices with edges that were not peeled, and their degrees summed (each core edge
  // twice, an edge to a peeled vertex once): the search's vertices and edges, as the
  // direction switch weighs them.
  [[nodiscard]] std::uint64_t core_vertices() const { return core_vertices_; }
  [[nodiscard]] std::uint64_t core_directed_edges() const { return core_directed_edges_; }

  // The bits a pruned search starts visited: `edgeless` (the graph's vertices without
  // edges, one bit each) and the peeled vertices.
  [[nodiscard]] Bitmap start_visited(const Bitmap& edgeless) const;

  // What the attach step reads, in order()'s order: each peeled vertex's parent (the
  // vertex it hangs from, through `original`, internal -> input ids, when not nullptr)
  // and its anchor, the core vertex its tree hangs from (reached exactly when the anchor
  // is); a tree component's vertices get a peeled anchor, which no core search reaches.
  void attach_tables(const V* original, LargeArray<V>& parent, LargeArray<V>& anchor) const;

  // Where a pruned search from `root` starts: the core vertex at the end of its chain of
  // peeled vertices (root first, in `chain`, the core vertex not included), or nullopt
  // for a root in a tree component, which is searched whole.
  [[nodiscard]] std::optional<V> core_start(V root, std::vector<V>& chain) const;
  // The depth the trees along `chain` (to `start`) reach, from the root's level 0, the
  // trees the chain came up through left out: a pruned search's depth before its core
  // levels. `offsets`, `adjacency`: the graph's lists.
  [[nodiscard]] std::uint64_t chain_depth(const std::uint64_t* offsets, const V* adjacency, const std::vector<V>& chain,
                                          V start) const;

  // Bytes at the peak of construction and kept afterwards, for n vertices (for memory
  // estimates; the peeled list counted at its largest, every vertex).
  static std::uint64_t peak_bytes(std::uint64_t n) { return n * (3 * sizeof(V) + 2) + n / 8 + 64; }

 private:
  Bitmap peeled_;
  LargeArray<V> attach_;
  LargeArray<std::uint8_t> height_;
  LargeArray<V> order_;
  std::vector<std::uint64_t> round_starts_;
  std::uint64_t core_vertices_ = 0;
  std::uint64_t core_directed_edges_ = 0;
};

extern template class PeeledForest<std::uint32_t>;
extern template class PeeledForest<std::uint64_t>;

}  // namespace zbfs
