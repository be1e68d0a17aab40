// The distributed device search (backend/device_distributed_bfs.hpp) through the host
// launcher (--backend cuda-host) at this rank count, on every layout (1D, each 2D grid,
// hybrid): every search takes the CPU backend's steps (direction, frontier, discovered),
// gives the sequential reference BFS's levels and passes the Graph500 validator; with a
// codec on the wire (the id lists then cross PCIe as frames the device encodes and
// decodes), with search keys that have no edges, and with routes (the predecessor
// reduction is then relayed and merged on the way), and over the MPI device wire
// (--device-exchange cuda-aware: the steps' messages stay in target memory, here host
// memory, as ids or as bitpack frames, the bitmaps packed on the target). Skipped on a
// build without CUDA.
#include "zbfs/backend/device_distributed_bfs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "../unit/step_list.hpp"
#include "../unit/test_graphs.hpp"
#include "mpi_test_support.hpp"
#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/device_csr_builder.hpp"
#include "zbfs/bfs/distributed_bfs.hpp"
#include "zbfs/bfs/distributed_forest.hpp"
#include "zbfs/codec/codec_cost.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/mpi/environment.hpp"
#include "zbfs/validate/reference_bfs.hpp"
#include "zbfs/validate/validator.hpp"
#include "zbfs/wire/direct/direct_exchanger.hpp"
#include "zbfs/wire/exchanger_factory.hpp"

namespace zbfs {
namespace {

using testing::Layout;

void check_device_searches(const Layout& layout, int scale, std::uint64_t edgefactor, std::uint64_t seed,
                           Direction direction, CodecId codec, std::optional<RouteChoice> route = std::nullopt,
                           DeviceExchange exchange = DeviceExchange::kStaged) {
  SCOPED_TRACE(std::string(to_string(layout.partition)) + " grid " + layout.shape.to_string() + " scale " +
               std::to_string(scale) + " edgefactor " + std::to_string(edgefactor) + " direction " +
               std::string(to_string(direction)) + " codec " + std::string(to_string(codec)) + " route " +
               (route ? route->describe() : "none") + " exchange " + std::string(to_string(exchange)));
  PhaseMetrics metrics;
  const KroneckerGenerator generator(KroneckerParams{scale, edgefactor, seed});
  const ProcessGrid grid(layout.partition, layout.shape, generator.num_vertices(), &metrics);
  const PackedEdgeList slice = testing::my_slice(generator, grid);
  const DistributedGraph<std::uint32_t> graph(grid, slice);
  static const auto costs = std::make_shared<const CodecCostModel>(CodecCostModel::calibrate());
  const std::unique_ptr<Exchanger> exchanger =
      make_exchanger({ColumnGather::kAllgatherv, MessageCodec(CodecChoice{codec}, costs), route});
  DistributedBfs<std::uint32_t> cpu(grid, graph, *exchanger, metrics);
  // With a codec on the wire the id lists also cross PCIe as the device's bitpack frames:
  // always with bitpack, where the calibration prices them lower with bitmap.
  const cuda_backend::IdTransfer transfer = codec == CodecId::kNone      ? cuda_backend::IdTransfer::kRaw
                                            : codec == CodecId::kBitpack ? cuda_backend::IdTransfer::kFrames
                                                                         : cuda_backend::IdTransfer::kPriced;
  DeviceDistributedBfs device(Backend::kCudaHost, 0, grid, graph, *exchanger, metrics, false, transfer, exchange);
  const std::vector<Edge> edges = testing::kronecker_edges(scale, edgefactor, seed);
  const PackedEdgeList packed = testing::pack(scale, edges);
  BfsOptions options;
  options.direction = direction;
  // Ends of some tuples, and a vertex no tuple touches (searched alone).
  std::vector<std::uint64_t> roots;
  for (std::size_t i = 0; i < edges.size() && roots.size() < 4; i += 131) {
    if (edges[i].u != edges[i].v) roots.push_back(edges[i].u);
  }
  std::vector<bool> touched(generator.num_vertices(), false);
  for (const Edge& e : edges) touched[e.u] = touched[e.v] = true;
  for (std::uint64_t v = 0; v < touched.size(); ++v) {
    if (!touched[v]) {
      roots.push_back(v);
      break;
    }
  }
  std::vector<std::int64_t> cpu_owned(grid.blocks().block());
  std::vector<std::int64_t> owned(grid.blocks().block(), 7);
  for (const std::uint64_t root : roots) {
    SCOPED_TRACE("root " + std::to_string(root));
    const BfsStats want = cpu.run(root, cpu_owned, options);
    const BfsStats got = device.run(root, options);
    device.copy_parents(owned);
    EXPECT_EQ(testing::step_list(got), testing::step_list(want));
    const std::vector<std::int64_t> parent = testing::gather_parents(grid, owned);
    ASSERT_EQ(levels_from_parents(parent, root), reference_bfs_levels(generator.num_vertices(), edges, root));
    const ValidationReport report = validate_bfs_tree(packed, root, parent);
    ASSERT_TRUE(report.ok()) << report.messages.front();
  }
  EXPECT_GT(device.traffic().to_device, 0U);
  EXPECT_EQ(device.device_name(), "host");
  const auto [framed, raw] = device.lists_framed_and_raw();
  if (transfer == cuda_backend::IdTransfer::kRaw) {
    EXPECT_EQ(framed, 0U);
  }
  if (transfer == cuda_backend::IdTransfer::kFrames) {
    EXPECT_EQ(raw, 0U);
  }
  if (transfer == cuda_backend::IdTransfer::kPriced) {
    EXPECT_GT(device.pcie_costs().copy_bytes_per_s, 0.0);
    EXPECT_GT(framed + raw, 0U);
  }
}

class DeviceDistributedBfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_backend_built()) GTEST_SKIP() << "built without CUDA";
  }
};

