// The whole distributed benchmark against the single-process one: the same search keys,
// the same traversed-edge counts, every search validated, phases accounted.
#include "zbfs/driver/distributed_runner.hpp"

#include <gtest/gtest.h>

namespace zbfs {
namespace {

TEST(DistributedRunner, AgreesWithTheSingleProcessBenchmark) {
  RunConfig config;
  config.scale = 10;
  config.num_roots = 6;
  config.quiet = true;
  const RunResult shared = run_benchmark(config);
  for (const Partition partition : {Partition::k1D, Partition::k2D}) {
    config.partition = partition;
    const RunResult distributed = run_distributed_benchmark(config);
    ASSERT_EQ(distributed.searches.size(), shared.searches.size());
    for (std::size_t i = 0; i < shared.searches.size(); ++i) {
      EXPECT_EQ(distributed.searches[i].root, shared.searches[i].root);
      EXPECT_EQ(distributed.searches[i].traversed_edges, shared.searches[i].traversed_edges);
      EXPECT_EQ(distributed.searches[i].reached_vertices, shared.searches[i].reached_vertices);
      EXPECT_TRUE(distributed.searches[i].validated);
      EXPECT_EQ(distributed.searches[i].stats.levels(), shared.searches[i].stats.levels());
    }
    EXPECT_EQ(distributed.num_graph_edges, shared.num_graph_edges);
    EXPECT_GT(distributed.phases[Phase::kLocalExpansion].time_s.max, 0.0);
    EXPECT_GT(distributed.phases[Phase::kValidation].time_s.max, 0.0);
    if (distributed.num_processes > 1) {
      EXPECT_GT(distributed.phases[Phase::kRowExchange].raw_bytes.sum, 0.0);
      EXPECT_GT(distributed.phases[Phase::kTerminationCheck].messages.sum, 0.0);
      EXPECT_GT(distributed.phases[Phase::kPredecessorReduction].messages.sum, 0.0);
      EXPECT_GE(distributed.phases[Phase::kRowExchange].raw_bytes.max,
                distributed.phases[Phase::kRowExchange].raw_bytes.min);
    }
  }
}

}  // namespace
}  // namespace zbfs
