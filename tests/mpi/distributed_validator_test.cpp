// The distributed validator must reject what the single-process validator rejects, for
// the same rules: parent cycles, links that are not input edges, trees that stop short
// of the component, out-of-range parents, a wrong root.
#include "zbfs/validate/distributed_validator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../unit/test_graphs.hpp"
#include "mpi_test_support.hpp"
#include "zbfs/bfs/distributed_bfs.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/validate/reference_bfs.hpp"
#include "zbfs/wire/direct/direct_exchanger.hpp"
#include "zbfs/wire/exchanger_factory.hpp"

namespace zbfs {
namespace {

std::vector<ValidationRule> sorted_rules(std::vector<ValidationRule> rules) {
  std::sort(rules.begin(), rules.end());
  return rules;
}

class DistributedValidatorTest : public ::testing::TestWithParam<Partition> {
 protected:
  void SetUp() override {
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    grid_.emplace(
        GetParam(),
        GetParam() == Partition::kHybrid ? *hybrid_grid(ranks, ranks % 2 == 0 ? 2 : 1) : most_square_grid(ranks),
        generator_.num_vertices(), &metrics_);
    slice_ = testing::my_slice(generator_, *grid_);
    GraphSpec spec;
    spec.scale = 9;
    spec.edgefactor = 16;
    spec.seed = 11;
    regenerated_ = regenerated_graph_slice(spec, grid_->world().rank(), grid_->world().size());
    ASSERT_TRUE(regenerated_.has_value());
    graph_.emplace(*grid_, slice_);
    DistributedBfs<std::uint32_t> bfs(*grid_, *graph_, exchanger_, metrics_);
    owned_.resize(grid_->blocks().block());
    bfs.run(root_, owned_, BfsOptions{});
    parent_ = testing::gather_parents(*grid_, owned_);
    levels_ = levels_from_parents(parent_, root_);
  }

  // The exchangers the distributed validator may be given: direct, and routed (merging
  // and not).
  static std::vector<std::unique_ptr<Exchanger>> exchangers() {
    std::vector<std::unique_ptr<Exchanger>> all;
    all.push_back(make_exchanger({}));
    all.push_back(make_exchanger({ColumnGather::kAllgatherv, {}, RouteChoice{RouteKind::kHypercube, {}, true}}));
    all.push_back(make_exchanger({ColumnGather::kAllgatherv, {}, RouteChoice{RouteKind::kGrid2, {}, false}}));
    return all;
  }

  // This rank's input edges both ways: the stored slice kernel 1 was built from, and the
  // generator's share produced again (other edges per rank, the same list in all).
  [[nodiscard]] std::vector<InputEdges> shares() const { return {InputEdges(slice_), *regenerated_}; }

  // Corrupts the full parent array, then checks both validators reject it alike.
  void expect_rejected(const std::function<void(std::vector<std::int64_t>&)>& corrupt, ValidationRule expected) {
    std::vector<std::int64_t> bad = parent_;
    corrupt(bad);
    const ValidationReport sequential = validate_bfs_tree(edges_, root_, bad);
    EXPECT_FALSE(sequential.ok());
    std::vector<std::int64_t> mine(owned_.size(), -1);
    const std::uint64_t first = grid_->my_first_vertex();
    for (std::uint64_t o = 0; o < mine.size() && first + o < bad.size(); ++o) mine[o] = bad[first + o];
    for (const InputEdges& share : shares()) {
      SCOPED_TRACE(share.regenerated() ? "regenerated" : "stored");
      for (const std::unique_ptr<Exchanger>& exchanger : exchangers()) {
        SCOPED_TRACE(exchanger->traits().relays_updates ? "routed" : "direct");
        const ValidationReport distributed =
            validate_distributed_bfs_tree(*grid_, share, *exchanger, root_, mine, metrics_, 700);
        EXPECT_FALSE(distributed.ok());
        EXPECT_TRUE(distributed.violates(expected))
            << (distributed.messages.empty() ? "" : distributed.messages.front());
        EXPECT_EQ(sorted_rules(distributed.violated), sorted_rules(sequential.violated));
        EXPECT_FALSE(distributed.messages.empty());
      }
    }
  }

