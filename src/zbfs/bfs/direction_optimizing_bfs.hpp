// Kernel 2 on one process: a direction-optimizing BFS over a Csr<V> or a CompressedCsr<V>
// (OpenMP parallel; the steps are the same code over either's rows view, the compressed
// lists decoded as they are read).
// Top-down steps claim vertices with an atomic test-and-set on a visited bitmap and
// collect the next frontier in per-thread buffers; bottom-up steps give each thread whole
// 64-vertex words of the bitmaps, so they need no atomics; they test each vertex's hub
// (its highest-degree neighbour) before its list, and never look at vertices without
// edges, which start every search visited. On a degree-ordered Csr
// (graph/csr_builder.hpp) it searches in internal ids and writes parents in the input's
// ids. The object owns the reusable workspace (bitmaps, queues, hubs), so construct it
// once per graph (it is part of kernel 1) and call run() per root.
//
// Given a PeeledForest of the graph (forest pruning, --prune), a search runs on the core
// only: peeled vertices start visited with the edgeless ones, and once the core is
// searched an attach step hangs the trees on in one pass (each peeled vertex one level
// below the vertex it hangs from, reached exactly when its anchor, the core vertex its
// tree hangs from, was). A peeled root first
// walks its chain of attach vertices to the core: the chain's parents point back towards
// the root, and the search starts at the core vertex at the chain's length. A root in a
// tree that hangs from no core vertex is searched whole, unpruned. The depth of a pruned
// search comes from the trees' heights, read as the core's vertices are discovered.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/bfs/bfs_options.hpp"
#include "zbfs/bfs/bfs_stats.hpp"
#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/graph/compressed_csr.hpp"
#include "zbfs/graph/csr.hpp"
#include "zbfs/graph/peeled_forest.hpp"

namespace zbfs {

template <class V>
class DirectionOptimizingBfs {
 public:
  // `forest`: the graph's peeled trees, or nullptr to search the whole graph; it must
  // outlive this object.
  explicit DirectionOptimizingBfs(const Csr<V>& graph, const PeeledForest<V>* forest = nullptr);
  // Over compressed lists (no pruning: the peeled forest is built from plain lists).
  explicit DirectionOptimizingBfs(const CompressedCsr<V>& graph);

  // Fills parent (one entry per vertex): parent[root] = root, unreached = -1; root and
  // parent are in the input's ids whatever the graph's order.
  BfsStats run(std::uint64_t root, std::span<std::int64_t> parent, const BfsOptions& options);
  // The same into the object's own parent array (parent()), which starts every search
  // with every entry -1, so that a search touches only what it reaches: one from a small
  // component costs microseconds whatever n is, where filling n entries costs
  // milliseconds. The caller clears the tree once it is done with it (clear_parent(),
  // after validation, outside the timed search); a search that finds the last tree still
  // there clears it first.
  BfsStats run(std::uint64_t root, const BfsOptions& options);
  // The last run(root, options)'s tree; every entry -1 before the first and after
  // clear_parent() (the array is made with the object, in kernel 1).
  [[nodiscard]] std::span<const std::int64_t> parent() const { return {parent_.data(), parent_.size()}; }
  // Sets back to -1 what the last run(root, options) set: its reached vertices, found
  // from the visited bitmap (n / 64 words), one by one when they are few, else by filling
  // the whole array (which costs less than scattered stores past about n / 32 of them);
  // always the whole array after a pruned search, which hangs trees on in one pass over
  // the forest.
  void clear_parent();

  // Workspace bytes for a graph of n vertices (for memory estimates), its own parent
  // array not included (it stands for the one a caller would hold).
  static std::uint64_t workspace_bytes(std::uint64_t n) { return 4 * (n / 8 + 8) + 3 * n * sizeof(V); }

