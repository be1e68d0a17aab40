// The run's memory estimate, which refuses impossible sizes before anything is allocated.
#include "zbfs/driver/run_config.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "zbfs/core/packed_edge_list.hpp"

namespace zbfs {
namespace {

TEST(MemoryEstimate, GrowsWithTheGraphAndNeverWraps) {
  // An input file's ids reach 2^62; the estimate's byte counts pass 2^64 there and once
  // wrapped to small numbers (2^60 vertices then passed the check and failed allocating).
  for (const Partition partition : {Partition::k1D, Partition::k2D}) {
    RunConfig config;
    config.partition = partition;
    for (const int ranks : {1, 4, 6}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks");
      std::uint64_t previous = 0;
      for (int bits = 10; bits <= 62; ++bits) {
        const std::uint64_t n = std::uint64_t{1} << bits;
        const std::uint64_t estimate = estimate_rank_peak_memory_bytes(config, ranks, n, 16);
        EXPECT_GE(estimate, previous) << "2^" << bits << " vertices";
        // At least each rank's parent per owned vertex (8 bytes), or all of uint64.
        const std::uint64_t parents = n / static_cast<std::uint64_t>(ranks) * 8;
        EXPECT_GE(estimate, bits <= 60 ? parents : UINT64_MAX) << "2^" << bits << " vertices";
        previous = estimate;
      }
    }
  }
}

TEST(MemoryEstimate, CountsTheEdgesOfEveryRank) {
  RunConfig config;
  const std::uint64_t n = std::uint64_t{1} << 20;
  const std::uint64_t m = std::uint64_t{16} << 20;
  const std::uint64_t one = estimate_rank_peak_memory_bytes(config, 1, n, m);
  const std::uint64_t four = estimate_rank_peak_memory_bytes(config, 4, n, m);
  EXPECT_GT(one, 16 * m);  // the CSR and the kept edge list, at 4-byte ids
  EXPECT_LT(four, one);
  EXPECT_GT(four, one / 8);  // per rank, a quarter of the edges plus the baseline
}

// Small runs are estimated at what they hold (bench/memory_estimate.py measured a rank's
// part of the node's memory at scale 12 at 22.7 to 24.5 MiB at 1, 4 and 16 ranks, and at
// scale 14 at 23.8 to 24.7 MiB at 128): no 200 MiB of fixed buffers that refused runs which
// fit, and no peer's shared segments counted again.
TEST(MemoryEstimate, SmallRunsAreEstimatedAtWhatTheyHold) {
  RunConfig config;
  config.graph.scale = 12;
  for (const Partition partition : {Partition::k1D, Partition::k2D, Partition::kHybrid}) {
    config.partition = partition;
    for (const int ranks : {1, 4, 16}) {
      const std::uint64_t estimate = estimate_rank_peak_memory_bytes(config, ranks);
      EXPECT_GE(estimate, std::uint64_t{24} << 20) << ranks << " ranks";
      EXPECT_LE(estimate, std::uint64_t{30} << 20) << ranks << " ranks";
    }
  }
  config.graph.scale = 14;
  config.partition = Partition::k1D;
  const std::uint64_t at_128 = estimate_rank_peak_memory_bytes(config, 128);
  EXPECT_GE(at_128, std::uint64_t{25} << 20);
  EXPECT_LE(at_128, std::uint64_t{32} << 20);
}

}  // namespace
}  // namespace zbfs