  // The first vertex (in id order) at `level` that satisfies `pick`.
  std::uint64_t at_level(std::int64_t level, const std::function<bool(std::uint64_t)>& pick = {}) const {
    for (std::uint64_t v = 0; v < levels_.size(); ++v) {
      if (levels_[v] == level && (!pick || pick(v))) return v;
    }
    ADD_FAILURE() << "no vertex at level " << level;
    return root_;
  }

  PhaseMetrics metrics_;
  KroneckerGenerator generator_{KroneckerParams{9, 16, 11}};
  PackedEdgeList edges_ = generate_edge_list(generator_);
  std::optional<ProcessGrid> grid_;
  PackedEdgeList slice_;
  std::optional<InputEdges> regenerated_;
  std::optional<DistributedGraph<std::uint32_t>> graph_;
  DirectExchanger exchanger_{ColumnGather::kAllgatherv};
  std::uint64_t root_ = edges_.get(0).u;
  std::vector<std::int64_t> owned_;
  std::vector<std::int64_t> parent_;
  std::vector<std::int64_t> levels_;
};

TEST_P(DistributedValidatorTest, AcceptsTheBfsTree) {
  std::vector<std::int64_t> mine = owned_;
  const ValidationReport sequential = validate_bfs_tree(edges_, root_, parent_);
  ASSERT_TRUE(sequential.ok());
  for (const InputEdges& share : shares()) {
    SCOPED_TRACE(share.regenerated() ? "regenerated" : "stored");
    for (const std::unique_ptr<Exchanger>& exchanger : exchangers()) {
      const ValidationReport report =
          validate_distributed_bfs_tree(*grid_, share, *exchanger, root_, mine, metrics_, 700);
      EXPECT_TRUE(report.ok());
      EXPECT_EQ(report.traversed_edges, sequential.traversed_edges);
      EXPECT_EQ(report.reached_vertices, sequential.reached_vertices);
    }
  }
}

TEST_P(DistributedValidatorTest, RejectsAParentCycle) {
  expect_rejected(
      [&](std::vector<std::int64_t>& p) {
        const std::uint64_t a = at_level(2);
        const std::uint64_t b = static_cast<std::uint64_t>(p[a]);
        p[b] = static_cast<std::int64_t>(a);
      },
      ValidationRule::kTreeRootedAtKey);
}

TEST_P(DistributedValidatorTest, RejectsAParentThatIsNoNeighbour) {
  expect_rejected(
      [&](std::vector<std::int64_t>& p) {
        const std::uint64_t v = at_level(2);
        // Another level-1 vertex that shares no input edge with v.
        const std::uint64_t w = at_level(1, [&](std::uint64_t x) {
          for (std::uint64_t i = 0; i < edges_.size(); ++i) {
            const Edge e = edges_.get(i);
            if ((e.u == x && e.v == v) || (e.v == x && e.u == v)) return false;
          }
          return true;
        });
        p[v] = static_cast<std::int64_t>(w);
      },
      ValidationRule::kParentIsInputEdge);
}

TEST_P(DistributedValidatorTest, RejectsATreeThatMissesPartOfTheComponent) {
  expect_rejected(
      [&](std::vector<std::int64_t>& p) {
        // Drop every vertex of the deepest level from the tree.
        const std::int64_t deepest = *std::max_element(levels_.begin(), levels_.end());
        for (std::uint64_t v = 0; v < p.size(); ++v) {
          if (levels_[v] == deepest) p[v] = -1;
        }
      },
      ValidationRule::kSpansComponent);
}

TEST_P(DistributedValidatorTest, RejectsAnOutOfRangeParent) {
  expect_rejected([&](std::vector<std::int64_t>& p) { p[at_level(1)] = static_cast<std::int64_t>(p.size()) + 5; },
                  ValidationRule::kTreeRootedAtKey);
}

TEST_P(DistributedValidatorTest, RejectsAWrongRootParent) {
  expect_rejected([&](std::vector<std::int64_t>& p) { p[root_] = static_cast<std::int64_t>(at_level(1)); },
                  ValidationRule::kTreeRootedAtKey);
}

INSTANTIATE_TEST_SUITE_P(Partitions, DistributedValidatorTest,
                         ::testing::Values(Partition::k1D, Partition::k2D, Partition::kHybrid),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

}  // namespace
}  // namespace zbfs