TEST_F(DeviceDistributedBfsTest, MatchesTheCpuBackendOnEveryLayout) {
  for (const Layout& layout : testing::all_layouts(world_size())) {
    check_device_searches(layout, 9, 16, 1, Direction::kAuto, CodecId::kNone);
  }
}

TEST_F(DeviceDistributedBfsTest, FixedDirectionsAndASparseGraph) {
  const int p = world_size();
  for (const Layout& layout : {Layout{Partition::k1D, {1, p}}, Layout{Partition::k2D, most_square_grid(p)},
                               Layout{Partition::kHybrid, *hybrid_grid(p, p % 2 == 0 ? 2 : 1)}}) {
    for (const Direction direction : {Direction::kTopDown, Direction::kBottomUp}) {
      check_device_searches(layout, 8, 8, 3, direction, CodecId::kNone);
    }
    check_device_searches(layout, 10, 2, 5, Direction::kAuto, CodecId::kNone);
  }
}

TEST_F(DeviceDistributedBfsTest, CompressedExchanges) {
  const int p = world_size();
  for (const CodecId codec : {CodecId::kBitpack, CodecId::kBitmap}) {
    check_device_searches({Partition::k2D, most_square_grid(p)}, 9, 16, 2, Direction::kAuto, codec);
  }
}

// Routes carry the predecessor reduction (the exchanger's read over the processor row):
// relayed, merged on the way or not, the same trees.
TEST_F(DeviceDistributedBfsTest, RoutedExchanges) {
  const int p = world_size();
  for (const RouteChoice& route :
       {RouteChoice{RouteKind::kGrid2, {}, true}, RouteChoice{RouteKind::kHypercube, {}, false},
        RouteChoice{RouteKind::kSparse, {}, true}}) {
    for (const Layout& layout : {Layout{Partition::k1D, {1, p}}, Layout{Partition::k2D, most_square_grid(p)}}) {
      check_device_searches(layout, 9, 16, 4, Direction::kAuto, CodecId::kBitpack, route);
    }
  }
}

