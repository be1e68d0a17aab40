// Kernel 3 over MPI: single-source shortest paths by delta-stepping in 1D and 2D, bucket
// by bucket in step on every rank; run() is collective over the grid's world. The
// relaxation requests travel through the Exchanger's keyed update, so --codec and
// --route apply as they do to BFS; the distances equal a Dijkstra's bit for bit on every
// rank count, partition, codec and route. docs/sssp.md explains the rounds, the
// sub-buckets, the pushes and pulls. Parents travel in 32 bits: fewer than 2^32 vertices.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/sssp/sssp_stats.hpp"
#include "zbfs/topology/process_grid.hpp"
#include "zbfs/wire/exchanger.hpp"

namespace zbfs {

// When DistributedSssp's light rounds relax a bucket a sub-bucket at a time (its lowest
// sub-bucket that holds a vertex to relax, a round each).
struct SubBucketPolicy {
  // While the bucket has this many vertices to relax per rank, over all ranks; smaller
  // buckets take all of them in each round.
  std::uint64_t min_per_rank = 1024;
  // Once a bucket taken by sub-buckets relaxed its vertices fewer than 1 + this times each
  // on average, the later buckets of the search are taken whole (0: never): sub-buckets
  // pay only where later rounds find shorter paths (the bucket with the hubs); past it
  // they only add rounds.
  double stop_below = 0.05;
};

class DistributedSssp {
 public:
  using Vertex = std::uint32_t;

  // A bucket's light rounds relax the lowest sixteenth of it that holds a vertex, while
  // the bucket holds many (the bucket with the hubs, reached through light edges a hop a
  // round): taken all at once, its vertices are relaxed several times each, as later
  // rounds find them shorter paths. Sixteenths relaxed the fewest entries for the rounds
  // they add (docs/performance.md, "Figures behind the code").
  static constexpr std::uint64_t kSubBuckets = 16;

  // `graph` must be weighted (DistributedGraph built with weights); it, `grid`,
  // `exchanger` and `metrics` must outlive this. `delta`: the bucket width (> 0), or unset
  // for the one-process kernel's default over the whole graph. The graph's forward rows
  // are put in the order this search reads (DistributedGraph::order_forward_rows: light
  // edges first; heavy ones by weight where it pulls, by neighbour where it only pushes),
  // which a BFS does not mind. Collective.
  // `sub_buckets`: see SubBucketPolicy (tests pass {0, 0} to take every bucket a
  // sub-bucket at a time whatever its size).
  DistributedSssp(const ProcessGrid& grid, DistributedGraph<Vertex>& graph, Exchanger& exchanger, PhaseMetrics& metrics,
                  std::optional<double> delta = {}, SubBucketPolicy sub_buckets = {});

  [[nodiscard]] double delta() const { return delta_; }

  // Searches from `root` (an input id). `parent` and `distance` have one entry per vertex
  // of this rank's piece (blocks().block()), by input offset: the parent's input id
  // (root: itself; -1 unreached) and the distance (+infinity unreached). Collective.
  SsspStats run(std::uint64_t root, std::span<std::int64_t> parent, std::span<float> distance);

 private:
  // A vertex whose edges a pass relaxes: its column-group local index and distance bits.
  struct Source {
    Vertex col_local;
    std::uint32_t bits;
  };
  // A piece of a heavy pass: entries [first, end) of source `source`'s list.
  struct HeavyPiece {
    std::uint32_t source;  // index into the pass's sources
    std::uint64_t first;
    std::uint64_t end;
  };
  // An owned vertex with heavy edges, and the lightest of them.
  struct OpenVertex {
    Vertex offset;
    float lightest;
  };
  struct alignas(64) ThreadWork {
    std::vector<std::vector<KeyedItem>> outgoing;            // by fold member
    std::vector<std::pair<std::uint64_t, Vertex>> improved;  // (bucket, owned offset)
    std::vector<OpenVertex> still_open;                      // a pull's vertices left open
    std::uint64_t edges = 0;
    std::uint64_t improvements = 0;
    std::uint64_t heavy_reached = 0;  // heavy edges of owned vertices it reached first
  };