 private:
  // Both public constructors': the graph's tables and its lists, plain or compressed.
  DirectionOptimizingBfs(const VertexTables<V>& graph, const Csr<V>* plain, const CompressedCsr<V>* packed,
                         std::uint64_t directed_edges, const PeeledForest<V>* forest);
  // A search into `parent`, whose entries are all -1.
  BfsStats search(std::uint64_t root, std::int64_t* parent, const BfsOptions& options);
  // Each step also raises `tallest` to the highest tree hanging below a vertex it
  // discovered, when `height` (a pruned search's tree heights) is not nullptr.
  // `rows`: the graph's rows view (PlainRows or GapRows).
  template <class Rows>
  std::uint64_t top_down_step(const Rows& rows, std::int64_t* parent, std::uint64_t& scout_count,
                              const std::uint8_t* height, std::uint8_t& tallest);
  template <class Rows>
  std::uint64_t bottom_up_step(const Rows& rows, std::int64_t* parent, const std::uint8_t* height,
                               std::uint8_t& tallest);
  // Calls step(rows) with the graph's rows view.
  template <class Step>
  auto with_rows(const Step& step) {
    return plain_ != nullptr ? step(plain_->rows()) : step(packed_->rows());
  }
  // The hubs and the edgeless bitmap, from the rows view.
  template <class Rows>
  void find_hubs(const Rows& rows);
  // Hangs the peeled trees onto the reached core, each peeled vertex whose anchor was
  // reached in one pass, then points the chain's parents back to `root`; returns the
  // vertices attached.
  std::uint64_t attach_trees(std::int64_t* parent, const std::vector<V>& chain, std::uint64_t root);
  void queue_to_front_bitmap();
  void front_bitmap_to_queue();

  // The graph: its vertex tables, and its lists, plain or compressed (one is nullptr).
  const VertexTables<V>& graph_;
  const Csr<V>* plain_ = nullptr;
  const CompressedCsr<V>* packed_ = nullptr;
  std::uint64_t num_directed_edges_ = 0;
  const PeeledForest<V>* forest_;
  // Internal id -> input id, or nullptr when the graph keeps the input's ids.
  const V* original_;
  // Bottom-up steps scan the bitmap words below this one: the words past the last vertex
  // with edges hold only edgeless vertices (all of them, in degree order).
  std::size_t words_with_edges_ = 0;
  // Each vertex's highest-degree neighbour (graph/hub_neighbors.hpp), tested before its
  // list; a vertex without edges holds itself.
  LargeArray<V> hub_;
  // Vertices without edges, which no search reaches: every search starts with them
  // marked visited, so bottom-up steps never look at them.
  Bitmap edgeless_;
  // A pruned search's vertices that start visited: the edgeless and the peeled ones.
  Bitmap pruned_;
  // The parent each peeled vertex takes, in the input's ids, and its anchor (the core
  // vertex its tree hangs from; a peeled vertex in a tree component), in the forest's
  // order: the attach step reads them in order instead of at random.
  LargeArray<V> attach_parent_;
  LargeArray<V> attach_anchor_;
  Bitmap visited_;
  Bitmap front_;
  Bitmap next_;
  LargeArray<V> queue_;
  LargeArray<V> next_queue_;
  std::uint64_t queue_size_ = 0;
  // The edges of the queue's vertices (what the next top-down step reads), as the step
  // that found them counted; unknown (the most) after bottom-up steps.
  std::uint64_t queue_edges_ = 0;
  // run(root, options)'s parents, and what its last search set in them (while
  // `dirty_`): the reached vertices (visited_ but not starts-visited, `last_reached_` of
  // them) and the root; everything when the search was pruned, or when a run into a
  // caller's array has used visited_ since (`clear_all_`).
  LargeArray<std::int64_t> parent_;
  bool dirty_ = false;
  bool clear_all_ = false;
  std::uint64_t last_root_ = 0;
  std::uint64_t last_reached_ = 0;
};

extern template class DirectionOptimizingBfs<std::uint32_t>;
extern template class DirectionOptimizingBfs<std::uint64_t>;

}  // namespace zbfs
