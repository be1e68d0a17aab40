#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "test_graphs.hpp"
#include "zbfs/graph/csr_builder.hpp"

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

TEST(CsrBuild, PeakEstimateCoversTheBuild) {
  // 2 ids per tuple, offsets and tuple degrees.
  EXPECT_EQ(csr_build_peak_bytes(1024, 16384, 4), 1025U * 8 + 1024U * 4 + 2U * 16384 * 4);
}

}  // namespace
}  // namespace zbfs