  // The bucket of a distance.
  [[nodiscard]] std::uint64_t bucket_of(std::uint32_t bits) const {
    const double scaled = static_cast<double>(std::bit_cast<float>(bits)) * inverse_delta_;
    return scaled < 1.8e19 ? static_cast<std::uint64_t>(scaled) : ~std::uint64_t{0} - 1;
  }
  // A distance's sub-bucket within the current bucket (0 to kSubBuckets - 1).
  [[nodiscard]] std::uint64_t sub_bucket_of(std::uint32_t bits) const {
    const double scaled = static_cast<double>(std::bit_cast<float>(bits)) * inverse_sub_delta_;
    const std::uint64_t sub = scaled < 1.8e19 ? static_cast<std::uint64_t>(scaled) : ~std::uint64_t{0};
    const std::uint64_t first = current_ * kSubBuckets;
    return sub < first ? 0 : std::min(sub - first, kSubBuckets - 1);
  }
  // Lowers owned vertex `offset`'s word to `word` if its distance is strictly lower, and
  // files it in its bucket.
  void improve(ThreadWork& work, std::uint64_t offset, std::uint64_t word);
  // Offers distance `bits` through `parent` (input id) to row-group vertex `to`.
  void offer(ThreadWork& work, Vertex to, float distance, std::uint32_t parent);
  // The pass's sources along the column (2D; 1D: this rank's own), from owned offsets.
  std::vector<Source> expand(std::span<const Vertex> owned);
  // Relaxes the light (or heavy) edges of `sources`, sends the requests for other ranks'
  // vertices to their owners and applies those that arrive. Collective.
  void relax(std::span<const Source> sources, bool light, SsspStats& stats);
  // Tells the ranks along the row which vertices the bucket settled, so that nothing is
  // sent to them again (most heavy relaxations lead to settled vertices), and for a pull
  // at what distance. Collective.
  void share_settled(bool with_distances);
  // Each open owned vertex scans its heavy edges lighter than its distance's gap to the
  // bucket (ordered by weight: a prefix) for neighbours the bucket settled. Local.
  void pull_heavy(SsspStats& stats);
  // Files the vertices the threads lowered into their buckets.
  void file_improved();
  void file(std::uint64_t bucket, Vertex offset);
  // This rank's lowest bucket from `from` on that holds a vertex whose distance lies in
  // it (stale entries are dropped on the way); UINT64_MAX when none.
  std::uint64_t lowest_bucket(std::uint64_t from);
  // The first distance bits whose sub-bucket count from zero (distance * kSubBuckets /
  // delta, rounded down) is `sub` or more: bucket b's distances are the bits in
  // [first_bits_of(b * kSubBuckets), first_bits_of((b + 1) * kSubBuckets)).
  [[nodiscard]] std::uint32_t first_bits_of(std::uint64_t sub) const;
  // A vertex gathered with a distance in the current bucket (a round's or a push's
  // source, a pull's settled neighbour) travels as one word: its id above the distance's
  // offset from the bucket's first bits, in as many bits as the bucket's span needs
  // rather than the distance's whole 32, so that a codec's gaps between words are narrow.
  struct BucketWords {
    std::uint32_t first = 0;
    unsigned shift = 32;
    [[nodiscard]] std::uint64_t word(std::uint64_t id, std::uint32_t bits) const {
      const std::uint32_t offset = bits - first;
      if (bits < first || (std::uint64_t{offset} >> shift) != 0) {
        throw Error(ExitCode::kFailure, "sssp: a distance gathered lies outside the current bucket");
      }
      return id << shift | offset;
    }
    [[nodiscard]] std::uint64_t id(std::uint64_t word) const { return word >> shift; }
    [[nodiscard]] std::uint32_t bits(std::uint64_t word) const {
      return first + static_cast<std::uint32_t>(word & ((std::uint64_t{1} << shift) - 1));
    }
  };
  [[nodiscard]] BucketWords bucket_words() const {
    return {sub_first_bits_[0],
            static_cast<unsigned>(std::bit_width(sub_first_bits_[kSubBuckets] - sub_first_bits_[0]))};
  }
  // Moves the far entries now inside the window into it (after the current bucket moved).
  void refill_window();
  // A relaxation's local part: the light edges of a round's sources (each from its lowest
  // distance), or the heavy edges of a bucket's settled vertices in pieces shared among
  // the threads; requests for other ranks' vertices wait in the threads' work.
  void relax_light(std::span<const Source> sources);
  void relax_heavy(std::span<const Source> sources);
  // The parent a request from `u` (a column-group local id) carries.
  [[nodiscard]] std::uint32_t request_parent(Vertex u) const;
  // A search's start: every vertex unreached, the root filed in bucket 0.
  void begin_search(std::uint64_t root);
  // The current bucket's light rounds until no rank has a vertex left to relax in it
  // (by sub-buckets while they pay: `by_sub_buckets`); returns whether its heavy edges are
  // pulled rather than pushed.
  bool settle_bucket(SsspStats& stats, bool& by_sub_buckets);
  // A round's steps: the bucket's bin filed by sub-bucket; then the round's frontier from
  // sub-buckets 0..limit (the vertices settled for the first time added to settled_ and
  // their heavy entries to `push_volume`; returns how many).
  void file_by_sub_bucket();
  std::uint64_t take_round(std::uint64_t limit, std::uint64_t& push_volume);
  // Whether `v`, filed in sub-bucket `sub`, is still there and not relaxed at its distance.
  [[nodiscard]] bool relaxable(Vertex v, std::uint64_t sub) const;
  // The search's parents and distances by input offset, in input ids; returns the
  // vertices reached here.
  std::uint64_t export_tree(std::span<std::int64_t> parent, std::span<float> distance) const;

