#include "zbfs/graph/peeled_forest.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <deque>
#include <set>
#include <vector>

#include "test_graphs.hpp"

namespace zbfs {
namespace {

using V = std::uint32_t;

// The independent truth: sequential peeling with a queue, no rounds. Returns, per
// vertex, whether it is in the 2-core or has no edges (true) or is peeled (false).
std::vector<bool> two_core_or_edgeless(const Csr<V>& graph) {
  const std::uint64_t n = graph.num_vertices();
  std::vector<std::uint64_t> degree(n);
  std::vector<bool> kept(n, true);
  std::deque<std::uint64_t> queue;
  for (std::uint64_t v = 0; v < n; ++v) {
    degree[v] = graph.degree(v);
    if (degree[v] == 1) queue.push_back(v);
  }
  while (!queue.empty()) {
    const std::uint64_t v = queue.front();
    queue.pop_front();
    if (!kept[v]) continue;
    kept[v] = false;
    for (const V w : graph.neighbors(v)) {
      if (kept[w] && --degree[w] <= 1) queue.push_back(w);
    }
  }
  return kept;
}

// Checks a forest's invariants against the graph: each peeled vertex hangs from a
// neighbour that is in the core or peeled in a later round (earlier in order()), or is
// the root of a tree component; heights are those of the trees hanging below each
// vertex; the core's counts add up.
void expect_consistent(const Csr<V>& graph, const PeeledForest<V>& forest) {
  const std::uint64_t n = graph.num_vertices();
  std::vector<std::int64_t> position(n, -1);
  const std::span<const V> order = forest.order();
  for (std::size_t i = 0; i < order.size(); ++i) {
    ASSERT_EQ(position[order[i]], -1) << "vertex " << order[i] << " listed twice";
    position[order[i]] = static_cast<std::int64_t>(i);
  }
  std::uint64_t listed = 0;
  for (std::uint64_t v = 0; v < n; ++v) listed += forest.peeled(v) ? 1 : 0;
  ASSERT_EQ(listed, order.size());
  const std::span<const std::uint64_t> starts = forest.round_starts();
  ASSERT_EQ(starts.front(), 0U);
  ASSERT_EQ(starts.back(), order.size());
  for (std::size_t r = 0; r + 1 < starts.size(); ++r) {
    ASSERT_LT(starts[r], starts[r + 1]) << "empty round";
    ASSERT_TRUE(std::is_sorted(order.begin() + static_cast<std::ptrdiff_t>(starts[r]),
                               order.begin() + static_cast<std::ptrdiff_t>(starts[r + 1])));
  }
  const auto round_of = [&](std::uint64_t v) {
    return std::upper_bound(starts.begin(), starts.end(), static_cast<std::uint64_t>(position[v])) - starts.begin();
  };

  std::vector<int> height(n, 0);
  // Leaves first (the first round is listed last), so each child is final before its parent.
  for (std::size_t i = order.size(); i-- > 0;) {
    const V v = order[i];
    const V by = forest.attach(v);
    if (by == v) continue;  // a tree component's root
    const auto neighbours = graph.neighbors(v);
    ASSERT_TRUE(std::find(neighbours.begin(), neighbours.end(), by) != neighbours.end())
        << v << " hangs from " << by << ", not a neighbour";
    if (forest.peeled(by)) {
      // A later round, or the same round for a component's last edge (then by is its root).
      ASSERT_TRUE(round_of(by) < round_of(v) || (round_of(by) == round_of(v) && forest.attach(by) == by && by < v))
          << v << " hangs from " << by;
    }
    height[by] = std::max(height[by], height[v] + 1);
  }
  std::uint64_t core = 0;
  std::uint64_t core_edges = 0;
  for (std::uint64_t v = 0; v < n; ++v) {
    EXPECT_EQ(forest.height(v), height[v]) << "vertex " << v;
    if (graph.degree(v) > 0 && !forest.peeled(v)) {
      ++core;
      core_edges += graph.degree(v);
    }
  }
  EXPECT_EQ(forest.core_vertices(), core);
  EXPECT_EQ(forest.core_directed_edges(), core_edges);
  // Each tree component (every vertex peeled) has exactly one root: components without
  // a core vertex are counted by walking attach chains to their ends.
  for (std::uint64_t v = 0; v < n; ++v) {
    if (!forest.peeled(v)) continue;
    std::uint64_t at = v;
    for (int hops = 0; forest.peeled(at) && forest.attach(at) != at; ++hops) {
      ASSERT_LT(hops, 1000) << "attach chain from " << v << " loops";
      at = forest.attach(at);
    }
  }
}

class PeeledForestThreads : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    saved_ = omp_get_max_threads();
    omp_set_num_threads(GetParam());
  }
  void TearDown() override { omp_set_num_threads(saved_); }
  int saved_ = 1;
};

