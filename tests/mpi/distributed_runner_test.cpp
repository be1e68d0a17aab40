// The whole distributed benchmark against the single-process one: the same search keys,
// the same traversed-edge counts, every search validated, phases accounted.
#include "zbfs/driver/distributed_runner.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <utility>
#include <vector>

#include "mpi_test_support.hpp"
#include "zbfs/mpi/environment.hpp"

namespace zbfs {
namespace {

// The same keys, traversed edges, reached vertices and depths, every search validated.
void expect_same_searches(const RunResult& distributed, const RunResult& shared) {
  ASSERT_EQ(distributed.searches.size(), shared.searches.size());
  for (std::size_t i = 0; i < shared.searches.size(); ++i) {
    EXPECT_EQ(distributed.searches[i].root, shared.searches[i].root);
    EXPECT_EQ(distributed.searches[i].traversed_edges, shared.searches[i].traversed_edges);
    EXPECT_EQ(distributed.searches[i].reached_vertices, shared.searches[i].reached_vertices);
    EXPECT_TRUE(distributed.searches[i].validated);
    EXPECT_EQ(distributed.searches[i].stats.levels(), shared.searches[i].stats.levels());
  }
}

RunConfig small_run(std::uint64_t roots) {
  RunConfig config;
  config.scale = 10;
  config.num_roots = roots;
  config.quiet = true;
  return config;
}

TEST(DistributedRunner, AgreesWithTheSingleProcessBenchmark) {
  RunConfig config = small_run(6);
  const RunResult shared = run_benchmark(config);
  const int p = world_size();
  // 1D; 2D on the default grid (all ranks share this node: p x 1); 2D on a row of p.
  const std::vector<std::pair<Partition, std::optional<GridShape>>> layouts = {
      {Partition::k1D, std::nullopt}, {Partition::k2D, std::nullopt}, {Partition::k2D, GridShape{1, p}}};
  for (const auto& [partition, grid] : layouts) {
    config.partition = partition;
    config.grid = grid;
    const RunResult distributed = run_distributed_benchmark(config);
    const GridShape want = grid ? *grid : GridShape{p, 1};
    if (partition == Partition::k2D) {
      EXPECT_EQ(distributed.grid, want);
    }
    expect_same_searches(distributed, shared);
    EXPECT_EQ(distributed.num_graph_edges, shared.num_graph_edges);
    EXPECT_GT(distributed.phases[Phase::kLocalExpansion].time_s.max, 0.0);
    EXPECT_GT(distributed.phases[Phase::kValidation].time_s.max, 0.0);
    if (distributed.num_processes > 1) {
      // A grid of one column has rows of one rank: nothing to fold or reduce along them.
      if (distributed.grid.cols == 1) continue;
      EXPECT_GT(distributed.phases[Phase::kRowExchange].raw_bytes.sum, 0.0);
      EXPECT_GT(distributed.phases[Phase::kTerminationCheck].messages.sum, 0.0);
      // Pipelined folds (the default) carry the parents: in 1D nothing is left to
      // reduce; in 2D bottom-up discoveries still are.
      if (partition == Partition::k1D && pipelines_folds(config)) {
        EXPECT_EQ(distributed.phases[Phase::kPredecessorReduction].messages.sum, 0.0);
      } else {
        EXPECT_GT(distributed.phases[Phase::kPredecessorReduction].messages.sum, 0.0);
      }
      EXPECT_GE(distributed.phases[Phase::kRowExchange].raw_bytes.max,
                distributed.phases[Phase::kRowExchange].raw_bytes.min);
    }
  }
}

// Kernel 3 too: the same keys, traversed edges and reached vertices as one process, every
// tree validated, in the reference's order (every BFS, then every SSSP).
TEST(DistributedRunner, SsspAgreesWithTheSingleProcessBenchmark) {
  RunConfig config = small_run(4);
  config.kernels = {true, true};
  const RunResult shared = run_benchmark(config);
  ASSERT_EQ(shared.sssp_searches.size(), 4U);
  const int p = world_size();
  for (const auto& [partition, grid] : std::vector<std::pair<Partition, std::optional<GridShape>>>{
           {Partition::k1D, std::nullopt}, {Partition::k2D, GridShape{1, p}}}) {
    config.partition = partition;
    config.grid = grid;
    const RunResult distributed = run_distributed_benchmark(config);
    expect_same_searches(distributed, shared);
    ASSERT_EQ(distributed.sssp_searches.size(), shared.sssp_searches.size());
    for (std::size_t i = 0; i < shared.sssp_searches.size(); ++i) {
      const SearchResult& mine = distributed.sssp_searches[i];
      EXPECT_EQ(mine.root, shared.sssp_searches[i].root);
      EXPECT_EQ(mine.traversed_edges, shared.sssp_searches[i].traversed_edges);
      EXPECT_EQ(mine.reached_vertices, shared.sssp_searches[i].reached_vertices);
      EXPECT_TRUE(mine.validated);
      EXPECT_EQ(mine.sssp.reached_vertices, mine.reached_vertices);
      EXPECT_GE(mine.sssp.buckets, 1U);
    }
    ASSERT_TRUE(distributed.result_block.sssp.has_value());
    EXPECT_GT(distributed.result_block.sssp->teps.harmonic_mean, 0.0);
  }
}

// --partition hybrid: nodes of --ranks-per-node ranks (or of the ranks sharing this
// machine: all of them, so one processor row), the same searches as one process.
TEST(DistributedRunner, HybridRunsAgreeWithTheSingleProcessBenchmark) {
  RunConfig config = small_run(6);
  const RunResult shared = run_benchmark(config);
  const int p = world_size();
  config.partition = Partition::kHybrid;
  for (const std::optional<int> per_node : {std::optional<int>(), std::optional<int>(p % 2 == 0 ? 2 : 1)}) {
    config.network.ranks_per_node = per_node;
    const RunResult distributed = run_distributed_benchmark(config);
    EXPECT_EQ(distributed.grid, *hybrid_grid(p, per_node.value_or(p)));
    EXPECT_EQ(distributed.config.partition, Partition::kHybrid);
    expect_same_searches(distributed, shared);
  }
  if (p > 1) {
    config.network.ranks_per_node = p + 1;
    EXPECT_THROW(run_distributed_benchmark(config), Error);
  }
}

// --prune: the same trees' counts and depths as the unpruned single-process benchmark.
TEST(DistributedRunner, PrunedRunsAgreeWithTheSingleProcessBenchmark) {
  RunConfig config = small_run(8);
  const RunResult shared = run_benchmark(config);
  config.prune = true;
  for (const Partition partition : {Partition::k1D, Partition::k2D}) {
    config.partition = partition;
    const RunResult distributed = run_distributed_benchmark(config);
    expect_same_searches(distributed, shared);
    for (const SearchResult& search : distributed.searches) {
      ASSERT_FALSE(search.stats.steps.empty());
      EXPECT_EQ(search.stats.steps.back().kind, StepKind::kAttach);
    }
  }
}

}  // namespace
}  // namespace zbfs
