// RoutePlan: the path an item takes from its source rank to its destination rank under
// each routing strategy of a sparse exchange, as a fixed number of hops. At hop h, a rank
// holding an item for destination d forwards it to next(h, holder, d) (itself: the item
// stays). No MPI here: the plan is arithmetic on ranks, shared by the exchange and tests.
//
//   direct, sparse  one hop, straight to the destination (direct: an alltoallv with its
//                   count all-to-all; sparse: synchronous sends, probes and a
//                   non-blocking barrier, no counts).
//   grid2           ranks in rows of M = ceil(sqrt(P)) (the last row may be short).
//                   Hop 0 moves along the source's column to the relay in the
//                   destination's row, hop 1 along that row to the destination: a rank
//                   talks to N + M - 2 peers instead of P - 1. Where the relay would sit
//                   in the short last row's missing part, the item goes the other way
//                   round (along the row to the destination's column first).
//   gridk           a k-dimensional grid d0 x d1 x ... (product P): hop j moves along
//                   dimension j to the destination's coordinate.
//   hypercube       the largest power of two D <= P: ranks D.. first hand their items to
//                   rank r - D, then log2(D) hops each fix one bit of the core
//                   destination, then items for ranks D.. are handed back.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zbfs {

enum class RouteKind { kDirect, kSparse, kGrid2, kGridK, kHypercube };

// What a routed exchange does with items that share a destination and a key: keep them
// all, or only the one with the smallest value (semantic deduplication).
enum class Merge { kKeepAll, kOnePerKey };

// Whether items pass through ranks other than their source and destination (grid2,
// gridk, hypercube): one hop (direct, sparse) talks to every rank anyway.
[[nodiscard]] inline bool relays(RouteKind kind) { return kind != RouteKind::kDirect && kind != RouteKind::kSparse; }

std::string_view to_string(RouteKind kind);
std::optional<RouteKind> parse_route_kind(std::string_view text);

class RoutePlan {
 public:
  // `dims`: gridk's dimensions (their product must be `ranks`); ignored by the others.
  // Throws Error on impossible dims.
  RoutePlan(RouteKind kind, int ranks, std::vector<int> dims = {});

  [[nodiscard]] RouteKind kind() const { return kind_; }
  [[nodiscard]] int ranks() const { return ranks_; }
  [[nodiscard]] int hops() const;
  // Where `holder` sends an item for `destination` at hop `hop` (holder: it stays).
  [[nodiscard]] int next(int hop, int holder, int destination) const;
  // Who `me` may send to and hear from at one hop: the ranks an item it can hold at
  // that hop goes to, and the ranks that can hand it one; sorted, without `me`.
  struct HopPeers {
    std::vector<int> to;
    std::vector<int> from;
  };
  // Per hop, in closed form: O(P) for direct and sparse, O(sqrt P) for grid2, the
  // dimensions' sizes for gridk, one or two ranks a hop for the hypercube.
  [[nodiscard]] std::vector<HopPeers> hop_peers(int me) const;
  // The ranks `me` may send to at some hop: the peers it can ever have to start a
  // message to, sorted (for the start-up bounds: tests and docs).
  [[nodiscard]] std::vector<int> peers(int me) const;

  // grid2's arrangement: rows of `columns` ranks (the last one may be short).
  [[nodiscard]] int grid_rows() const { return (ranks_ + columns_ - 1) / columns_; }
  [[nodiscard]] int grid_columns() const { return columns_; }
  [[nodiscard]] const std::vector<int>& dims() const { return dims_; }
  [[nodiscard]] std::string describe() const;
  static std::string describe_dims(const std::vector<int>& dims);  // "2x3x4"
  // The dims' product, saturated: any product past kMaxDimsProduct reads as one more
  // than it (no rank count is that large), so user input cannot overflow it.
  static constexpr long long kMaxDimsProduct = 1LL << 31;
  static long long dims_product(const std::vector<int>& dims);

 private:
  [[nodiscard]] int next_grid2(int hop, int holder, int destination) const;
  [[nodiscard]] int next_gridk(int hop, int holder, int destination) const;
  [[nodiscard]] int next_hypercube(int hop, int holder, int destination) const;
  void grid2_hop_peers(int me, std::vector<HopPeers>& peers) const;

  RouteKind kind_;
  int ranks_;
  std::vector<int> dims_;  // gridk
  int columns_ = 1;        // grid2
  int core_ = 1;           // hypercube: the largest power of two <= ranks
  int core_bits_ = 0;
};

}  // namespace zbfs
