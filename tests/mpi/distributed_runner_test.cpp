// The whole distributed benchmark against the single-process one: the same search keys,
// the same traversed-edge counts, every search validated, phases accounted.
#include "zbfs/driver/distributed_runner.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mpi_test_support.hpp"
#include "zbfs/metrics/energy_counter.hpp"
#include "zbfs/metrics/energy_meter.hpp"
#include "zbfs/metrics/rank_aggregation.hpp"
#include "zbfs/mpi/communicator.hpp"
#include "zbfs/mpi/environment.hpp"
#include "zbfs/validate/reference_bfs.hpp"

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
  config.graph.scale = 10;
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

// Graphs with fewer vertices and fewer edges than ranks, where most ranks own nothing:
// every kernel on every partition ends (a rank that owns nothing still takes part in
// every collective), reaches what a sequential BFS reaches, and validates every tree;
// with the files' weights, and with drawn ones (a weight of 0 among the files').
TEST(DistributedRunner, TinyGraphsRunEveryKernelOnEveryPartition) {
  struct WeightedEdge {
    std::uint64_t u, v;
    double w;
  };
  const Communicator world = Communicator::world();
  std::uint64_t id = static_cast<std::uint64_t>(::getpid());
  world.broadcast(std::span<std::uint64_t>(&id, 1), 0);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("zbfs_tiny_" + std::to_string(id) + "_" + std::to_string(world_size()));
  const std::vector<std::pair<std::string, std::vector<WeightedEdge>>> graphs = {
      {"edge", {{0, 1, 1}}},
      {"zero_weight", {{0, 1, 0}}},
      {"path3", {{0, 1, 0.5}, {1, 2, 0.25}}},
      {"path4", {{0, 1, 1}, {1, 2, 2}, {2, 3, 0}}},
      {"path9", {{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 4, 1}, {4, 5, 1}, {5, 6, 1}, {6, 7, 1}, {7, 8, 1}}},
      {"far_ends", {{0, 40, 3}, {40, 7, 1}, {20, 21, 2}}},  // most ids have no edges
  };
  if (world.rank() == 0) {
    std::filesystem::create_directories(dir);
    for (const auto& [name, edges] : graphs) {
      std::ofstream out(dir / (name + ".txt"));
      for (const WeightedEdge& e : edges) out << e.u << ' ' << e.v << ' ' << e.w << '\n';
    }
  }
  world.barrier();
  const int p = world_size();
  const std::vector<std::pair<Partition, std::optional<GridShape>>> layouts = {{Partition::k1D, std::nullopt},
                                                                               {Partition::k2D, std::nullopt},
                                                                               {Partition::k2D, GridShape{1, p}},
                                                                               {Partition::kHybrid, std::nullopt}};
  for (const auto& [name, weighted] : graphs) {
    std::vector<Edge> edges;
    std::uint64_t n = 0;
    for (const WeightedEdge& e : weighted) {
      edges.push_back({e.u, e.v});
      n = std::max({n, e.u + 1, e.v + 1});
    }
    for (const std::optional<TupleWeightSource> weights :
         {std::optional<TupleWeightSource>(), std::optional<TupleWeightSource>(TupleWeightSource::kUniform)}) {
      for (const auto& [partition, grid] : layouts) {
        SCOPED_TRACE(name + (weights ? ", uniform weights, " : ", the file's weights, ") +
                     std::string(to_string(partition)) + (grid ? " 1xP" : ""));
        RunConfig config;
        config.input = GraphFileSpec{};
        config.input->path = (dir / (name + ".txt")).string();
        config.kernels = {true, true};
        config.weights = weights;
        config.roots_at_most_eligible = true;
        config.quiet = true;
        config.partition = partition;
        config.grid = grid;
        const RunResult run = run_distributed_benchmark(config);
        ASSERT_FALSE(run.searches.empty());
        ASSERT_EQ(run.sssp_searches.size(), run.searches.size());
        for (std::size_t i = 0; i < run.searches.size(); ++i) {
          const std::vector<std::int64_t> levels = reference_bfs_levels(n, edges, run.searches[i].root);
          const auto reached = static_cast<std::uint64_t>(
              std::count_if(levels.begin(), levels.end(), [](std::int64_t l) { return l >= 0; }));
          EXPECT_EQ(run.searches[i].reached_vertices, reached) << "BFS from " << run.searches[i].root;
          EXPECT_TRUE(run.searches[i].validated);
          EXPECT_EQ(run.sssp_searches[i].root, run.searches[i].root);
          EXPECT_EQ(run.sssp_searches[i].reached_vertices, reached) << "SSSP from " << run.searches[i].root;
          EXPECT_TRUE(run.sssp_searches[i].validated);
        }
      }
    }
  }
  world.barrier();
  if (world.rank() == 0) std::filesystem::remove_all(dir);
}

