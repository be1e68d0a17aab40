// The device backend's BFS through its host launcher (--backend cuda-host): the same
// kernel bodies a GPU runs, on OpenMP threads. Each search must take the CPU kernel's
// steps exactly (direction, frontier, discovered: the same DirectionPolicy on the same
// counts), whether the host or the device drives its levels (--level-loop), give the
// sequential reference BFS's levels, and pass the Graph500 validator.
// On a build without CUDA the backends must refuse with a usage error instead.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "direction_and_threads.hpp"
#include "step_list.hpp"
#include "test_graphs.hpp"
#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/cuda/pcie_pricing.hpp"
#include "zbfs/backend/device_search.hpp"
#include "zbfs/bfs/direction_optimizing_bfs.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/graph/csr_builder.hpp"
#include "zbfs/graph/hub_neighbors.hpp"
#include "zbfs/graph/peeled_forest.hpp"
#include "zbfs/validate/reference_bfs.hpp"
#include "zbfs/validate/traversed_edges.hpp"
#include "zbfs/validate/validator.hpp"

namespace zbfs {
namespace {

// The device backends to test: the host launcher always, the GPU too where one is
// visible (scripts/gpu-check), so the same cases check both.
std::vector<Backend> device_backends() {
  std::vector<Backend> backends{Backend::kCudaHost};
  if (cuda_device_visible()) backends.push_back(Backend::kCuda);
  return backends;
}

// `prune`: both search with the graph's peeled forest (--prune): the core, then the trees
// attached, the same steps, attached vertices and depth on the device as on the CPU.
void expect_device_matches_cpu(int vertex_bits, const std::vector<Edge>& edges, const std::vector<std::uint64_t>& roots,
                               const BfsOptions& options, bool prune = false) {
  const PackedEdgeList packed = testing::pack(vertex_bits, edges);
  for (const auto& [order, backend, loop] : [] {
         std::vector<std::tuple<CsrOrder, Backend, LevelLoop>> cases;
         for (const CsrOrder order : {CsrOrder::kInput, CsrOrder::kDegree}) {
           for (const Backend backend : device_backends()) {
             for (const LevelLoop loop : {LevelLoop::kHost, LevelLoop::kDevice, LevelLoop::kGraph}) {
               cases.emplace_back(order, backend, loop);
             }
           }
         }
         return cases;
       }()) {
    SCOPED_TRACE(std::string(order == CsrOrder::kDegree ? "degree order, " : "input order, ") +
                 std::string(to_string(backend)) + ", levels driven by the " + std::string(to_string(loop)));
    const Csr<std::uint32_t> graph = build_csr<std::uint32_t>(packed, order);
    const PeeledForest<std::uint32_t> forest(graph.offsets(), graph.neighbor_data(), graph.num_vertices());
    DirectionOptimizingBfs<std::uint32_t> cpu(graph, prune ? &forest : nullptr);
    DeviceSearch device(backend, graph, false, prune ? &forest : nullptr, nullptr, loop);
    EXPECT_EQ(device.device_name() == "host", backend == Backend::kCudaHost);
    // The hubs the target found are the host's (a pruned search's: core neighbours).
    const std::uint64_t* off = graph.offsets();
    const LargeArray<std::uint32_t> want_hubs = hub_neighbors<std::uint32_t>(
        off, graph.neighbor_data(), graph.num_vertices(),
        [&](std::uint32_t w) -> std::uint64_t { return prune && forest.peeled(w) ? 0 : off[w + 1] - off[w]; },
        std::uint32_t{0});
    std::vector<std::uint32_t> hubs(graph.num_vertices(), 7);
    device.copy_hubs(hubs);
    EXPECT_TRUE(std::equal(hubs.begin(), hubs.end(), want_hubs.data()));
    std::vector<std::int64_t> cpu_parent(graph.num_vertices());
    std::vector<std::int64_t> parent(graph.num_vertices(), 7);
    for (const std::uint64_t root : roots) {
      SCOPED_TRACE("root " + std::to_string(root));
      const BfsStats want = cpu.run(root, cpu_parent, options);
      const BfsStats got = device.run(root, options);
      device.copy_parents(parent);
      EXPECT_EQ(testing::step_list(got), testing::step_list(want));
      EXPECT_EQ(got.levels(), want.levels());
      ASSERT_EQ(levels_from_parents(parent, root), reference_bfs_levels(graph.num_vertices(), edges, root));
      const ValidationReport report = validate_bfs_tree(packed, root, parent);
      ASSERT_TRUE(report.ok()) << report.messages.front();
      EXPECT_EQ(report.traversed_edges, count_traversed_edges(graph, parent));
    }
    // Every search uploads nothing more than its start: the graph went over once.
    EXPECT_GT(device.traffic().to_device, graph.num_directed_edges() * sizeof(std::uint32_t));
    EXPECT_GE(device.traffic().to_host, roots.size() * graph.num_vertices() * sizeof(std::int64_t));
  }
}

class DeviceBfsVariants : public testing::DirectionAndThreads {
 protected:
  void SetUp() override {
    if (!cuda_backend_built()) GTEST_SKIP() << "built without CUDA";
    DirectionAndThreads::SetUp();
  }
};

TEST_P(DeviceBfsVariants, DrawnGraph) {
  expect_device_matches_cpu(testing::kDrawnGraphBits, testing::drawn_graph(), {0, 3, 5, 6, 8, 9}, options_);
}

TEST_P(DeviceBfsVariants, PathLongerThanAWord) {
  std::vector<Edge> path;
  for (std::uint64_t v = 0; v + 1 < 200; ++v) path.push_back({v, v + 1});
  expect_device_matches_cpu(8, path, {0, 99, 199}, options_);
}

TEST_P(DeviceBfsVariants, StarAndHub) {
  std::vector<Edge> star;
  for (std::uint64_t v = 1; v < 300; ++v) star.push_back({0, v});
  star.push_back({5, 6});
  expect_device_matches_cpu(9, star, {0, 5, 299}, options_);
}

TEST_P(DeviceBfsVariants, KroneckerGraph) {
  const std::vector<Edge> edges = testing::kronecker_edges(12, 16, 2);
  expect_device_matches_cpu(12, edges, {edges[0].u, edges[1].v, edges[7].u, edges[100].v}, options_);
}

// --prune on the device: roots in the core, peeled roots deep in their trees (the chain
// to the core walked first), and roots in tree components (searched whole).
TEST_P(DeviceBfsVariants, PrunedSearchesMatchTheCpuKernel) {
  // A core triangle with trees on it: a path 3-4-5-6 off vertex 0, a star 7-{8,9,10} off
  // vertex 1, and a tree component 11-12-13 with no core.
  const std::vector<Edge> drawn = {{0, 1}, {1, 2}, {2, 0}, {0, 3},  {3, 4},   {4, 5},  {5, 6},
                                   {1, 7}, {7, 8}, {7, 9}, {7, 10}, {11, 12}, {12, 13}};
  expect_device_matches_cpu(4, drawn, {0, 2, 6, 4, 9, 7, 12, 13, 11}, options_, true);
  const std::vector<Edge> edges = testing::kronecker_edges(12, 16, 3);
  std::vector<std::uint64_t> roots = {edges[0].u, edges[1].v, edges[7].u, edges[100].v};
  // Vertices of degree one: peeled roots.
  std::vector<std::uint64_t> degree(std::uint64_t{1} << 12, 0);
  for (const Edge& e : edges) {
    if (e.u == e.v) continue;
    ++degree[e.u];
    ++degree[e.v];
  }
  for (std::uint64_t v = 0; v < degree.size() && roots.size() < 10; ++v) {
    if (degree[v] == 1) roots.push_back(v);
  }
  expect_device_matches_cpu(12, edges, roots, options_, true);
}

INSTANTIATE_TEST_SUITE_P(DirectionsAndThreads, DeviceBfsVariants,
                         ::testing::Combine(::testing::Values(Direction::kAuto, Direction::kTopDown,
                                                              Direction::kBottomUp),
                                            ::testing::Values(1, 3)));

// Alpha and beta at their extremes: the switch goes both ways many times, in step with the CPU.
TEST(DeviceBfs, SwitchesInStepWithTheCpuKernel) {
  if (!cuda_backend_built()) GTEST_SKIP() << "built without CUDA";
  const std::vector<Edge> edges = testing::kronecker_edges(13, 16, 6);
  for (const auto& [alpha, beta] :
       {std::pair{15.0, 18.0}, std::pair{1e-3, 1e-3}, std::pair{1e6, 1e6}, std::pair{2.0, 1e4}}) {
    expect_device_matches_cpu(13, edges, {edges[3].u, edges[9].v}, BfsOptions{Direction::kAuto, alpha, beta});
  }
}

// The device memory check: refused with a usage error (exit 2) unless it fits or --force.
TEST(DeviceBfs, DeviceMemoryIsCheckedBeforeAllocating) {
  EXPECT_NO_THROW(require_device_memory(100, 100, 200, false));
  EXPECT_NO_THROW(require_device_memory(300, 100, 200, true));
  try {
    require_device_memory(std::uint64_t{81} << 30, std::uint64_t{79} << 30, std::uint64_t{80} << 30, false);
    ADD_FAILURE() << "81 GiB fitted in 79 GiB";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("device memory"), std::string::npos) << e.what();
  }
  // The estimate grows with the graph: scale 26 (edgefactor 16) takes about 10 GiB.
  const std::uint64_t n = std::uint64_t{1} << 26;
  const std::uint64_t bytes = cuda_backend::DeviceBfs::memory_bytes(n, 32 * n);
  EXPECT_GT(bytes, std::uint64_t{9} << 30);
  EXPECT_LT(bytes, std::uint64_t{12} << 30);
}

// --codec auto on a device backend: a list crosses PCIe as a frame only where the
// calibration prices it lower than 8 bytes an id.
TEST(DeviceBfs, IdListsCrossAsFramesWhereThatIsCheaper) {
  using cuda_backend::PcieCosts;
  // A PCIe-like link (10 us, 25 GB/s) and a fast device codec (50 G ids/s, 50 us a frame).
  const PcieCosts pcie{10e-6, 25e9, 50e-6, 0.02e-9};
  EXPECT_FALSE(frames_pay(pcie, 100, 1000));              // a few ids: the frame's latency dominates
  EXPECT_TRUE(frames_pay(pcie, 10'000'000, 40'000'000));  // a dense frontier: 16x fewer bytes
  // The same codec at 1 G ids/s costs more per id than the link saves (0.3 ns an id).
  EXPECT_FALSE(frames_pay(PcieCosts{10e-6, 25e9, 50e-6, 1e-9}, 10'000'000, 40'000'000));
  // Host memory (memcpy at 10 GB/s, no latency) and a slow codec: never.
  const PcieCosts host{0, 10e9, 20e-6, 5e-9};
  EXPECT_FALSE(frames_pay(host, 10'000'000, 40'000'000));
  EXPECT_FALSE(frames_pay(PcieCosts{}, 10'000'000, 40'000'000));  // uncalibrated
  // The estimate: about the gaps' width per id.
  EXPECT_NEAR(static_cast<double>(cuda_backend::estimated_frame_bytes(1 << 20, 8 << 20)), (1 << 20) * 5 / 8.0,
              (1 << 20) * 0.05);
  EXPECT_EQ(cuda_backend::to_string(cuda_backend::IdTransfer::kPriced), "priced");
}

// Rank r of a node takes device r % gpus: how many ranks share each device.
TEST(DeviceBfs, RanksSharingADevice) {
  EXPECT_EQ(ranks_sharing_device(4, 0, 1), 4);
  EXPECT_EQ(ranks_sharing_device(4, 1, 2), 2);
  EXPECT_EQ(ranks_sharing_device(3, 0, 2), 2);
  EXPECT_EQ(ranks_sharing_device(3, 1, 2), 1);
  EXPECT_EQ(ranks_sharing_device(1, 0, 8), 1);
}

TEST(DeviceBfs, CudaBackendsRefuseWhereTheyCannotRun) {
  EXPECT_NO_THROW(require_backend(Backend::kCpu));
  EXPECT_EQ(parse_backend("cuda-host"), Backend::kCudaHost);
  EXPECT_EQ(to_string(Backend::kCuda), "cuda");
  EXPECT_FALSE(parse_backend("gpu"));
  if (!cuda_backend_built()) {
    for (const Backend backend : {Backend::kCuda, Backend::kCudaHost}) {
      try {
        require_backend(backend);
        ADD_FAILURE() << "a build without CUDA accepted --backend " << to_string(backend);
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ExitCode::kUsage);
      }
    }
    return;
  }
  EXPECT_NO_THROW(require_backend(Backend::kCudaHost));
}

}  // namespace
}  // namespace zbfs