  const ProcessGrid& grid_;
  const DistributedGraph<Vertex>& graph_;
  Exchanger& exchanger_;
  PhaseMetrics& metrics_;
  TraversalLayout layout_;
  std::uint64_t block_;
  std::uint64_t first_vertex_;
  std::uint64_t col_base_;   // this rank's piece in the column group's local numbering
  std::uint64_t fold_rank_;  // this rank's member index along the row
  std::uint64_t col_first_global_;
  bool filter_sent_;
  double delta_ = 1;
  double inverse_delta_ = 1;
  std::uint64_t sub_bucket_min_ = 0;
  double sub_bucket_stop_below_ = 0;
  double inverse_sub_delta_ = 1;
  std::vector<Vertex> sub_bins_[kSubBuckets];  // the current bucket's vertices to relax, by sub-bucket
  // Where the current bucket's sub-buckets begin, in distance bits (a compare where each
  // test of a vertex's bucket took a conversion and a multiply), and where it ends.
  std::uint32_t sub_first_bits_[kSubBuckets + 1] = {};
  // Each forward row's first heavy entry (rows are ordered by weight: light ones first).
  LargeArray<std::uint64_t> heavy_start_;
  bool own_rows_ = false;     // 1D: a rank's rows are its own vertices with all their neighbours
  bool row_parents_ = false;  // and the row group's input ids are at hand: parents travel as row-group indices
  bool pull_possible_ = false;
  // Row group, 1D: the vertices the current bucket settled (set by its share when it
  // pulls), the share's words in id order, and the set bits in pulled_'s words before
  // each word: a vertex's distance is the entry its rank among the set bits names (a
  // 64 KB index and the bucket's entries at scale 20, where an array over every vertex
  // was a random read in 4 MB, a fifth of a pull's time), in pulled_words_.
  Bitmap pulled_;
  std::vector<std::uint64_t> pulled_entries_;
  BucketWords pulled_words_;
  std::vector<std::uint32_t> pulled_before_;
  std::vector<OpenVertex> with_heavy_edges_;  // owned vertices with heavy edges, in order
  std::uint64_t heavy_entries_ = 0;           // and their heavy entries
  // Those a pull still visits in this search: not settled, and unreached or with a gap
  // to the current bucket above their lightest heavy edge.
  std::vector<OpenVertex> unsettled_;
  // For the choice between pushing and pulling a bucket's heavy edges (1D): the heavy
  // edges of owned vertices not reached yet in this search.
  std::uint64_t unreached_heavy_ = 0;
  // An owned vertex's search state in one 16-byte slot, so that building a round's
  // frontier reads one line a vertex (it read five arrays: a fifth of a search's time on
  // one rank).
  struct OwnedState {
    std::uint64_t word;     // distance bits << 32 | parent (input id)
    std::uint32_t relaxed;  // the distance bits a light round last relaxed from (+inf: none yet)
    std::uint32_t heavy;    // its heavy entries (what pushing them scans)
  };
  LargeArray<OwnedState> owned_;    // by sorted offset
  LargeArray<std::uint32_t> sent_;  // row group: the smallest distance bits sent this search
  Bitmap settled_here_;             // row group: vertices of buckets already settled
  Bitmap settled_mark_;             // owned: this pass's settled set, while it is put in order
  std::vector<Vertex> settled_;     // this pass's vertices, for their heavy edges
  std::vector<Vertex> frontier_;
  // Buckets [current_, current_ + kWindow) by slot bucket % kWindow; later ones in far_.
  static constexpr std::uint64_t kWindow = 1024;
  std::uint64_t current_ = 0;
  std::vector<std::vector<Vertex>> window_;
  std::vector<std::pair<std::uint64_t, Vertex>> far_;
  std::vector<ThreadWork> threads_;
  bool shared_;  // threads share the arrays (more than one): atomic updates
  std::vector<KeyedItem> items_;
  std::vector<std::uint64_t> counts_;
};

}  // namespace zbfs