TEST_P(PeeledForestThreads, KroneckerPeelsExactlyTheVerticesOutsideTheTwoCore) {
  const Csr<V> graph = build_csr<V>(testing::pack(12, testing::kronecker_edges(12, 8, 4)));
  const PeeledForest<V> forest(graph.offsets(), graph.neighbor_data(), graph.num_vertices());
  const std::vector<bool> kept = two_core_or_edgeless(graph);
  std::uint64_t peeled = 0;
  for (std::uint64_t v = 0; v < graph.num_vertices(); ++v) {
    ASSERT_EQ(forest.peeled(v), !kept[v]) << "vertex " << v;
    peeled += kept[v] ? 0 : 1;
  }
  EXPECT_GT(peeled, graph.num_vertices() / 20);  // a Kronecker graph hangs many trees
  expect_consistent(graph, forest);
}

TEST_P(PeeledForestThreads, TreesComponentsPairsAndTheRoundLimit) {
  // A triangle 0-1-2 with a tree 2-3-4, 3-5 hanging; a star component 10..14 with a tail
  // 14-15-16; an isolated edge 20-21; a path 30..39.
  const std::vector<Edge> edges{{0, 1},   {1, 2},   {2, 0},   {2, 3},   {3, 4},   {3, 5},   {10, 11}, {10, 12},
                                {10, 13}, {10, 14}, {14, 15}, {15, 16}, {20, 21}, {30, 31}, {31, 32}, {32, 33},
                                {33, 34}, {34, 35}, {35, 36}, {36, 37}, {37, 38}, {38, 39}};
  const Csr<V> graph = build_csr<V>(testing::pack(6, edges));
  const PeeledForest<V> forest(graph.offsets(), graph.neighbor_data(), graph.num_vertices());
  expect_consistent(graph, forest);
  for (const V core : {0, 1, 2}) EXPECT_FALSE(forest.peeled(core));
  for (const V v : {3, 4, 5, 10, 11, 14, 16, 20, 21, 30, 35, 39}) EXPECT_TRUE(forest.peeled(v)) << v;
  EXPECT_EQ(forest.attach(3), 2U);
  EXPECT_EQ(forest.attach(4), 3U);
  EXPECT_EQ(forest.height(2), 2);
  EXPECT_EQ(forest.height(3), 1);
  EXPECT_EQ(forest.attach(21), 20U);  // the isolated edge: the smaller id is the root
  EXPECT_EQ(forest.attach(20), 20U);
  // The star's centre and the tail's middle hang from 14, left without neighbours: the root.
  EXPECT_EQ(forest.attach(10), 14U);
  EXPECT_EQ(forest.attach(15), 14U);
  EXPECT_EQ(forest.attach(14), 14U);
  EXPECT_EQ(forest.height(14), 2);
  EXPECT_EQ(forest.core_vertices(), 3U);
  EXPECT_EQ(forest.num_rounds(), 5U);  // the path of 10 from both ends: 5 rounds

  // Two rounds: the path's middle and the star's 14 stay core.
  const PeeledForest<V> two(graph.offsets(), graph.neighbor_data(), graph.num_vertices(), 2);
  expect_consistent(graph, two);
  EXPECT_EQ(two.num_rounds(), 2U);
  for (const V v : {4, 5, 3, 30, 31, 38, 39, 11, 16, 15, 10, 20, 21}) EXPECT_TRUE(two.peeled(v)) << v;
  for (const V v : {32, 37, 14}) EXPECT_FALSE(two.peeled(v)) << v;
}

TEST(PeeledForest, RefusesImpossibleRoundLimits) {
  const Csr<V> graph = build_csr<V>(testing::pack(2, {{0, 1}}));
  EXPECT_THROW(PeeledForest<V>(graph.offsets(), graph.neighbor_data(), graph.num_vertices(), 0), Error);
  EXPECT_THROW(PeeledForest<V>(graph.offsets(), graph.neighbor_data(), graph.num_vertices(), 256), Error);
}

INSTANTIATE_TEST_SUITE_P(Threads, PeeledForestThreads, ::testing::Values(1, 3));

}  // namespace
}  // namespace zbfs
