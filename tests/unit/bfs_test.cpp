#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "direction_and_threads.hpp"
#include "test_graphs.hpp"
#include "zbfs/bfs/direction_optimizing_bfs.hpp"
#include "zbfs/bfs/sorted_parents.hpp"
#include "zbfs/graph/compressed_csr_builder.hpp"
#include "zbfs/validate/reference_bfs.hpp"
#include "zbfs/validate/traversed_edges.hpp"
#include "zbfs/validate/validator.hpp"

namespace zbfs {
namespace {

// Runs kernel 2 from each root and checks it against the sequential reference BFS
// (levels, not parents: any valid parent is accepted) and the Graph500 validator.
// `graph`: a Csr<V> or a CompressedCsr<V>.
template <class V, class Graph>
void expect_correct_searches(const Graph& graph, DirectionOptimizingBfs<V>& bfs, const PackedEdgeList& packed,
                             const std::vector<Edge>& edges, const std::vector<std::uint64_t>& roots,
                             const BfsOptions& options) {
  std::vector<std::int64_t> parent(graph.num_vertices());
  for (const std::uint64_t root : roots) {
    const BfsStats stats = bfs.run(root, parent, options);
    const std::vector<std::int64_t> expected = reference_bfs_levels(graph.num_vertices(), edges, root);
    ASSERT_EQ(levels_from_parents(parent, root), expected) << "root " << root;
    const ValidationReport report = validate_bfs_tree(packed, root, parent);
    ASSERT_TRUE(report.ok()) << "root " << root << ": " << report.messages.front();
    EXPECT_EQ(report.traversed_edges, count_traversed_edges(graph, parent)) << "root " << root;
    std::int64_t depth = 0;
    for (const std::int64_t l : expected) depth = std::max(depth, l);
    EXPECT_EQ(stats.levels(), static_cast<std::uint64_t>(depth) + 1) << "root " << root;
    // Into the search's own array, which keeps the last tree until it is cleared (here
    // every other time; a search that finds it there clears it first).
    bfs.run(root, options);
    ASSERT_EQ(levels_from_parents(bfs.parent(), root), expected) << "root " << root << ", own array";
    ASSERT_TRUE(validate_bfs_tree(packed, root, bfs.parent()).ok()) << "root " << root << ", own array";
    if (root % 2 == 0) {
      bfs.clear_parent();
      ASSERT_TRUE(std::all_of(bfs.parent().begin(), bfs.parent().end(), [](std::int64_t p) { return p == -1; }))
          << "root " << root;
    }
  }
}

// Runs kernel 2 from each root and checks it against the sequential reference BFS
// (levels, not parents: any valid parent is accepted) and the Graph500 validator: in the
// input's order, in degree order (each over plain and compressed lists), and in degree
// order pruned (forest pruning with as many peeling rounds as it takes, and with one or
// two rounds only).
template <class V>
void expect_correct_bfs(int vertex_bits, const std::vector<Edge>& edges, const std::vector<std::uint64_t>& roots,
                        const BfsOptions& options) {
  const PackedEdgeList packed = testing::pack(vertex_bits, edges);
  for (const CsrOrder order : {CsrOrder::kInput, CsrOrder::kDegree}) {
    SCOPED_TRACE(order == CsrOrder::kDegree ? "degree order" : "input order");
    const Csr<V> graph = build_csr<V>(packed, order);
    DirectionOptimizingBfs<V> bfs(graph);
    expect_correct_searches(graph, bfs, packed, edges, roots, options);
    SCOPED_TRACE("compressed");
    // Built in a few passes (about three for the bigger graphs here).
    const CompressedCsr<V> packed_graph = build_compressed_csr<V>(packed, order, 4 * edges.size() / 3 + 1);
    DirectionOptimizingBfs<V> packed_bfs(packed_graph);
    expect_correct_searches(packed_graph, packed_bfs, packed, edges, roots, options);
  }
  const Csr<V> graph = build_csr<V>(packed, CsrOrder::kDegree);
  for (const int rounds : {PeeledForest<V>::kMaxRounds, 1, 2}) {
    SCOPED_TRACE("pruned, " + std::to_string(rounds) + " rounds at most");
    const PeeledForest<V> forest(graph.offsets(), graph.neighbor_data(), graph.num_vertices(), rounds);
    DirectionOptimizingBfs<V> bfs(graph, &forest);
    expect_correct_searches(graph, bfs, packed, edges, roots, options);
  }
}

class BfsVariants : public testing::DirectionAndThreads {};

// The move from sorted to original offsets writes exactly the reached entries, each at
// its original offset and leaves the others as they were; a search whose threads lower
// parents finds every sorted entry -1 (filled after a lone thread's search, restored by
// the move after its own).
TEST(SortedParents, MovesTheReachedParentsToTheirOriginalOffsets) {
  const std::size_t n = 1000;  // not a whole number of words
  std::vector<std::uint32_t> original_of(n);
  std::iota(original_of.begin(), original_of.end(), 0U);
  std::shuffle(original_of.begin(), original_of.end(), std::mt19937(7));
  std::vector<std::uint64_t> reached((n + 63) / 64, 0);
  SortedParents<std::uint32_t> sorted(original_of);
  for (std::size_t s = 0; s < n; ++s) {
    if (s % 3 != 1) reached[s / 64] |= std::uint64_t{1} << (s % 64);
  }
  const int saved_threads = omp_get_max_threads();
  for (const int threads : {1, 3}) {
    omp_set_num_threads(threads);
    // A lowering search finds every entry -1 (though the one before left its values);
    // it writes the reached ones.
    sorted.prepare(threads > 1);
    for (std::size_t s = 0; s < n; ++s) {
      if (threads > 1) {
        EXPECT_EQ(sorted[s], -1) << "sorted " << s;
      }
      if (s % 3 != 1) sorted[s] = static_cast<std::int64_t>(5 * s + 2);
    }
    std::vector<std::int64_t> parent(n, -7);
    sorted.move_to(parent, [&](std::uint64_t w) { return reached[w]; });
    for (std::size_t s = 0; s < n; ++s) {
      EXPECT_EQ(parent[original_of[s]], s % 3 != 1 ? static_cast<std::int64_t>(5 * s + 2) : -7) << "sorted " << s;
    }
  }
  // After a lowering search every entry is -1 again, without a fill.
  sorted.prepare(true);
  for (std::size_t s = 0; s < n; ++s) EXPECT_EQ(sorted[s], -1) << "sorted " << s;
  omp_set_num_threads(saved_threads);
}

TEST_P(BfsVariants, DrawnGraph) {
  expect_correct_bfs<std::uint32_t>(testing::kDrawnGraphBits, testing::drawn_graph(), {0, 3, 5, 6, 8, 9}, options_);
}

TEST_P(BfsVariants, PathLongerThanAWord) {
  // A path of 200 vertices crosses bitmap words and needs 200 levels.
  std::vector<Edge> path;
  for (std::uint64_t v = 0; v + 1 < 200; ++v) path.push_back({v, v + 1});
  expect_correct_bfs<std::uint32_t>(8, path, {0, 99, 199}, options_);
}

TEST_P(BfsVariants, StarAndHub) {
  std::vector<Edge> star;
  for (std::uint64_t v = 1; v < 300; ++v) star.push_back({0, v});
  star.push_back({5, 6});
  expect_correct_bfs<std::uint32_t>(9, star, {0, 5, 299}, options_);
}

TEST_P(BfsVariants, HubListsSharedAmongThreads) {
  // A hub of 5000 leaves (top-down steps share its list out in blocks) joined by a chain
  // to a second hub of 1100, just past one thread's share.
  std::vector<Edge> hubs;
  for (std::uint64_t v = 1; v <= 5000; ++v) hubs.push_back({0, v});
  for (std::uint64_t v = 5001; v <= 6100; ++v) hubs.push_back({6200, v});
  hubs.push_back({4999, 6201});
  hubs.push_back({6201, 6200});
  expect_correct_bfs<std::uint32_t>(13, hubs, {0, 6200, 17, 6000}, options_);
}

TEST_P(BfsVariants, KroneckerGraph32BitIds) {
  const std::vector<Edge> edges = testing::kronecker_edges(12, 16, 2);
  std::vector<std::uint64_t> roots;
  for (const Edge& e : edges) {
    if (e.u != e.v) roots.push_back(e.u);
    if (roots.size() == 6) break;
  }
  // Leaves (peeled, most hanging from the core) as roots too.
  const Csr<std::uint32_t> graph = build_csr<std::uint32_t>(testing::pack(12, edges));
  for (std::uint64_t v = 0, leaves = 0; v < graph.num_vertices() && leaves < 4; ++v) {
    if (graph.degree(v) == 1) {
      roots.push_back(v);
      ++leaves;
    }
  }
  expect_correct_bfs<std::uint32_t>(12, edges, roots, options_);
}

TEST_P(BfsVariants, TreesHangingFromACore) {
  // A 5-cycle (the core) with trees of depth 1 to 3 hanging from it, a tree component
  // (a star with a tail), an isolated edge, and a path of 300 vertices: more than twice
  // the peeling rounds, so its middle stays core. Roots in every part, leaves and chains.
  std::vector<Edge> edges{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}};
  edges.insert(edges.end(), {{0, 10}, {10, 11}, {11, 12}, {11, 13}, {2, 14}, {2, 15}, {15, 16}, {3, 17}});
  edges.insert(edges.end(), {{20, 21}, {20, 22}, {20, 23}, {23, 24}, {24, 25}, {30, 31}});
  // A triangle whose tallest tree holds the root's chain (the depth must not count it).
  edges.insert(edges.end(), {{50, 51}, {51, 52}, {52, 50}, {50, 53}, {53, 54}, {54, 55}, {55, 56}, {51, 57}});
  for (std::uint64_t v = 100; v + 1 < 400; ++v) edges.push_back({v, v + 1});
  expect_correct_bfs<std::uint32_t>(9, edges, {0, 2, 12, 13, 16, 17, 10, 20, 25, 31, 30, 100, 250, 399, 40, 56, 54},
                                    options_);
}

TEST_P(BfsVariants, KroneckerGraph64BitIds) {
  const std::vector<Edge> edges = testing::kronecker_edges(10, 8, 3);
  expect_correct_bfs<std::uint64_t>(10, edges, {edges[0].u, edges[1].v, edges[2].u}, options_);
}

INSTANTIATE_TEST_SUITE_P(DirectionsAndThreads, BfsVariants,
                         ::testing::Combine(::testing::Values(Direction::kAuto, Direction::kTopDown,
                                                              Direction::kBottomUp),
                                            ::testing::Values(1, 2, 3)),
                         [](const ::testing::TestParamInfo<testing::DirectionThreads>& param_info) {
                           std::string name(to_string(std::get<0>(param_info.param)));
                           std::erase(name, '-');
                           return name + "_" + std::to_string(std::get<1>(param_info.param)) + "threads";
                         });

TEST(Bfs, DirectionOptimizingSwitchesBothWaysOnKronecker) {
  const std::vector<Edge> edges = testing::kronecker_edges(14, 16, 6);
  const Csr<std::uint32_t> graph = build_csr<std::uint32_t>(testing::pack(14, edges));
  DirectionOptimizingBfs<std::uint32_t> bfs(graph);
  std::vector<std::int64_t> parent(graph.num_vertices());
  std::uint64_t root = 0;
  while (graph.degree(root) == 0) ++root;
  const BfsStats stats = bfs.run(root, parent, BfsOptions{});
  ASSERT_FALSE(stats.steps.empty());
  EXPECT_EQ(stats.steps.front().kind, StepKind::kTopDown);
  bool saw_bottom_up = false;
  for (const BfsStep& s : stats.steps) saw_bottom_up |= s.kind == StepKind::kBottomUp;
  EXPECT_TRUE(saw_bottom_up);
  EXPECT_EQ(stats.steps.back().kind, StepKind::kTopDown);
}

TEST(Bfs, ExtremeSwitchParametersStillGiveCorrectTrees) {
  const std::vector<Edge> edges = testing::kronecker_edges(11, 16, 8);
  for (const auto& [alpha, beta] : {std::pair{1e-9, 1e-9}, std::pair{1e9, 1e9}, std::pair{1.0, 1.0}}) {
    expect_correct_bfs<std::uint32_t>(11, edges, {edges[5].u, edges[6].v}, BfsOptions{Direction::kAuto, alpha, beta});
  }
}

// Many searches with 2 to 4 threads beside a competing load (two spinning threads per
// core, as other processes of a busy node or of ctest -j): plain, compressed and pruned,
// over a graph of long paths (a step per vertex) with trees hanging from a small core.
// Each step's parallel region made the threads wait, spinning, for a descheduled one, so
// that threads made these searches 10 to 100 times slower than one thread, and a test
// binary running them sat for minutes. With threads they must take about what one thread
// takes beside the same load (the steps are too small to share).
TEST(Bfs, ThreadedSearchesKeepGoingBesideACompetingLoad) {
  std::vector<Edge> edges{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}, {0, 10}, {10, 11}, {11, 12}, {2, 14}, {3, 17}};
  for (std::uint64_t v = 100; v + 1 < 1100; ++v) edges.push_back({v, v + 1});  // a path
  edges.push_back({4, 1100});
  for (std::uint64_t v = 1100; v + 1 < 1400; ++v) edges.push_back({v, v + 1});  // a tail on the core
  const PackedEdgeList packed = testing::pack(11, edges);
  const Csr<std::uint32_t> graph = build_csr<std::uint32_t>(packed, CsrOrder::kDegree);
  const CompressedCsr<std::uint32_t> compressed = build_compressed_csr<std::uint32_t>(packed, CsrOrder::kDegree, 0);
  const PeeledForest<std::uint32_t> forest(graph.offsets(), graph.neighbor_data(), graph.num_vertices(),
                                           PeeledForest<std::uint32_t>::kMaxRounds);
  DirectionOptimizingBfs<std::uint32_t> plain(graph);
  DirectionOptimizingBfs<std::uint32_t> packed_lists(compressed);
  DirectionOptimizingBfs<std::uint32_t> pruned(graph, &forest);
  const std::vector<std::uint64_t> roots{100, 1099, 1399, 12};
  std::vector<std::vector<std::int64_t>> truth;
  for (const std::uint64_t root : roots) truth.push_back(reference_bfs_levels(graph.num_vertices(), edges, root));

  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (unsigned i = 0; i < 2 * std::max(2U, std::thread::hardware_concurrency()); ++i) {
    load.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  const int saved_threads = omp_get_max_threads();
  // A stalled run is cut short: every batch gets its own share of two minutes.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::vector<std::int64_t> parent(graph.num_vertices());
  std::vector<double> seconds;
  for (const int threads : {1, 2, 3, 4}) {
    omp_set_num_threads(threads);
    const auto start = std::chrono::steady_clock::now();
    for (int rep = 0; rep < 4 && std::chrono::steady_clock::now() < deadline; ++rep) {
      for (std::size_t r = 0; r < roots.size(); ++r) {
        for (DirectionOptimizingBfs<std::uint32_t>* bfs : {&plain, &packed_lists, &pruned}) {
          for (const Direction d : {Direction::kAuto, Direction::kTopDown, Direction::kBottomUp}) {
            bfs->run(roots[r], parent, BfsOptions{d});
            ASSERT_EQ(levels_from_parents(parent, roots[r]), truth[r]) << "root " << roots[r];
          }
        }
      }
    }
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  stop = true;
  for (std::thread& t : load) t.join();
  omp_set_num_threads(saved_threads);
  for (std::size_t i = 1; i < seconds.size(); ++i) {
    EXPECT_LT(seconds[i], 4 * seconds[0] + 0.5) << i + 1 << " threads took " << seconds[i] << " s, one thread "
                                                << seconds[0] << " s: the threads wait for each other step by step";
  }
}

TEST(Bfs, IsolatedRootPastTheLastVertexWithEdges) {
  // A path over 0..199 and 300 edgeless vertices: in degree order the edgeless ones fill
  // the bitmap words that bottom-up steps skip, and an edgeless root there must neither
  // reach anything nor leave a trace in the next search.
  std::vector<Edge> path;
  for (std::uint64_t v = 0; v + 1 < 200; ++v) path.push_back({v, v + 1});
  const PackedEdgeList packed = testing::pack(9, path);
  const Csr<std::uint32_t> graph = build_csr<std::uint32_t>(packed, CsrOrder::kDegree);
  DirectionOptimizingBfs<std::uint32_t> bfs(graph);
  std::vector<std::int64_t> parent(graph.num_vertices());
  for (const Direction d : {Direction::kBottomUp, Direction::kAuto, Direction::kTopDown}) {
    bfs.run(450, parent, BfsOptions{d});
    for (std::uint64_t v = 0; v < parent.size(); ++v) ASSERT_EQ(parent[v], v == 450 ? 450 : -1) << "vertex " << v;
    const BfsStats stats = bfs.run(0, parent, BfsOptions{d});
    ASSERT_EQ(levels_from_parents(parent, 0), reference_bfs_levels(graph.num_vertices(), path, 0));
    // No step after the last vertex: the edgeless root of the search before is gone.
    EXPECT_EQ(stats.levels(), 200U);
    const auto empty_steps = std::count_if(stats.steps.begin(), stats.steps.end(),
                                           [](const BfsStep& s) { return s.discovered_vertices == 0; });
    EXPECT_EQ(empty_steps, 1);
  }
}

// A big component, many two-vertex ones and edgeless vertices: searches into the
// object's own array from each kind of key in turn clear only what the last one reached
// (a pair: one by one; the big component: by filling), in every order and direction.
TEST(Bfs, OwnParentsClearWhatTheLastSearchReached) {
  std::vector<Edge> edges;
  for (std::uint64_t v = 0; v + 1 < 900; ++v) edges.push_back({v, (v * 7 + 1) % 900});
  for (std::uint64_t v = 1000; v < 1800; v += 2) edges.push_back({v, v + 1});
  const PackedEdgeList packed = testing::pack(11, edges);
  for (const CsrOrder order : {CsrOrder::kInput, CsrOrder::kDegree}) {
    const Csr<std::uint32_t> graph = build_csr<std::uint32_t>(packed, order);
    DirectionOptimizingBfs<std::uint32_t> bfs(graph);
    for (const Direction d : {Direction::kAuto, Direction::kTopDown, Direction::kBottomUp}) {
      for (const std::uint64_t root : {1000u, 3u, 1501u, 1900u, 1002u, 1002u, 899u, 2047u, 1003u}) {
        bfs.run(root, BfsOptions{d});
        ASSERT_EQ(levels_from_parents(bfs.parent(), root), reference_bfs_levels(graph.num_vertices(), edges, root))
            << "root " << root;
      }
    }
  }
}

TEST(Bfs, IsolatedRootReachesOnlyItself) {
  const Csr<std::uint32_t> graph =
      build_csr<std::uint32_t>(testing::pack(testing::kDrawnGraphBits, testing::drawn_graph()));
  DirectionOptimizingBfs<std::uint32_t> bfs(graph);
  std::vector<std::int64_t> parent(graph.num_vertices());
  for (const Direction d : {Direction::kAuto, Direction::kTopDown, Direction::kBottomUp}) {
    bfs.run(9, parent, BfsOptions{d});
    for (std::uint64_t v = 0; v < parent.size(); ++v) EXPECT_EQ(parent[v], v == 9 ? 9 : -1) << "vertex " << v;
  }
}

}  // namespace
}  // namespace zbfs

namespace zbfs {
namespace {

TEST(LevelsFromParents, MarksLoopsAndBrokenChains) {
  // 0 is the root; 1 -> 0; 2 -> 1; 3 <-> 4 loop; 5 -> 6 whose parent is -1; 7 unreached.
  const std::vector<std::int64_t> parent{0, 0, 1, 4, 3, 6, -1, -1};
  const std::vector<std::int64_t> expected{0, 1, 2, kBrokenLevel, kBrokenLevel, kBrokenLevel, -1, -1};
  EXPECT_EQ(levels_from_parents(parent, 0), expected);
}

}  // namespace
}  // namespace zbfs
