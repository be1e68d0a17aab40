// Kernel 3 on one process: single-source shortest paths by delta-stepping (Meyer and
// Sanders), OpenMP parallel, over a degree-ordered Csr and its list weights
// (graph/list_weights.hpp). Distances are float sums along the path, equal to a
// Dijkstra's bit for bit; docs/sssp.md explains the buckets, the light and heavy edges,
// the pushes and pulls, and why the tree has no cycle. Internal ids are 32-bit (fewer than 2^32 vertices).
// Construct once per graph (its workspace is part of kernel 1), then run() per root.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/graph/csr.hpp"
#include "zbfs/sssp/bucket_bins.hpp"
#include "zbfs/sssp/sssp_stats.hpp"

namespace zbfs {

class DeltaStepping {
 public:
  using Vertex = std::uint32_t;

  // `weights`: one per directed entry of `graph`, which must outlive this. The search
  // keeps the lists in its own order, a neighbour and a weight an entry: it takes the
  // weights over (freed once its lists are built), or reads them from a span. `delta`:
  // the bucket width (> 0), or unset for the default below.
  DeltaStepping(const Csr<Vertex>& graph, LargeArray<float> weights, std::optional<double> delta = {});
  DeltaStepping(const Csr<Vertex>& graph, std::span<const float> weights, std::optional<double> delta = {});

  // The default bucket width: the graph's mean weight over its mean degree (among
  // vertices with edges) times kDeltaDegrees, so that a vertex has about that many light
  // edges.
  static constexpr double kDeltaDegrees = 2.0;
  // The smallest bucket width a search uses: a path's distance, at most `vertices` times
  // the largest weight, stays below 2^56 widths, so that bucket (and sixteenth) numbers
  // are exact integers. A --delta below it changes nothing the user can see: each
  // distinct float distance has a bucket of its own either way.
  static double smallest_delta(double largest_weight, std::uint64_t vertices) {
    return largest_weight * static_cast<double>(vertices) / 72057594037927936.0;  // 2^56
  }
  [[nodiscard]] double delta() const { return delta_; }

  // Searches from `root` (an input id) and writes the tree in the input's ids: parent[root]
  // = root, parent -1 and distance +infinity where unreached. Both spans hold one entry
  // per vertex.
  SsspStats run(std::uint64_t root, std::span<std::int64_t> parent, std::span<float> distance);

  // Workspace bytes for a graph of n vertices and `entries` directed entries (memory
  // estimates): the vertices' words, the final and pulled bits, the vertices with heavy
  // edges (twice, and each thread's share once), and the lists (neighbour and weight) in
  // the search's order (the weights it is given, read while the lists are built and then
  // freed, are the caller's to count).
  static std::uint64_t workspace_bytes(std::uint64_t n, std::uint64_t entries) {
    return n * (32 + 3 * sizeof(OpenVertex)) + n / 4 + entries * 8;
  }

 private:
  // A vertex with heavy edges and the lightest of them: what a pull visits.
  struct OpenVertex {
    Vertex vertex;
    float lightest;
  };
  // A settled vertex's list entries [first, first + kHeavyPiece) (or to its end).
  static constexpr std::uint64_t kHeavyPiece = 256;
  // How far ahead the heavy pass asks for memory: a neighbour's word so many list
  // entries on, a piece's list so many pieces on (its first words half as many).
  static constexpr std::uint64_t kPrefetchAhead = 16;
  static constexpr std::int64_t kPiecesAhead = 4;
  // A thread settles the vertices it found for the current bucket itself while they are
  // fewer than this (bucket fusion).
  static constexpr std::size_t kFusionLimit = 1000;
  struct HeavyPiece {
    Vertex vertex;
    std::uint64_t first;
  };
  struct alignas(64) ThreadBins {
    BucketBins<Vertex> bins;             // vertices by bucket
    std::vector<Vertex> settled;         // this pass's vertices, for their heavy edges
    std::vector<HeavyPiece> pieces;      // their lists' pieces
    std::vector<Vertex> fused;           // the bucket's vertices a thread settles alone
    std::vector<Vertex> finished;        // settled in this bucket's passes, final once it is left
    std::vector<OpenVertex> still_open;  // what a pull keeps for the next one
    std::uint64_t pass_volume = 0;       // the heavy entries this pass's settled vertices have
    std::uint64_t heavy_reached = 0;     // the heavy entries of the vertices first reached
    std::uint64_t light_edges = 0;
    std::uint64_t heavy_edges = 0;
    std::uint64_t improvements = 0;
  };

  // One search's team: its state, and the steps every thread of the parallel region
  // takes (delta_stepping.cpp).
  class Team;

  // Writes the tree in the input's ids and sets the words back to unreached for the next
  // search; returns the reached vertices.
  std::uint64_t export_tree(std::span<std::int64_t> parent, std::span<float> distance);
  // The next settle pass: its number marks the vertices that joined its settled list.
  void next_pass();
  // entries_, the vertices' list fields and with_heavy_ from the graph's lists and
  // `weights` (freed once read).
  void order_lists(LargeArray<float> weights);
  // Rows [begin, end) of the lists into entries_ and their words.
  void order_rows(const LargeArray<float>& weights, std::int64_t begin, std::int64_t end);

  const Csr<Vertex>& graph_;
  const Vertex* original_;  // internal id -> input id, or nullptr
  double delta_ = 1;
  // A list entry: the neighbour and the edge's weight side by side (one cache line
  // holds both).
  struct Entry {
    Vertex to;
    float weight;
  };
  // The lists in the search's order, on the graph's offsets: each row's light edges
  // (w < delta_) in list order, then its heavy ones by weight (a pull reads a prefix).
  LargeArray<Entry> entries_;
  std::vector<OpenVertex> with_heavy_;  // every vertex with heavy edges
  std::uint64_t heavy_entries_ = 0;     // all of their heavy entries
  // What a search reads of a vertex, in one cache line (a settled vertex costs one miss
  // here and one in its list, not one in each of five arrays).
  struct alignas(32) VertexWords {
    std::uint64_t state;    // distance bits << 32 | parent, or kUnreached
    std::uint32_t relaxed;  // the distance bits a light round last relaxed its light edges from
    std::uint32_t mark;     // the pass in which it last joined a settled list
    std::uint64_t first;    // its list's first entry
    std::uint32_t light;    // its light entries, from first
    std::uint32_t heavy;    // its heavy entries, after them
    [[nodiscard]] std::uint64_t heavy_start() const { return first + light; }
    [[nodiscard]] std::uint64_t end() const { return first + light + heavy; }
  };
  LargeArray<VertexWords> words_;
  std::uint32_t pass_ = 0;  // the current pass (one per bucket settled)
  Bitmap final_;            // vertices of buckets the search has left
  std::vector<ThreadBins> threads_;
  std::vector<Vertex> frontier_;
  std::vector<Vertex> next_frontier_;
  std::vector<HeavyPiece> pieces_;  // every thread's, for the heavy pass
  // A search's pulls: the vertices they may still help (from with_heavy_ at the first
  // pull), the heavy entries of the vertices not reached yet, and the vertices the
  // current pass settled.
  std::vector<OpenVertex> open_;
  bool open_ready_ = false;
  std::uint64_t unreached_heavy_ = 0;
  Bitmap pulled_;
};

}  // namespace zbfs
