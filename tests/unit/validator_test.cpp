#include "zbfs/validate/validator.hpp"

#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "test_graphs.hpp"
#include "zbfs/bfs/direction_optimizing_bfs.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/generator/kronecker.hpp"
#include "zbfs/graph/csr_builder.hpp"

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

// The generator's list produced again in draw order (not kept) must validate exactly as
// the stored list does: the same counts for a sound tree, the same verdicts, rules and
// error counts for corrupted ones.
TEST(ValidatorOnKronecker, RegeneratedInputGivesTheStoredListsVerdicts) {
  const KroneckerGenerator generator(KroneckerParams{11, 16, 5});
  const PackedEdgeList stored = generate_edge_list(generator);
  const InputEdges regenerated(generator.num_vertices(), generator.num_edges(),
                               [&](std::uint64_t first, std::span<Edge> out) { generator.generate_draws(first, out); });
  ASSERT_TRUE(regenerated.regenerated());
  const Csr<std::uint32_t> graph = build_csr<std::uint32_t>(stored);
  DirectionOptimizingBfs<std::uint32_t> bfs(graph);
  std::vector<std::int64_t> parent(graph.num_vertices());
  const std::uint64_t root = stored.get(0).u == stored.get(0).v ? stored.get(1).u : stored.get(0).u;
  bfs.run(root, parent, BfsOptions{});
  const ValidationReport sound = validate_bfs_tree(regenerated, root, parent);
  const ValidationReport sound_stored = validate_bfs_tree(stored, root, parent);
  ASSERT_TRUE(sound.ok());
  ASSERT_TRUE(sound_stored.ok());
  EXPECT_EQ(sound.traversed_edges, sound_stored.traversed_edges);
  EXPECT_EQ(sound.reached_vertices, sound_stored.reached_vertices);
  EXPECT_GT(sound.traversed_edges, generator.num_edges() / 2);
  int checked = 0;
  for (std::uint64_t v = 0; v < parent.size() && checked < 20; v += 7) {
    if (parent[v] < 0 || v == root) continue;
    const std::int64_t saved = parent[v];
    for (const std::int64_t wrong : {std::int64_t{-1}, static_cast<std::int64_t>(v), static_cast<std::int64_t>(root)}) {
      if (wrong == saved) continue;
      parent[v] = wrong;
      const ValidationReport a = validate_bfs_tree(regenerated, root, parent);
      const ValidationReport b = validate_bfs_tree(stored, root, parent);
      EXPECT_FALSE(a.ok()) << "vertex " << v << " given parent " << wrong;
      EXPECT_EQ(a.error_count, b.error_count);
      EXPECT_EQ(a.violated.size(), b.violated.size());
    }
    parent[v] = saved;
    ++checked;
  }
  EXPECT_EQ(checked, 20);
}

// A producer whose tuples name vertices beyond the parent array's is reported, not read
// out of bounds.
TEST(ValidatorOnKronecker, ProducedEdgesOutsideTheVerticesAreReported) {
  std::vector<std::int64_t> parent(16, -1);
  parent[0] = 0;
  parent[1] = 0;
  const InputEdges produced(16, 3, [](std::uint64_t first, std::span<Edge> out) {
    const Edge all[] = {{0, 1}, {1, 99}, {2, 2}};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = all[first + i];
  });
  const ValidationReport report = validate_bfs_tree(produced, 0, parent);
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(report.error_count, 1U);
}

}  // namespace
}  // namespace zbfs