// A counter that counts `step` microjoules more at every reading.
class SteppingCounter final : public EnergyCounter {
 public:
  SteppingCounter(EnergyScope scope, std::uint64_t step) : scope_(scope), step_(step) {}
  [[nodiscard]] std::string name() const override { return scope_ == EnergyScope::kHost ? "host" : "device"; }
  [[nodiscard]] EnergyScope scope() const override { return scope_; }
  std::optional<std::uint64_t> read_microjoules(std::string&) override { return count_ += step_; }
  [[nodiscard]] std::uint64_t range_microjoules() const override { return 0; }

 private:
  EnergyScope scope_;
  std::uint64_t step_;
  std::uint64_t count_ = 0;
};

// Every other rank stands for a node's first rank and reads its host counters, each
// counting 1 J a reading; rank 1 also reads a device. The sums go over the readers, and
// a reader without counters makes its part not measured, named by the count of ranks.
TEST(DistributedRunner, EnergyIsSummedOverTheRanksThatRead) {
  const Communicator world = Communicator::world();
  const bool host_reader = world.rank() % 2 == 0;
  const bool device_reader = world.rank() == 1;
  const auto meter = [&](bool host_fails) {
    std::vector<std::unique_ptr<EnergyCounter>> counters;
    if (host_reader && !host_fails) counters.push_back(std::make_unique<SteppingCounter>(EnergyScope::kHost, 1000000));
    if (device_reader) counters.push_back(std::make_unique<SteppingCounter>(EnergyScope::kDevice, 3000000));
    EnergyMeter m(std::move(counters));
    m.enter(EnergyPhase::kGeneration);
    m.enter(EnergyPhase::kBfs);
    m.enter(EnergyPhase::kOther);
    return m;
  };
  const int host_readers = (world.size() + 1) / 2;
  const EnergyRecord all = summarize_energy(world, meter(false), host_reader, device_reader, true, "");
  EXPECT_TRUE(all.host_measured);
  EXPECT_EQ(all.device_measured, world.size() > 1);
  EXPECT_DOUBLE_EQ(all.joules[static_cast<std::size_t>(EnergyPhase::kBfs)].host, host_readers);
  EXPECT_DOUBLE_EQ(all.joules[static_cast<std::size_t>(EnergyPhase::kBfs)].device, world.size() > 1 ? 3.0 : 0.0);
  EXPECT_EQ(all.why_not.empty(), world.size() > 1) << all.why_not;

  if (world.size() < 3) return;
  // Rank 2's host counters cannot be read: the host part is not measured on any rank.
  const EnergyRecord partial = summarize_energy(world, meter(world.rank() == 2), host_reader, device_reader, true, "");
  EXPECT_FALSE(partial.host_measured);
  EXPECT_TRUE(partial.device_measured);
  EXPECT_TRUE(partial.measured());
  EXPECT_DOUBLE_EQ(partial.total(EnergyPhase::kBfs), 3.0);
  if (world.rank() != 2) {
    EXPECT_EQ(partial.why_not,
              "the RAPL counters of 1 of " + std::to_string(host_readers) + " nodes could not be read");
  }
}

}  // namespace
}  // namespace zbfs
