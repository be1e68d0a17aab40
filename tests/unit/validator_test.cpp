#include "zbfs/validate/validator.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "test_graphs.hpp"
#include "zbfs/bfs/direction_optimizing_bfs.hpp"
#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// The drawn graph (see test_graphs.hpp) searched from 0 gives levels
//   0:0  1:1 4:1  2:2 5:2  3:3   and 6..15 unreached.
class Validator : public ::testing::Test {
 protected:
  Validator() : edges_(testing::pack(testing::kDrawnGraphBits, testing::drawn_graph())) {
    parent_.assign(16, -1);
    parent_[0] = 0;
    parent_[1] = 0;
    parent_[4] = 0;
    parent_[2] = 1;
    parent_[5] = 1;
    parent_[3] = 2;
  }
  ValidationReport check() const { return validate_bfs_tree(edges_, 0, parent_); }

  PackedEdgeList edges_;
  std::vector<std::int64_t> parent_;
};

TEST_F(Validator, AcceptsACorrectTree) {
  const ValidationReport r = check();
  EXPECT_TRUE(r.ok()) << (r.messages.empty() ? "" : r.messages.front());
  // Tuples inside the component: (0,1) (1,2) (2,3) (0,4) (1,5) (4,5) and the duplicate (2,1).
  EXPECT_EQ(r.traversed_edges, 7U);
  EXPECT_EQ(r.reached_vertices, 6U);
}

TEST_F(Validator, AcceptsAnotherValidParentChoice) {
  parent_[5] = 4;  // 5 is adjacent to both 1 and 4, both on level 1
  EXPECT_TRUE(check().ok());
}

TEST_F(Validator, CatchesAParentThatIsNotAnEdge) {
  parent_[3] = 5;  // 5 is on level 2 like 2, but (5,3) is not an input edge
  const ValidationReport r = check();
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.violates(ValidationRule::kParentIsInputEdge));
}

TEST_F(Validator, CatchesAWrongLevel) {
  // (5,4) is an input edge, but hanging 4 below 5 puts it on level 3 next to the root.
  parent_[4] = 5;
  const ValidationReport r = check();
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.violates(ValidationRule::kInputEdgeLevels));
  EXPECT_FALSE(r.violates(ValidationRule::kParentIsInputEdge));
}

TEST_F(Validator, CatchesANonEdgeParentOnTheWrongLevel) {
  parent_[5] = 2;  // (2,5) is no edge and puts 5 on level 3, two below its neighbour 4
  const ValidationReport r = check();
  EXPECT_TRUE(r.violates(ValidationRule::kInputEdgeLevels));
  EXPECT_TRUE(r.violates(ValidationRule::kParentIsInputEdge));
}

TEST_F(Validator, CatchesATwoVertexCycle) {
  parent_[2] = 3;  // 3's parent is 2: the chain 2 -> 3 -> 2 never reaches the root
  const ValidationReport r = check();
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.violates(ValidationRule::kTreeRootedAtKey));
}

TEST_F(Validator, CatchesAMissingVertex) {
  parent_[3] = -1;  // 3 is in the component but left unreached
  const ValidationReport r = check();
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.violates(ValidationRule::kSpansComponent));
}

TEST_F(Validator, CatchesAVertexFromAnotherComponent) {
  parent_[6] = 0;  // 6 lies in the triangle component
  const ValidationReport r = check();
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.violates(ValidationRule::kSpansComponent));
  EXPECT_TRUE(r.violates(ValidationRule::kParentIsInputEdge));
}

TEST_F(Validator, CatchesAnIsolatedVertexClaimedAsReached) {
  parent_[12] = 3;  // 12 has no edges at all
  const ValidationReport r = check();
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.violates(ValidationRule::kParentIsInputEdge));
}

TEST_F(Validator, CatchesACycleAwayFromTheRoot) {
  parent_[6] = 7;
  parent_[7] = 6;
  const ValidationReport r = check();
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.violates(ValidationRule::kTreeRootedAtKey));
}

TEST_F(Validator, CatchesAWrongRoot) {
  parent_[0] = 1;
  EXPECT_TRUE(check().violates(ValidationRule::kTreeRootedAtKey));
}

TEST_F(Validator, CatchesOutOfRangeParents) {
  parent_[2] = 99;
  EXPECT_TRUE(check().violates(ValidationRule::kTreeRootedAtKey));
  parent_[2] = -7;
  EXPECT_TRUE(check().violates(ValidationRule::kTreeRootedAtKey));
}

TEST_F(Validator, RefusesAParentArrayOfTheWrongSize) {
  parent_.resize(10);
  EXPECT_THROW((void)check(), Error);
}

TEST(ValidatorOnKronecker, EverySingleCorruptionOfARealTreeIsCaught) {
  const std::vector<Edge> edges = testing::kronecker_edges(10, 16, 12);
  const PackedEdgeList packed = testing::pack(10, edges);
  const Csr<std::uint32_t> graph = build_csr<std::uint32_t>(packed);
  DirectionOptimizingBfs<std::uint32_t> bfs(graph);
  std::vector<std::int64_t> parent(graph.num_vertices());
  const std::uint64_t root = edges[0].u == edges[0].v ? edges[1].u : edges[0].u;
  bfs.run(root, parent, BfsOptions{});
  ASSERT_TRUE(validate_bfs_tree(packed, root, parent).ok());
  // Point each of 50 reached vertices at a vertex that is not its neighbour one level up.
  int checked = 0;
  for (std::uint64_t v = 0; v < parent.size() && checked < 50; ++v) {
    if (parent[v] < 0 || v == root) continue;
    const std::int64_t saved = parent[v];
    parent[v] = static_cast<std::int64_t>(v);  // a self-parent: a cycle of one
    EXPECT_FALSE(validate_bfs_tree(packed, root, parent).ok()) << "vertex " << v;
    parent[v] = -1;  // dropped from the tree while its neighbours stay
    EXPECT_FALSE(validate_bfs_tree(packed, root, parent).ok()) << "vertex " << v;
    parent[v] = saved;
    ++checked;
  }
  EXPECT_EQ(checked, 50);
}

}  // namespace
}  // namespace zbfs
