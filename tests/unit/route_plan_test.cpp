// RoutePlan: every route delivers every (source, destination) pair in its hops, moves
// only between the peers its strategy allows, and keeps each rank's peers within the
// published bounds: P - 1 direct, N + M - 2 for a full grid2 (one more on a short last
// row), the sum of (d - 1) for gridk, log2 P for a hypercube of P = 2^k.
#include "zbfs/wire/routed/route_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// Follows every path; returns false if one does not end at its destination.
bool delivers_everything(const RoutePlan& plan) {
  for (int source = 0; source < plan.ranks(); ++source) {
    for (int destination = 0; destination < plan.ranks(); ++destination) {
      int holder = source;
      for (int h = 0; h < plan.hops(); ++h) {
        const int to = plan.next(h, holder, destination);
        if (to < 0 || to >= plan.ranks()) return false;
        holder = to;
      }
      if (holder != destination) return false;
    }
  }
  return true;
}

std::size_t most_peers(const RoutePlan& plan) {
  std::size_t most = 0;
  for (int r = 0; r < plan.ranks(); ++r) most = std::max(most, plan.peers(r).size());
  return most;
}

TEST(RoutePlan, ParsesEveryName) {
  for (const char* name : {"direct", "sparse", "grid2", "gridk", "hypercube"}) {
    ASSERT_TRUE(parse_route_kind(name).has_value()) << name;
    EXPECT_EQ(to_string(*parse_route_kind(name)), name);
  }
  EXPECT_FALSE(parse_route_kind("mesh").has_value());
}

TEST(RoutePlan, EveryRouteDeliversEveryPair) {
  for (int p = 1; p <= 40; ++p) {
    for (const RouteKind kind : {RouteKind::kDirect, RouteKind::kSparse, RouteKind::kGrid2, RouteKind::kHypercube}) {
      EXPECT_TRUE(delivers_everything(RoutePlan(kind, p))) << to_string(kind) << " P=" << p;
    }
    EXPECT_TRUE(delivers_everything(RoutePlan(RouteKind::kGridK, p, {p}))) << p;
  }
  EXPECT_TRUE(delivers_everything(RoutePlan(RouteKind::kGridK, 24, {2, 3, 4})));
  EXPECT_TRUE(delivers_everything(RoutePlan(RouteKind::kGridK, 64, {4, 4, 4})));
}

TEST(RoutePlan, PeersStayWithinEachStrategysBound) {
  for (int p = 2; p <= 40; ++p) {
    EXPECT_EQ(most_peers(RoutePlan(RouteKind::kDirect, p)), static_cast<std::size_t>(p - 1));
    const RoutePlan grid(RouteKind::kGrid2, p);
    const int n = grid.grid_rows();
    const int m = grid.grid_columns();
    const bool full = n * m == p;
    EXPECT_LE(most_peers(grid), static_cast<std::size_t>(n + m - 2)) << "P=" << p << " " << grid.describe();
    // Grid moves only: each peer shares this rank's row or column.
    for (int r = 0; r < p; ++r) {
      for (const int q : grid.peers(r)) EXPECT_TRUE(q / m == r / m || q % m == r % m) << r << "->" << q;
    }
    if (full) {
      EXPECT_EQ(most_peers(grid), static_cast<std::size_t>(n + m - 2)) << p;
    }
    const RoutePlan cube(RouteKind::kHypercube, p);
    const auto bits = static_cast<std::size_t>(std::ceil(std::log2(p)));
    EXPECT_LE(most_peers(cube), bits) << "P=" << p;
    if ((p & (p - 1)) == 0) {
      EXPECT_EQ(most_peers(cube), bits) << "P=" << p;
    }
  }
  EXPECT_EQ(most_peers(RoutePlan(RouteKind::kGridK, 64, {4, 4, 4})), 9u);
  EXPECT_EQ(RoutePlan(RouteKind::kGrid2, 16).describe(), "grid2 4x4");
  EXPECT_EQ(RoutePlan(RouteKind::kGrid2, 7).describe(), "grid2 3x3 (last row short)");
  EXPECT_EQ(RoutePlan(RouteKind::kHypercube, 6).describe(), "hypercube of 4 (+2 handed in)");
}