// The device wire carries the same searches: every layout, ids as words and as frames,
// both directions forced, and a sparse graph.
TEST_F(DeviceDistributedBfsTest, DeviceWireCarriesTheSameSearches) {
  const int p = world_size();
  for (const Layout& layout : testing::all_layouts(p)) {
    for (const CodecId codec : {CodecId::kNone, CodecId::kBitpack}) {
      check_device_searches(layout, 9, 16, 6, Direction::kAuto, codec, std::nullopt, DeviceExchange::kCudaAware);
    }
  }
  for (const Layout& layout : {Layout{Partition::k1D, {1, p}}, Layout{Partition::k2D, most_square_grid(p)}}) {
    for (const Direction direction : {Direction::kTopDown, Direction::kBottomUp}) {
      check_device_searches(layout, 8, 8, 3, direction, CodecId::kBitpack, std::nullopt, DeviceExchange::kCudaAware);
    }
    check_device_searches(layout, 10, 2, 5, Direction::kAuto, CodecId::kNone, RouteChoice{RouteKind::kGrid2, {}, true},
                          DeviceExchange::kCudaAware);
  }
}

// Pruned searches (--prune) of `edges` over 2^vertex_bits vertices from `roots`, in turn:
// the CPU backend's steps (the attach step's attached count among them) and depth, the
// sequential levels, and the validator's approval (the parents chosen may differ).
void check_pruned_searches(const Layout& layout, int vertex_bits, const std::vector<Edge>& edges,
                           const std::vector<std::uint64_t>& roots, int rounds,
                           DeviceExchange exchange = DeviceExchange::kStaged) {
  SCOPED_TRACE(std::string(to_string(layout.partition)) + " grid " + layout.shape.to_string() + " rounds " +
               std::to_string(rounds) + " exchange " + std::string(to_string(exchange)));
  PhaseMetrics metrics;
  const std::uint64_t n = std::uint64_t{1} << vertex_bits;
  const ProcessGrid grid(layout.partition, layout.shape, n, &metrics);
  const EdgeSliceRange range = edge_slice_of(edges.size(), grid.rank(), grid.size());
  const PackedEdgeList slice = testing::pack(
      vertex_bits, std::vector<Edge>(edges.begin() + static_cast<std::ptrdiff_t>(range.first),
                                     edges.begin() + static_cast<std::ptrdiff_t>(range.first + range.count)));
  const DistributedGraph<std::uint32_t> graph(grid, slice);
  DirectExchanger exchanger(ColumnGather::kAllgatherv);
  const DistributedForest<std::uint32_t> forest(grid, graph, exchanger, rounds);
  DistributedBfs<std::uint32_t> cpu(grid, graph, exchanger, metrics, &forest);
  DeviceDistributedBfs device(Backend::kCudaHost, 0, grid, graph, exchanger, metrics, false,
                              cuda_backend::IdTransfer::kRaw, exchange, &forest);
  const PackedEdgeList packed = testing::pack(vertex_bits, edges);
  std::vector<std::int64_t> cpu_owned(grid.blocks().block());
  std::vector<std::int64_t> owned(grid.blocks().block(), 7);
  for (const std::uint64_t root : roots) {
    SCOPED_TRACE("root " + std::to_string(root));
    const BfsStats want = cpu.run(root, cpu_owned, BfsOptions{});
    const BfsStats got = device.run(root, BfsOptions{});
    device.copy_parents(owned);
    EXPECT_EQ(testing::step_list(got), testing::step_list(want));
    EXPECT_EQ(got.depth, want.depth);
    const std::vector<std::int64_t> parent = testing::gather_parents(grid, owned);
    ASSERT_EQ(levels_from_parents(parent, root), reference_bfs_levels(n, edges, root));
    const ValidationReport report = validate_bfs_tree(packed, root, parent);
    ASSERT_TRUE(report.ok()) << report.messages.front();
  }
}

