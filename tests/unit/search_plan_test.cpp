// The planned searches of zbfs trace (replay/): what a trace asks of SimGrid must be
// replayable (every send met by a receive of its size, every rank at every collective),
// and the plan must account for every vertex a search reaches. That the plan books the
// real job's traffic is checked against real runs (tests/simgrid/check_replay.py).
#include "zbfs/replay/search_plan.hpp"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <sstream>
#include <tuple>

#include "test_graphs.hpp"
#include "zbfs/graph/csr_builder.hpp"
#include "zbfs/replay/search_calls.hpp"

namespace zbfs {
namespace {

Csr<std::uint32_t> kronecker_csr(int scale) {
  const PackedEdgeList edges = testing::pack(scale, testing::kronecker_edges(scale, 16, 3));
  return build_csr<std::uint32_t>(InputEdges(edges), CsrOrder::kInput);
}

struct Layouts {
  Partition partition;
  GridShape shape;
  ColumnGather gather = ColumnGather::kAllgatherv;
  std::optional<RouteChoice> route = std::nullopt;
};

std::vector<Layouts> layouts() {
  return {{Partition::k2D, GridShape{3, 2}},
          {Partition::k2D, GridShape{2, 4}},
          {Partition::k1D, GridShape{1, 5}},
          {Partition::kHybrid, GridShape{4, 2, 2}},
          {Partition::k2D, GridShape{16, 16}},
          {Partition::k2D, GridShape{7, 2}, ColumnGather::kUnion},
          {Partition::k2D, GridShape{4, 3}, ColumnGather::kUnion},
          {Partition::kHybrid, GridShape{4, 2, 2}, ColumnGather::kUnion},
          {Partition::k1D, GridShape{1, 9}, ColumnGather::kAllgatherv, RouteChoice{RouteKind::kGrid2, {}, true}},
          {Partition::k1D, GridShape{1, 6}, ColumnGather::kAllgatherv, RouteChoice{RouteKind::kHypercube, {}, true}},
          {Partition::k2D, GridShape{2, 5}, ColumnGather::kAllgatherv, RouteChoice{RouteKind::kGrid2, {}, true}}};
}

std::uint64_t first_key(const Csr<std::uint32_t>& graph) {
  for (std::uint64_t v = 0; v < graph.num_vertices(); ++v) {
    if (graph.degree(v) > 3) return v;
  }
  return 0;
}

TEST(SearchPlan, TracesMeetEverySendWithAReceiveOfItsSize) {
  const Csr<std::uint32_t> graph = kronecker_csr(9);
  for (const Layouts& l : layouts()) {
    const ReplayLayout layout(l.partition, l.shape, graph.num_vertices(), l.route, l.gather);
    const SearchPlan plan = plan_search(graph, layout, first_key(graph), BfsOptions{}, true);
    const WorkCosts costs{{1e-9, 1e-9, 1e-9, 1e-9, 1e-9, 1e-9, 1e-9, 1e-9, 1e-9, 1e-9, 1e-9}};
    // (from, to, tag) -> sizes in order, as sent and as received.
    std::map<std::tuple<int, int, int>, std::vector<std::uint64_t>> sent;
    std::map<std::tuple<int, int, int>, std::vector<std::uint64_t>> received;
    std::vector<int> collectives(static_cast<std::size_t>(layout.ranks()), 0);
    for (int rank = 0; rank < layout.ranks(); ++rank) {
      std::string text;
      append_search_trace(plan, layout, rank, TraceCharges{&costs, 1e9, 1e-6}, text);
      std::istringstream lines(text);
      std::string line;
      while (std::getline(lines, line)) {
        std::istringstream in(line);
        int who = -1;
        std::string action;
        in >> who >> action;
        ASSERT_EQ(who, rank) << line;
        if (action == "isend" || action == "irecv") {
          int peer = -1;
          int tag = -1;
          std::uint64_t bytes = 0;
          in >> peer >> tag >> bytes;
          ASSERT_TRUE(peer >= 0 && peer < layout.ranks() && peer != rank) << line;
          if (action == "isend") {
            sent[{rank, peer, tag}].push_back(bytes);
          } else {
            received[{peer, rank, tag}].push_back(bytes);
          }
        } else if (action == "allreduce" || action == "barrier") {
          ++collectives[static_cast<std::size_t>(rank)];
        } else {
          ASSERT_TRUE(action == "waitall" || action == "wait" || action == "compute" || action == "sleep") << line;
        }
      }
    }
    EXPECT_EQ(sent, received) << l.shape.to_string();
    EXPECT_EQ(std::count(collectives.begin(), collectives.end(), collectives[0]), layout.ranks());
  }
}

TEST(SearchPlan, EveryReachedVertexIsClaimedOnce) {
  const Csr<std::uint32_t> graph = kronecker_csr(10);
  for (const Layouts& l : layouts()) {
    const ReplayLayout layout(l.partition, l.shape, graph.num_vertices(), l.route, l.gather);
    const SearchPlan plan = plan_search(graph, layout, first_key(graph), BfsOptions{}, true);
    std::uint64_t claimed = 0;
    std::uint64_t discovered = 0;
    for (const PlannedLevel& level : plan.levels) {
      discovered += level.discovered;
      for (const WorkCounts& work : level.work_after_fold)
        claimed += work[static_cast<std::size_t>(WorkKind::kClaimed)];
    }
    EXPECT_EQ(claimed, plan.reached - 1) << l.shape.to_string();
    EXPECT_EQ(discovered, plan.reached - 1);
    EXPECT_EQ(plan.levels.back().discovered, 0U);
    // The claims won by another member's report are at most what was discovered.
    const std::uint64_t from_reports =
        std::accumulate(plan.claimed_from.begin(), plan.claimed_from.end(), std::uint64_t{0});
    EXPECT_LE(from_reports, discovered);
    // 1D's updates along a route bring their parents: nothing to reduce, and every
    // vertex discovered from another rank's report arrives at its owner once.
    EXPECT_EQ(plan.reduce_after, layout.cols() > 1 && !layout.routed_fold());
    if (layout.routed_fold()) {
      std::uint64_t arrivals = 0;
      for (const PlannedLevel& level : plan.levels) {
        arrivals += std::accumulate(level.fold_arrivals.begin(), level.fold_arrivals.end(), std::uint64_t{0});
      }
      EXPECT_GT(arrivals, 0U);
      EXPECT_EQ(from_reports, 0U);
      continue;
    }
    // (At 16 x 16 the 1,024 vertices fill one processor column's pieces: nothing to report.)
    if (layout.cols() > 1 &&
        graph.num_vertices() > layout.blocks().block() * static_cast<std::uint64_t>(layout.rows())) {
      EXPECT_GT(from_reports, 0U);
    }
  }
}

// A union's halvings end with each column's frontier split over the members below its
// largest power of two, each id held once; and it moves at least as many ids as the
// allgatherv's owners send, since every id but the kept ones travels at least once.
TEST(SearchPlan, UnionGatherHoldsEachFrontierIdOnce) {
  const Csr<std::uint32_t> graph = kronecker_csr(10);
  for (const GridShape shape : {GridShape{4, 2}, GridShape{3, 3}, GridShape{6, 1}}) {
    const ReplayLayout layout(Partition::k2D, shape, graph.num_vertices(), std::nullopt, ColumnGather::kUnion);
    const SearchPlan plan = plan_search(graph, layout, first_key(graph), BfsOptions{}, false);
    int p2 = 1;
    while (p2 * 2 <= shape.rows) p2 *= 2;
    std::size_t top_down = 0;
    for (const PlannedLevel& level : plan.levels) {
      if (level.kind != StepKind::kTopDown) {
        EXPECT_TRUE(level.union_held.empty());
        continue;
      }
      ++top_down;
      ASSERT_EQ(level.union_given.size(), static_cast<std::size_t>(layout.union_steps()));
      for (int c = 0; c < shape.cols; ++c) {
        std::uint64_t frontier = 0;
        std::uint64_t held = 0;
        for (int r = 0; r < shape.rows; ++r) {
          const auto piece = static_cast<std::size_t>(layout.piece_at(r, c));
          frontier += level.gathered[piece];
          held += level.union_held[piece];
          if (r >= p2) {
            EXPECT_EQ(level.union_held[piece], 0U);
            EXPECT_EQ(level.union_given[0][piece], level.gathered[piece]);
          }
        }
        EXPECT_EQ(held, frontier) << shape.to_string();
      }
    }
    EXPECT_GT(top_down, 0U);
  }
  const ReplayLayout one_row(Partition::k2D, GridShape{1, 4}, graph.num_vertices(), std::nullopt, ColumnGather::kUnion);
  EXPECT_FALSE(one_row.union_gather());
  EXPECT_EQ(one_row.union_steps(), 0);
}

TEST(SearchPlan, OneRankSendsNothing) {
  const Csr<std::uint32_t> graph = kronecker_csr(8);
  const ReplayLayout layout(Partition::k2D, GridShape{1, 1}, graph.num_vertices());
  const SearchPlan plan = plan_search(graph, layout, first_key(graph), BfsOptions{}, false);
  for (const PhaseTraffic& t : book_search(plan, layout)) {
    EXPECT_EQ(t.messages, 0U);
    EXPECT_EQ(t.bytes, 0U);
  }
  EXPECT_FALSE(plan.reduce_after);
}

TEST(SearchPlan, RefusesAKeyThatIsNoVertex) {
  const Csr<std::uint32_t> graph = kronecker_csr(6);
  const ReplayLayout layout(Partition::k2D, GridShape{2, 2}, graph.num_vertices());
  EXPECT_THROW(plan_search(graph, layout, graph.num_vertices(), BfsOptions{}, false), Error);
}

}  // namespace
}  // namespace zbfs
