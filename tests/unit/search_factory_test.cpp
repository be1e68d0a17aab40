// SearchFactory: every backend's one-process search behind BfsSearch gives the reference
// BFS's levels, a device's record tells its copies, a CPU search clears its tree, SSSP
// through the factory is DeltaStepping's, and what a backend cannot run is refused with
// a usage error (exit status 2).
#include "zbfs/backend/search_factory.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "test_graphs.hpp"
#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/search.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/generator/edge_weights.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/graph/compressed_csr_builder.hpp"
#include "zbfs/graph/csr_builder.hpp"
#include "zbfs/graph/list_weights.hpp"
#include "zbfs/graph/peeled_forest.hpp"
#include "zbfs/sssp/delta_stepping.hpp"
#include "zbfs/validate/reference_bfs.hpp"

namespace zbfs {
namespace {

std::vector<Backend> built_backends() {
  std::vector<Backend> backends{Backend::kCpu};
  if (cuda_backend_built()) backends.push_back(Backend::kCudaHost);
  return backends;
}

// A usage error (exit status 2) from `make`.
template <class Make>
void expect_usage_error(const Make& make, const std::string& what) {
  try {
    make();
    ADD_FAILURE() << "accepted: " << what;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage) << what;
  }
}

TEST(SearchFactory, EveryBackendsSearchGivesTheReferenceLevels) {
  const std::vector<Edge> edges = testing::kronecker_edges(11, 16, 3);
  const PackedEdgeList packed = testing::pack(11, edges);
  const Csr<std::uint32_t> graph = build_csr<std::uint32_t>(packed, CsrOrder::kDegree);
  const std::uint64_t n = graph.num_vertices();
  for (const Backend backend : built_backends()) {
    SCOPED_TRACE(std::string(to_string(backend)));
    SearchFactory factory;
    factory.backend = backend;
    const std::unique_ptr<BfsSearch> search = factory.bfs(graph, nullptr);
    const HostDeviceTraffic set_up = search->traffic();
    for (const std::uint64_t root : {edges[0].u, edges[5].v, edges[99].u}) {
      search->run(root, BfsOptions{});
      const std::span<const std::int64_t> parent = search->parents();
      ASSERT_EQ(parent.size(), n);
      EXPECT_EQ(levels_from_parents(parent, root), reference_bfs_levels(n, edges, root));
      search->clear();
    }
    const std::optional<DeviceRecord> record = search->device_record();
    if (backend == Backend::kCpu) {
      EXPECT_FALSE(record);
      EXPECT_EQ(search->traffic().to_host, 0U);
      // A cleared CPU tree is every entry -1 again.
      for (const std::int64_t p : search->parents()) ASSERT_EQ(p, -1);
    } else {
      ASSERT_TRUE(record);
      EXPECT_EQ(record->name, "host");
      EXPECT_GT(record->construction.to_device, graph.num_directed_edges() * sizeof(std::uint32_t));
      EXPECT_EQ(record->construction.to_device, set_up.to_device);
      // Three trees came back to host memory.
      EXPECT_GE(record->searches.to_host, 3 * n * sizeof(std::int64_t));
    }
  }
}

TEST(SearchFactory, PrunedAndCompressedCpuSearchesGiveTheSameLevels) {
  const std::vector<Edge> edges = testing::kronecker_edges(10, 8, 5);
  const PackedEdgeList packed = testing::pack(10, edges);
  const Csr<std::uint32_t> plain = build_csr<std::uint32_t>(packed, CsrOrder::kDegree);
  const CompressedCsr<std::uint32_t> packed_lists = build_compressed_csr<std::uint32_t>(packed, CsrOrder::kDegree);
  const PeeledForest<std::uint32_t> forest(plain.offsets(), plain.neighbor_data(), plain.num_vertices());
  const SearchFactory factory;
  const std::unique_ptr<BfsSearch> pruned = factory.bfs(plain, &forest);
  const std::unique_ptr<BfsSearch> compressed = factory.bfs(packed_lists);
  for (const std::uint64_t root : {edges[1].u, edges[20].v}) {
    const std::vector<std::int64_t> want = reference_bfs_levels(plain.num_vertices(), edges, root);
    pruned->run(root, BfsOptions{});
    compressed->run(root, BfsOptions{});
    EXPECT_EQ(levels_from_parents(pruned->parents(), root), want);
    EXPECT_EQ(levels_from_parents(compressed->parents(), root), want);
    pruned->clear();
    compressed->clear();
  }
}

TEST(SearchFactory, SsspIsDeltaSteppingsOnTheCpuAndRefusedOnADevice) {
  GraphSpec spec;
  spec.scale = 10;
  spec.seed = 4;
  const PackedEdgeList list = generate_graph_slice(spec, 0, 1);
  const LargeArray<float> tuple_weights = generate_weight_slice(spec, 0, 1, list);
  InputEdges in(list, std::uint64_t{1} << 10);
  in.attach_weights(tuple_weights.data());
  const Csr<std::uint32_t> graph = build_csr<std::uint32_t>(in, CsrOrder::kDegree);
  const LargeArray<float> weights = build_list_weights(graph, in);
  const std::uint64_t n = graph.num_vertices();
  SearchFactory factory;
  factory.delta = 0.05;
  const std::unique_ptr<SsspSearch> search = factory.sssp(graph, build_list_weights(graph, in));
  DeltaStepping direct(graph, weights.span(), 0.05);
  std::vector<std::int64_t> parent(n), want_parent(n);
  std::vector<float> distance(n), want_distance(n);
  const std::uint64_t root = list.get(0).u;
  EXPECT_EQ(search->run(root, parent, distance).delta, 0.05);
  direct.run(root, want_parent, want_distance);
  EXPECT_EQ(distance, want_distance);
  factory.backend = Backend::kCudaHost;
  expect_usage_error([&] { (void)factory.sssp(graph, build_list_weights(graph, in)); }, "SSSP on a device");
}

TEST(SearchFactory, RefusesWhatADeviceCannotSearch) {
  const std::vector<Edge> edges = testing::kronecker_edges(8, 8, 1);
  const PackedEdgeList packed = testing::pack(8, edges);
  const Csr<std::uint32_t> plain = build_csr<std::uint32_t>(packed, CsrOrder::kDegree);
  const Csr<std::uint64_t> wide = build_csr<std::uint64_t>(packed, CsrOrder::kDegree);
  const CompressedCsr<std::uint32_t> compressed = build_compressed_csr<std::uint32_t>(packed, CsrOrder::kDegree);
  const PeeledForest<std::uint32_t> forest(plain.offsets(), plain.neighbor_data(), plain.num_vertices());
  for (const Backend backend : {Backend::kCuda, Backend::kCudaHost}) {
    SCOPED_TRACE(std::string(to_string(backend)));
    SearchFactory factory;
    factory.backend = backend;
    expect_usage_error([&] { (void)factory.bfs(wide, nullptr); }, "64-bit ids on a device");
    expect_usage_error([&] { (void)factory.bfs(compressed); }, "compressed lists on a device");
  }
  // A pruned device search is built (DeviceBfsVariants.PrunedSearchesMatchTheCpuKernel
  // checks its searches).
  if (cuda_backend_built()) {
    SearchFactory host;
    host.backend = Backend::kCudaHost;
    EXPECT_NE(host.bfs(plain, &forest), nullptr);
  }
}

}  // namespace
}  // namespace zbfs