namespace zbfs {
namespace {

// cuda-host keeps the device backend's copy of the graph in host memory: both estimates
// count it; cuda (device memory, checked separately) and cpu do not.
TEST(MemoryEstimate, EdgeListPolicyDecidesWhetherTheListIsCounted) {
  RunConfig config;
  config.graph.scale = 24;
  const std::uint64_t with = estimate_peak_memory_bytes(config, true);
  const std::uint64_t without = estimate_peak_memory_bytes(config, false);
  // The packed list of 2^28 tuples of two 24-bit ids: 6 bytes each.
  EXPECT_EQ(with - without, PackedEdgeList::bytes_needed(24, std::uint64_t{16} << 24));
  // auto keeps the list where the run fits with it (or memory is unknown), else not.
  EXPECT_TRUE(plan_memory(config, with).edge_list_kept);
  EXPECT_TRUE(plan_memory(config, std::nullopt).edge_list_kept);
  EXPECT_FALSE(plan_memory(config, with - 1).edge_list_kept);
  config.edge_list = EdgeListPolicy::kKeep;
  EXPECT_TRUE(plan_memory(config, without).edge_list_kept);
  config.edge_list = EdgeListPolicy::kRegenerate;
  EXPECT_FALSE(plan_memory(config, 10 * with).edge_list_kept);
  for (const EdgeListPolicy p : {EdgeListPolicy::kAuto, EdgeListPolicy::kKeep, EdgeListPolicy::kRegenerate})
    EXPECT_EQ(parse_edge_list_policy(to_string(p)), p);
  EXPECT_FALSE(parse_edge_list_policy("sometimes"));
}

// --adjacency auto: plain lists while they fit (with the edge list, then without it),
// then compressed ones; what reads plain lists always gets them.
TEST(MemoryEstimate, AdjacencyAutoCompressesOnlyWhenPlainDoesNotFit) {
  RunConfig config;
  config.graph.scale = 26;
  config.shared_memory = true;
  const std::uint64_t plain_kept = estimate_peak_memory_bytes(config, true, false);
  const std::uint64_t plain_regenerated = estimate_peak_memory_bytes(config, false, false);
  const std::uint64_t compressed_kept = estimate_peak_memory_bytes(config, true, true);
  const std::uint64_t compressed_regenerated = estimate_peak_memory_bytes(config, false, true);
  // Scale 26: the compressed lists save more than the edge list does.
  EXPECT_LT(compressed_regenerated, compressed_kept);
  EXPECT_LT(compressed_regenerated, plain_regenerated);
  EXPECT_LT(compressed_kept, plain_kept);
  // At most 60% of the plain peak with the list (the scale 26 target).
  EXPECT_LT(static_cast<double>(compressed_regenerated), 0.6 * static_cast<double>(plain_kept));
  const auto expect_plan = [&](std::optional<std::uint64_t> available, bool kept, bool compressed) {
    const MemoryPlan plan = plan_memory(config, available);
    EXPECT_EQ(plan.edge_list_kept, kept) << (available ? *available : 0);
    EXPECT_EQ(plan.compressed, compressed) << (available ? *available : 0);
    EXPECT_EQ(plan.estimated_peak_bytes, estimate_peak_memory_bytes(config, kept, compressed));
  };
  expect_plan(std::nullopt, true, false);
  expect_plan(plain_kept, true, false);
  expect_plan(plain_regenerated, false, false);
  expect_plan(plain_regenerated - 1, compressed_kept < plain_regenerated, true);
  expect_plan(compressed_regenerated, false, true);
  expect_plan(compressed_regenerated - 1, false, true);  // nothing fits: the smallest
  config.adjacency = AdjacencyChoice::kPlain;
  expect_plan(compressed_regenerated, false, false);
  config.adjacency = AdjacencyChoice::kCompressed;
  expect_plan(std::nullopt, true, true);
  config.edge_list = EdgeListPolicy::kKeep;
  expect_plan(compressed_regenerated, true, true);
  // The distributed kernels, the device backends and pruning read plain lists.
  config.adjacency = AdjacencyChoice::kAuto;
  config.edge_list = EdgeListPolicy::kAuto;
  config.prune = true;
  expect_plan(compressed_regenerated, false, false);
  config.prune = false;
  config.shared_memory = false;
  expect_plan(compressed_regenerated, false, false);
  config.adjacency = AdjacencyChoice::kCompressed;
  EXPECT_NO_THROW(validate_config(config));
  config.prune = true;
  EXPECT_THROW(validate_config(config), Error);
  for (const AdjacencyChoice a : {AdjacencyChoice::kAuto, AdjacencyChoice::kPlain, AdjacencyChoice::kCompressed})
    EXPECT_EQ(parse_adjacency_choice(to_string(a)), a);
  EXPECT_FALSE(parse_adjacency_choice("zipped"));
}

// SSSP adds the weights (the kept list's, the lists'), its workspace and its tree, reads
// plain lists only, and --kernels parses every spelling of one or both kernels.
TEST(MemoryEstimate, SsspCountsItsWeightsAndKeepsPlainLists) {
  RunConfig config;
  config.graph.scale = 24;
  config.shared_memory = true;
  const std::uint64_t bfs_only = estimate_peak_memory_bytes(config, true, false);
  config.kernels = {true, true};
  const std::uint64_t both = estimate_peak_memory_bytes(config, true, false);
  const std::uint64_t n = std::uint64_t{1} << 24;
  const std::uint64_t m = 16 * n;
  // At least the tuples' weights and the lists' (4 bytes each), and 24 bytes a vertex.
  EXPECT_GE(both - bfs_only, 4 * m + 8 * m + 24 * n);
  EXPECT_LT(estimate_peak_memory_bytes(config, false, false), both);
  const MemoryPlan plan = plan_memory(config, estimate_peak_memory_bytes(config, false, false) / 2);
  EXPECT_FALSE(plan.compressed);
  EXPECT_FALSE(plan.edge_list_kept);
  EXPECT_EQ(parse_kernel_choice("bfs"), (KernelChoice{true, false}));
  EXPECT_EQ(parse_kernel_choice("sssp"), (KernelChoice{false, true}));
  EXPECT_EQ(parse_kernel_choice("sssp,bfs"), (KernelChoice{true, true}));
  for (const char* bad : {"", "bfs,", ",sssp", "bfs,bfs", "BFS", "bfs sssp", "sssp,bfs,sssp"}) {
    EXPECT_FALSE(parse_kernel_choice(bad)) << bad;
  }
  EXPECT_EQ(to_string(KernelChoice{true, true}), "bfs,sssp");
  EXPECT_NO_THROW(validate_config(config));
  // Distributed: every partition runs it; a rank's estimate holds a weight beside each of
  // its list entries (and the triples of kernel 1's shuffle), its slice's weights.
  config.shared_memory = false;
  for (const Partition partition : {Partition::k1D, Partition::k2D, Partition::kHybrid}) {
    config.partition = partition;
    EXPECT_NO_THROW(validate_config(config));
  }
  config.partition = Partition::k1D;
  RunConfig bfs_config = config;
  bfs_config.kernels = {true, false};
  EXPECT_GE(estimate_rank_peak_memory_bytes(config, 4) - estimate_rank_peak_memory_bytes(bfs_config, 4),
            2 * m / 4 * 4 + m / 4 * 4);
  config.backend = Backend::kCudaHost;
  EXPECT_THROW(validate_config(config), Error);
}

TEST(MemoryEstimate, CudaHostCountsTheDeviceCopy) {
  RunConfig config;
  config.graph.scale = 20;
  config.overlap = false;  // the device backends' folds are not pipelined: the same exchanges
  const std::uint64_t cpu_shared = estimate_peak_memory_bytes(config);
  const std::uint64_t cpu_rank = estimate_rank_peak_memory_bytes(config, 4);
  config.backend = Backend::kCudaHost;
  EXPECT_GT(estimate_peak_memory_bytes(config), cpu_shared + (std::uint64_t{32} << 20));
  EXPECT_GT(estimate_rank_peak_memory_bytes(config, 4), cpu_rank + (std::uint64_t{8} << 20));
  config.backend = Backend::kCuda;
  EXPECT_EQ(estimate_peak_memory_bytes(config), cpu_shared);
  EXPECT_EQ(estimate_rank_peak_memory_bytes(config, 4), cpu_rank);
}

// Pipelined folds count a filling batch and one in flight per destination (a bucket
// per next rank along a route); a direct fold no more than two words per row-group vertex
// or list entry, twice, however many destinations there are.
TEST(MemoryEstimate, PipelinedFoldsCountTheirBatches) {
  RunConfig config;
  config.partition = Partition::k1D;  // the row group is every vertex
  config.overlap = false;
  config.validate = false;  // a validation round takes the batches' place (below)
  const std::uint64_t n = std::uint64_t{1} << 20;
  const std::uint64_t m = std::uint64_t{16} << 20;
  // The batches belong to the search phase (the exchanger is made after kernel 1).
  int ranks = 16;
  const auto search = [&] { return estimate_rank_memory(config, ranks, n, m).search; };
  double bulk = search();
  config.overlap = true;
  config.batch_bytes = 1 << 15;
  EXPECT_NEAR(search() - bulk, 2.0 * 16 * (1 << 15), 1e-3);
  config.overlap.reset();  // unset: on for these direct exchanges
  EXPECT_NEAR(search() - bulk, 2.0 * 16 * (1 << 15), 1e-3);
  ranks = 1024;
  config.overlap = false;
  bulk = search();
  config.overlap = true;
  config.batch_bytes = 1 << 20;
  // 2^20 + 64 x 1024 row-group vertices, more than the rank's 2 x 16 x 2^20 / 1024 x 1.1
  // list entries (plus one tuple's).
  const double entries = 2.0 * (16.0 * (1 << 20) / ranks + 1) * 1.1;
  EXPECT_NEAR(search() - bulk, 2.0 * 16 * entries, 1e-3);
  EXPECT_EQ(estimate_rank_peak_memory_bytes(config, ranks, n, m),
            estimate_rank_memory(config, ranks, n, m).peak_bytes());
  // Along a route (on too when unset), buckets hold three words an item, and a relay as
  // many again for others: here fewer than 2.5 x 1024 batches of 1 MiB.
  config.route = RouteChoice{RouteKind::kGrid2, {}, true};
  config.overlap = false;
  const double routed_bulk = search();
  config.overlap.reset();
  EXPECT_NEAR(search() - routed_bulk, 2.0 * 24 * entries, 1e-3);
  config.batch_bytes = 1 << 9;  // 2.5 x 1024 of them are fewer
  EXPECT_NEAR(search() - routed_bulk, 2.5 * 1024 * (1 << 9), 1e-3);
  // The batches live within a level, a validation round after the search: the larger of
  // the two counts. At 16 ranks a round (2^20 tuples, 160 bytes each) outweighs 32
  // batches of 32 KiB, and even of 1 MiB.
  config = RunConfig{};
  config.partition = Partition::k1D;
  ranks = 16;
  config.overlap = false;
  bulk = search();
  config.overlap = true;
  EXPECT_EQ(search(), bulk);
  config.batch_bytes = 1 << 20;
  EXPECT_EQ(search(), bulk);
}

// GCC 12 takes the optional route's vector for uninitialized here (a known false
// positive of std::optional holding a vector).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// At a fixed size per rank the batches stop growing with P: 2.5 x P batches at first,
// then a level's items (here along a route, 2^14 vertices and 16 x 2^14 tuples a rank,
// without validation).
TEST(MemoryEstimate, RoutedBatchesStopGrowingWithTheRanks) {
  RunConfig config;
  config.partition = Partition::k1D;
  config.validate = false;
  config.route = RouteChoice{RouteKind::kGrid2, {}, true};
  std::vector<double> batches;
  for (const int ranks : {16, 1024, 65536}) {
    const std::uint64_t n = std::uint64_t{1} << 14 << std::bit_width(static_cast<unsigned>(ranks) - 1);
    config.overlap = false;
    const double bulk = estimate_rank_memory(config, ranks, n, 16 * n).search;
    config.overlap = true;
    batches.push_back(estimate_rank_memory(config, ranks, n, 16 * n).search - bulk);
  }
  EXPECT_EQ(batches[0], 2.5 * 16 * (32 << 10));
  const double entries = 2.0 * (16.0 * (1 << 14) + 1) * 1.1;
  EXPECT_EQ(batches[1], 2.0 * 24 * entries);
  EXPECT_EQ(batches[2], batches[1]);
}
// A route with relays carries kernel 1's shuffle (a round's pair words held once more
// while a relay reads what arrived) and validation's reads (every rank on a path
// remembers who asked: 100 bytes a round's tuple and 8 more a hop); direct and sparse
// carry neither.
TEST(MemoryEstimate, RelayedRoutesHoldTheShuffleAndTheReadsOnceMore) {
  RunConfig config;
  config.partition = Partition::k2D;
  config.overlap = false;
  const int ranks = 16;
  const std::uint64_t n = std::uint64_t{1} << 18;
  const double round = 16.0 * n / ranks + 1;  // all of a rank's tuples: one round
  const RankMemoryEstimate plain = estimate_rank_memory(config, ranks, n, 16 * n);
  for (const RouteKind kind : {RouteKind::kDirect, RouteKind::kSparse}) {
    config.route = RouteChoice{kind, {}, true};
    const RankMemoryEstimate unrelayed = estimate_rank_memory(config, ranks, n, 16 * n);
    EXPECT_EQ(unrelayed.kernel1, plain.kernel1);
    EXPECT_EQ(unrelayed.search, plain.search);
  }
  for (const RouteKind kind : {RouteKind::kGrid2, RouteKind::kHypercube}) {
    config.route = RouteChoice{kind, {}, true};
    const RankMemoryEstimate routed = estimate_rank_memory(config, ranks, n, 16 * n);
    EXPECT_DOUBLE_EQ(routed.kernel1 - plain.kernel1, 2 * round * 16 * 1.1);
    const int hops = RoutePlan(kind, ranks).hops();
    EXPECT_DOUBLE_EQ(routed.search - plain.search, round * (100.0 + 8.0 * hops));
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// SSSP over a fold of several members gathers a bucket's settled vertices over it: a word
// per row-group vertex at most, on top of the distances sent (4 bytes and a bit each) and
// the validation round's larger tuples (40 bytes more each). In 1D the row group is every
// vertex.
TEST(MemoryEstimate, SsspGathersABucketOverTheFold) {
  RunConfig config;
  config.partition = Partition::k1D;
  const int ranks = 128;
  const std::uint64_t n = std::uint64_t{1} << 20;
  const std::uint64_t m = std::uint64_t{16} << 20;
  const auto sssp_extra = [&] {
    config.kernels = {true, false};
    const double bfs = estimate_rank_memory(config, ranks, n, m).search;
    config.kernels = {true, true};
    return estimate_rank_memory(config, ranks, n, m).search - bfs;
  };
  const double row_group = static_cast<double>(n) + 64.0 * ranks;
  const double round = static_cast<double>(m) / ranks + 1;
  EXPECT_GE(sssp_extra(), (8 + 4.125) * row_group + 40 * round);
}

// Kernel 1 sums the degrees over the processor column: a word per column-group vertex,
// and MPI's reduce-scatter twice that again over a column of several ranks, beside the
// forward lists' offsets (a word per column-group vertex). A 2D grid of one column on
// one node puts every vertex in the column group.
TEST(MemoryEstimate, Kernel1SumsTheDegreesOverTheColumn) {
  RunConfig config;
  config.partition = Partition::k2D;
  config.hypersparse = HypersparseChoice::kOff;
  const int ranks = 128;
  config.grid = GridShape{ranks, 1};
  const std::uint64_t n = std::uint64_t{1} << 20;
  const double col_group = static_cast<double>(n) + 64.0 * ranks;
  const RankMemoryEstimate tall = estimate_rank_memory(config, ranks, n, 16 * n);
  EXPECT_GE(tall.kernel1, (24 + 8) * col_group);
  config.grid = GridShape{1, ranks};  // one row: no sum over a column
  EXPECT_LT(estimate_rank_memory(config, ranks, n, 16 * n).kernel1, tall.kernel1 / 2);
  // With --hypersparse the sums travel as pairs and the offsets are by position: what
  // grows is the rank's rows with pairs (at most its 2^18 list entries' rows), not the
  // group's 2^20.
  config.hypersparse = HypersparseChoice::kAuto;
  config.grid = GridShape{ranks, 1};
  const RankMemoryEstimate sparse = estimate_rank_memory(config, ranks, n, 16 * n);
  EXPECT_LT(sparse.kernel1, tall.kernel1 / 2);
  EXPECT_LT(sparse.search, tall.search);
  config.kernels = KernelChoice{false, true};  // SSSP reads its lists by row
  EXPECT_GE(estimate_rank_memory(config, ranks, n, 16 * n).kernel1, (24 + 8) * col_group);
}

// A rank's peak is its busiest phase's, not the sum of its phases: kernel 1's round
// buffers are gone before the search's state and validation rounds are made.
TEST(MemoryEstimate, ARanksPeakIsItsBusiestPhase) {
  RunConfig config;
  config.graph.scale = 20;
  const std::uint64_t n = std::uint64_t{1} << 20;
  const std::uint64_t m = std::uint64_t{16} << 20;
  for (const int ranks : {1, 4, 16, 128}) {
    const RankMemoryEstimate phases = estimate_rank_memory(config, ranks, n, m);
    EXPECT_GT(phases.kernel1, 0.0);
    EXPECT_GT(phases.search, 0.0);
    EXPECT_EQ(phases.peak_bytes(), static_cast<std::uint64_t>(phases.held + std::max(phases.kernel1, phases.search)));
    EXPECT_LT(phases.peak_bytes(), static_cast<std::uint64_t>(phases.held + phases.kernel1 + phases.search));
  }
  // Measured at 4 ranks, scale 20, 1d (bench/memory_estimate.py): a 250 MiB peak, which
  // the sum of the phases (333 MiB) put 33% too high.
  config.partition = Partition::k1D;
  const std::uint64_t estimate = estimate_rank_peak_memory_bytes(config, 4, n, m);
  EXPECT_GE(estimate, std::uint64_t{250} << 20);
  EXPECT_LE(estimate, std::uint64_t{325} << 20);
}

// --transport rma counts its windows: two halves of the largest receive, a quarter more.
TEST(MemoryEstimate, OneSidedTransportCountsItsWindows) {
  RunConfig config;
  config.graph.scale = 22;
  config.overlap = false;  // unset, it differs between the transports
  // The windows belong to the search phase.
  const auto search = [&] { return estimate_rank_memory(config, 4, 1 << 22, 64 << 20).search; };
  const double two_sided = search();
  config.transport = Transport::kRma;
  const double one_sided = search();
  // 2^22 / 4 owned vertices: 16 MiB of two words each, below a validation round's 32 MiB.
  EXPECT_EQ(one_sided - two_sided, 2 * 1.25 * (32 << 20));
  config.validate = false;
  config.transport = Transport::kTwoSided;
  const double unvalidated = search();
  config.transport = Transport::kRma;
  EXPECT_GT(search(), unvalidated + (32 << 20));
}

}  // namespace
}  // namespace zbfs
