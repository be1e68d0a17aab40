#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "test_graphs.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/generator/counter_rng.hpp"
#include "zbfs/graph/csr_builder.hpp"
#include "zbfs/graph/list_sort.hpp"

namespace zbfs {
namespace {

template <class V>
class CsrBuild : public ::testing::Test {};
using VertexTypes = ::testing::Types<std::uint32_t, std::uint64_t>;
TYPED_TEST_SUITE(CsrBuild, VertexTypes);

TYPED_TEST(CsrBuild, DrawnGraphHasSortedUniqueListsWithoutSelfLoops) {
  const Csr<TypeParam> g = build_csr<TypeParam>(testing::pack(testing::kDrawnGraphBits, testing::drawn_graph()));
  ASSERT_EQ(g.num_vertices(), 16U);
  const std::map<std::uint64_t, std::vector<std::uint64_t>> expected = {
      {0, {1, 4}}, {1, {0, 2, 5}}, {2, {1, 3}}, {3, {2}},    {4, {0, 5}},
      {5, {1, 4}}, {6, {7, 8}},    {7, {6, 8}}, {8, {6, 7}}, {9, {}}};
  for (const auto& [v, neighbours] : expected) {
    const auto list = g.neighbors(v);
    EXPECT_EQ(std::vector<std::uint64_t>(list.begin(), list.end()), neighbours) << "vertex " << v;
  }
  EXPECT_EQ(g.num_directed_edges(), 2U * 9U);
  // Tuple degrees count the duplicate (2,1) twice and skip the self-loop (3,3).
  EXPECT_EQ(g.input_tuple_degree(1), 4U);
  EXPECT_EQ(g.input_tuple_degree(2), 3U);
  EXPECT_EQ(g.input_tuple_degree(3), 1U);
  EXPECT_EQ(g.input_tuple_degree(9), 0U);
}

TYPED_TEST(CsrBuild, KroneckerGraphMatchesANaiveBuild) {
  const std::vector<Edge> edges = testing::kronecker_edges(10, 16, 21);
  const Csr<TypeParam> g = build_csr<TypeParam>(testing::pack(10, edges));
  std::vector<std::set<std::uint64_t>> naive(1024);
  std::vector<std::uint64_t> tuples(1024, 0);
  for (const Edge& e : edges) {
    if (e.u == e.v) continue;
    naive[e.u].insert(e.v);
    naive[e.v].insert(e.u);
    ++tuples[e.u];
    ++tuples[e.v];
  }
  std::uint64_t directed = 0;
  for (std::uint64_t v = 0; v < 1024; ++v) {
    const auto list = g.neighbors(v);
    ASSERT_EQ(std::vector<std::uint64_t>(list.begin(), list.end()),
              std::vector<std::uint64_t>(naive[v].begin(), naive[v].end()))
        << "vertex " << v;
    ASSERT_EQ(g.input_tuple_degree(v), tuples[v]);
    directed += naive[v].size();
  }
  EXPECT_EQ(g.num_directed_edges(), directed);
}

// Placed by blocks (scale 21: 2^21 vertices, 32 blocks of rows; edgefactor 3: 3 * 2^21
// tuples in three rounds), in both orders: every list as a naive build's (sorted,
// duplicate-free pairs).
TYPED_TEST(CsrBuild, GraphsOfSeveralRoundsAndBlocksMatchANaiveBuild) {
  const std::vector<Edge> edges = testing::kronecker_edges(21, 3, 5);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
  pairs.reserve(2 * edges.size());
  for (const Edge& e : edges) {
    if (e.u == e.v) continue;
    pairs.emplace_back(e.u, e.v);
    pairs.emplace_back(e.v, e.u);
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  const PackedEdgeList packed = testing::pack(21, edges);
  for (const CsrOrder order : {CsrOrder::kInput, CsrOrder::kDegree}) {
    const Csr<TypeParam> g = build_csr<TypeParam>(packed, order);
    ASSERT_EQ(g.num_directed_edges(), pairs.size());
    // The hubs' lists are long enough to sort by radix (from 1024 ids).
    std::uint64_t longest = 0;
    for (std::uint64_t v = 0; v < g.num_vertices(); ++v) longest = std::max<std::uint64_t>(longest, g.degree(v));
    EXPECT_GE(longest, 1024U);
    std::vector<std::uint64_t> list;
    std::size_t at = 0;
    for (std::uint64_t v = 0; v < g.num_vertices(); ++v) {
      list.clear();
      for (const TypeParam w : g.neighbors(g.internal_id(v))) list.push_back(g.original_id(w));
      std::sort(list.begin(), list.end());
      for (const std::uint64_t w : list) {
        ASSERT_LT(at, pairs.size());
        ASSERT_EQ(pairs[at], std::pair(v, w)) << "vertex " << v;
        ++at;
      }
    }
    EXPECT_EQ(at, pairs.size());
  }
}

TYPED_TEST(CsrBuild, DegreeOrderIsTheSameGraphRenumbered) {
  const std::vector<Edge> edges = testing::kronecker_edges(10, 16, 21);
  const Csr<TypeParam> plain = build_csr<TypeParam>(testing::pack(10, edges));
  const Csr<TypeParam> g = build_csr<TypeParam>(testing::pack(10, edges), CsrOrder::kDegree);
  ASSERT_TRUE(g.reordered());
  ASSERT_FALSE(plain.reordered());
  ASSERT_EQ(g.num_directed_edges(), plain.num_directed_edges());
  std::set<std::uint64_t> seen;
  for (std::uint64_t i = 0; i < 1024; ++i) {
    const std::uint64_t o = g.original_id(i);
    ASSERT_EQ(g.internal_id(o), i);
    seen.insert(o);
    // Descending input tuple degree.
    if (i > 0) {
      ASSERT_GE(g.input_tuple_degree(i - 1), g.input_tuple_degree(i)) << "internal " << i;
    }
    ASSERT_EQ(g.input_tuple_degree(i), plain.input_tuple_degree(o));
    const auto list = g.neighbors(i);
    ASSERT_TRUE(std::is_sorted(list.begin(), list.end())) << "internal " << i;
    std::vector<std::uint64_t> originals;
    for (const TypeParam w : list) originals.push_back(g.original_id(w));
    std::sort(originals.begin(), originals.end());
    const auto want = plain.neighbors(o);
    ASSERT_EQ(originals, std::vector<std::uint64_t>(want.begin(), want.end())) << "vertex " << o;
  }
  EXPECT_EQ(seen.size(), 1024U);
}

TEST(DegreeOrder, SortsByDescendingDegreeAndKeepsTiesInOrder) {
  const std::vector<std::uint64_t> degree{3, 0, 5, 3, 1, 0};
  const DegreeOrder<std::uint32_t> order(degree);
  const std::vector<std::uint32_t> want{2, 0, 3, 4, 1, 5};
  ASSERT_EQ(order.size(), want.size());
  for (std::uint32_t s = 0; s < want.size(); ++s) {
    EXPECT_EQ(order.original_offset(s), want[s]) << "sorted " << s;
    EXPECT_EQ(order.sorted_offset(want[s]), s) << "original " << want[s];
  }
  EXPECT_EQ(DegreeOrder<std::uint32_t>(std::vector<std::uint64_t>{}).size(), 0U);
  // A degree above the vertex count (repeated input tuples) takes the comparison sort:
  // the same order.
  const std::vector<std::uint64_t> repeated{3, 0, 5000000000, 3, 1, 0};
  const DegreeOrder<std::uint32_t> big(repeated);
  for (std::uint32_t s = 0; s < want.size(); ++s) {
    EXPECT_EQ(big.original_offset(s), want[s]) << "sorted " << s;
    EXPECT_EQ(big.sorted_offset(want[s]), s) << "original " << want[s];
  }
}

// Lists sort as std::sort sorts them, by comparisons below kRadixFrom ids and by radix
// from it: ids that differ only in their low byte, in all bytes, or share every byte.
template <class V>
void expect_lists_sort(std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<V> scratch;
  for (const std::size_t length : {std::size_t{0}, std::size_t{1}, kRadixFrom - 1, kRadixFrom, std::size_t{70000}}) {
    for (const int spread_bits : {0, 8, 21, 8 * static_cast<int>(sizeof(V))}) {
      std::vector<V> list(length);
      const std::uint64_t mask = spread_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << spread_bits) - 1;
      for (V& v : list) v = static_cast<V>((random() & mask) | (std::uint64_t{1} << (8 * sizeof(V) - 2)));
      std::vector<V> want = list;
      std::sort(want.begin(), want.end());
      sort_adjacency_list(list.data(), list.data() + list.size(), scratch);
      ASSERT_EQ(list, want) << length << " ids of " << spread_bits << " varying bits";
    }
  }
}

TEST(ListSort, SortsAsComparisonsDoAtEveryLength) {
  expect_lists_sort<std::uint32_t>(1);
  expect_lists_sort<std::uint64_t>(2);
}

// Kernel 1 without the list in memory: tuples produced chunk by chunk (read twice) give
// the graph the stored list gives, on the direct placement (2^12 vertices) and the
// blocked one (2^21 vertices, few tuples), in both orders.
template <class V>
void expect_produced_builds_match(int vertex_bits, std::uint64_t tuples, CsrOrder order) {
  const std::uint64_t n = std::uint64_t{1} << vertex_bits;
  const CounterRng rng(3, RandomStream::kSyntheticGraphs);
  // Skewed ends (the smaller of two draws) so that degrees vary and ties are many.
  const auto tuple = [&](std::uint64_t i) {
    return Edge{std::min(uniform_below(rng(4 * i), n), uniform_below(rng(4 * i + 1), n)),
                std::min(uniform_below(rng(4 * i + 2), n), uniform_below(rng(4 * i + 3), n))};
  };
  std::vector<Edge> all(tuples);
  for (std::uint64_t i = 0; i < tuples; ++i) all[i] = tuple(i);
  const PackedEdgeList stored = testing::pack(vertex_bits, all);
  std::uint64_t reads = 0;
  const InputEdges produced(n, tuples, [&](std::uint64_t first, std::span<Edge> out) {
    std::atomic_ref<std::uint64_t>(reads).fetch_add(out.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = tuple(first + i);
  });
  const Csr<V> a = build_csr<V>(stored, order);
  const Csr<V> b = build_csr<V>(produced, order);
  EXPECT_EQ(reads, 2 * tuples) << "kernel 1 reads a produced list twice";
  ASSERT_EQ(a.num_vertices(), b.num_vertices());
  ASSERT_EQ(a.num_directed_edges(), b.num_directed_edges());
  for (std::uint64_t v = 0; v < n; ++v) {
    const auto la = a.neighbors(v);
    const auto lb = b.neighbors(v);
    ASSERT_TRUE(std::equal(la.begin(), la.end(), lb.begin(), lb.end())) << "vertex " << v;
    ASSERT_EQ(a.input_tuple_degree(v), b.input_tuple_degree(v)) << "vertex " << v;
    ASSERT_EQ(a.internal_id(v), b.internal_id(v)) << "vertex " << v;
  }
}

TEST(CsrBuild, ProducedTuplesBuildTheStoredListsGraph) {
  for (const CsrOrder order : {CsrOrder::kInput, CsrOrder::kDegree}) {
    expect_produced_builds_match<std::uint32_t>(12, 40000, order);
    expect_produced_builds_match<std::uint64_t>(12, 40000, order);
    expect_produced_builds_match<std::uint32_t>(21, 200000, order);
  }
}

TEST(CsrBuild, RefusesAProducedTupleOutsideTheVertices) {
  const InputEdges produced(16, 3, [](std::uint64_t first, std::span<Edge> out) {
    const Edge all[] = {{0, 1}, {1, 16}, {2, 3}};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = all[first + i];
  });
  EXPECT_THROW((void)build_csr<std::uint32_t>(produced), Error);
}

TEST(CsrBuild, PeakEstimateCoversTheBuild) {
  // 2 ids per tuple, offsets and tuple degrees; the degree order adds its two tables.
  EXPECT_EQ(csr_build_peak_bytes(1024, 16384, 4), 1025U * 8 + 1024U * 4 + 2U * 16384 * 4);
  EXPECT_EQ(csr_build_peak_bytes(1024, 16384, 4, CsrOrder::kDegree),
            1025U * 8 + 1024U * 4 + 2U * 16384 * 4 + 2U * 1024 * 4);
  // From 2^21 vertices the placement goes by blocks, with two round buffers of two
  // entries (two ids each) per tuple of a round (2^21 tuples at most).
  EXPECT_EQ(csr_build_peak_bytes(1 << 21, std::uint64_t{1} << 24, 4) - csr_build_peak_bytes(1 << 21, 0, 4),
            2U * (std::uint64_t{1} << 24) * 4 + 2U * 2 * (std::uint64_t{1} << 21) * 2 * 4);
  EXPECT_EQ(csr_build_peak_bytes(1 << 21, 1000, 4) - csr_build_peak_bytes(1 << 21, 0, 4),
            2U * 1000 * 4 + 2U * 2 * 1000 * 2 * 4);
}

}  // namespace
}  // namespace zbfs