// --prune on the device: Kronecker graphs (a dense one, and a sparse one with many trees,
// peeled fully or in one round) from keys in the core and in the trees, and hand-drawn
// trees whose keys walk chains to the core, reuse the anchors the last search reached or
// gather them anew, and start in tree components; over the staged exchange, and over a
// device wire (cuda-aware: the steps' messages stay in target memory, the bottom-up
// gathers masked by the core's sources).
TEST_F(DeviceDistributedBfsTest, PrunedSearchesMatchTheCpuBackend) {
  const int p = world_size();
  const std::vector<Edge> dense = testing::kronecker_edges(9, 16, 1);
  const std::vector<Edge> sparse = testing::kronecker_edges(10, 2, 5);
  const auto keys = [](const std::vector<Edge>& edges) {
    std::vector<std::uint64_t> roots;
    for (std::size_t i = 0; i < edges.size() && roots.size() < 6; i += 97) {
      if (edges[i].u != edges[i].v) roots.push_back(edges[i].v);
    }
    return roots;
  };
  std::vector<Edge> drawn{{0, 1},   {1, 2},   {2, 3},   {3, 4},   {4, 0},   {0, 10},  {10, 11}, {11, 12}, {11, 13},
                          {2, 14},  {2, 15},  {15, 16}, {3, 17},  {20, 21}, {20, 22}, {20, 23}, {23, 24}, {24, 25},
                          {30, 31}, {50, 51}, {51, 52}, {52, 50}, {50, 53}, {53, 54}, {54, 55}, {55, 56}, {51, 57}};
  for (std::uint64_t v = 100; v + 1 < 400; ++v) drawn.push_back({v, v + 1});
  for (const Layout& layout : testing::all_layouts(p)) {
    check_pruned_searches(layout, 9, dense, keys(dense), DistributedForest<std::uint32_t>::kMaxRounds);
    check_pruned_searches(layout, 10, sparse, keys(sparse), DistributedForest<std::uint32_t>::kMaxRounds);
    check_pruned_searches(layout, 10, sparse, keys(sparse), 1);
    check_pruned_searches(layout, 9, drawn, {56, 54, 0, 12, 53, 57, 16, 17, 25, 31, 30, 100, 250, 399, 40}, 64);
    check_pruned_searches(layout, 10, sparse, keys(sparse), 1, DeviceExchange::kCudaAware);
    check_pruned_searches(layout, 9, drawn, {56, 54, 0, 12, 53, 57, 16, 17, 25, 31, 30, 100, 250, 399, 40}, 64,
                          DeviceExchange::kCudaAware);
  }
}

// Kernel 1's lists built on the target (the device backends' list builder) are the CPU's,
// byte for byte, forward and transposed, on every layout; the copies are counted.
TEST_F(DeviceDistributedBfsTest, ListsBuiltOnTheTargetAreTheCpuLists) {
  for (const Layout& layout : testing::all_layouts(world_size())) {
    SCOPED_TRACE(std::string(to_string(layout.partition)) + " grid " + layout.shape.to_string());
    PhaseMetrics metrics;
    const KroneckerGenerator generator(KroneckerParams{10, 16, 7});
    const ProcessGrid grid(layout.partition, layout.shape, generator.num_vertices(), &metrics);
    const PackedEdgeList slice = testing::my_slice(generator, grid);
    const DistributedGraph<std::uint32_t> cpu(grid, slice);
    DeviceKernel1Report report;
    const DistributedGraph<std::uint32_t> device(grid, slice, false, std::uint64_t{1} << 20, std::nullopt, std::nullopt,
                                                 local_list_builder_on_target(Backend::kCudaHost, 0, false, report));
    const HostDeviceTraffic& copies = report.copies;
    for (const bool transposed : {false, true}) {
      const TraversalLayout traversal = transposed ? grid.bottom_up() : grid.top_down();
      const LocalCsr<std::uint32_t>& want = cpu.for_layout(traversal);
      const LocalCsr<std::uint32_t>& got = device.for_layout(traversal);
      ASSERT_EQ(got.num_rows(), want.num_rows());
      ASSERT_EQ(got.num_entries(), want.num_entries());
      EXPECT_TRUE(std::equal(got.offsets(), got.offsets() + got.num_rows() + 1, want.offsets()));
      EXPECT_TRUE(std::equal(got.neighbor_data(), got.neighbor_data() + got.num_entries(), want.neighbor_data()));
    }
    EXPECT_TRUE(std::equal(device.owned_degree().begin(), device.owned_degree().end(), cpu.owned_degree().begin()));
    EXPECT_EQ(device.global_directed_edges(), cpu.global_directed_edges());
    EXPECT_GT(copies.to_device, 0U);
    EXPECT_GE(copies.to_host, cpu.forward().num_entries() * 4);
  }
}

}  // namespace
}  // namespace zbfs