// Per hop, a rank's `to` are exactly the ranks some path moves an item to from it at
// that hop, and its `from` exactly the ranks some path moves one to it from: the lanes
// of a routed stream, whose last messages go to `to` and are awaited from `from`.
TEST(RoutePlan, HopPeersAreExactlyThePathsMoves) {
  // Every short last row of grid2 from 1 to 42 ranks, cores with 1 to 5 bits and up to
  // 10 handed in, gridk in one to three dimensions.
  for (int p = 1; p <= 42; ++p) {
    std::vector<RoutePlan> plans;
    for (const RouteKind kind : {RouteKind::kDirect, RouteKind::kSparse, RouteKind::kGrid2, RouteKind::kHypercube}) {
      plans.emplace_back(kind, p);
    }
    plans.emplace_back(RouteKind::kGridK, p, std::vector<int>{p});
    if (p == 12) plans.emplace_back(RouteKind::kGridK, p, std::vector<int>{3, 4});
    if (p == 24) plans.emplace_back(RouteKind::kGridK, p, std::vector<int>{2, 3, 4});
    if (p == 30) plans.emplace_back(RouteKind::kGridK, p, std::vector<int>{5, 1, 3, 2});
    for (const RoutePlan& plan : plans) {
      const auto hops = static_cast<std::size_t>(plan.hops());
      // moves[h]: the (from, to) pairs of every path at hop h.
      std::vector<std::set<std::pair<int, int>>> moves(hops);
      for (int source = 0; source < p; ++source) {
        for (int destination = 0; destination < p; ++destination) {
          int holder = source;
          for (std::size_t h = 0; h < hops; ++h) {
            const int to = plan.next(static_cast<int>(h), holder, destination);
            if (to != holder) moves[h].emplace(holder, to);
            holder = to;
          }
        }
      }
      std::vector<std::set<std::pair<int, int>>> to_pairs(hops);
      std::vector<std::set<std::pair<int, int>>> from_pairs(hops);
      for (int r = 0; r < p; ++r) {
        const std::vector<RoutePlan::HopPeers> peers = plan.hop_peers(r);
        ASSERT_EQ(peers.size(), hops);
        for (std::size_t h = 0; h < hops; ++h) {
          EXPECT_TRUE(std::is_sorted(peers[h].to.begin(), peers[h].to.end()));
          EXPECT_TRUE(std::is_sorted(peers[h].from.begin(), peers[h].from.end()));
          for (const int q : peers[h].to) to_pairs[h].emplace(r, q);
          for (const int q : peers[h].from) from_pairs[h].emplace(q, r);
        }
      }
      for (std::size_t h = 0; h < hops; ++h) {
        EXPECT_EQ(to_pairs[h], moves[h]) << plan.describe() << " P=" << p << " hop " << h;
        EXPECT_EQ(from_pairs[h], moves[h]) << plan.describe() << " P=" << p << " hop " << h;
      }
    }
  }
}

TEST(RoutePlan, RefusesGridDimsThatDoNotFitTheRanks) {
  EXPECT_THROW(RoutePlan(RouteKind::kGridK, 8, {2, 2}), Error);
  EXPECT_THROW(RoutePlan(RouteKind::kGridK, 8, {}), Error);
  EXPECT_THROW(RoutePlan(RouteKind::kGridK, 8, {0, 8}), Error);
  EXPECT_THROW(RoutePlan(RouteKind::kDirect, 0), Error);
  EXPECT_NO_THROW(RoutePlan(RouteKind::kGridK, 8, {2, 2, 2}));
}

}  // namespace
}  // namespace zbfs
