// Kernel 1 on the device backend's target (cuda/device_kernel1.hpp), through its host
// launcher, and on a GPU where one is visible: the lists, the tuple degrees and the degree
// order's tables must be the CPU build's (build_csr, CsrOrder::kDegree) byte for byte,
// whatever the passes, chunks, threads and way of holding the tuples.
#include "zbfs/backend/cuda/device_kernel1.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "step_list.hpp"
#include "test_graphs.hpp"
#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/device_csr_builder.hpp"
#include "zbfs/backend/device_search.hpp"
#include "zbfs/bfs/direction_optimizing_bfs.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/input_edges.hpp"
#include "zbfs/graph/csr_builder.hpp"
#include "zbfs/graph/local_csr.hpp"
#include "zbfs/validate/validator.hpp"

namespace zbfs {
namespace {

using cuda_backend::Kernel1Plan;

std::vector<ExecutionTarget> targets() {
  std::vector<ExecutionTarget> all{ExecutionTarget::kHost};
  if (cuda_device_visible()) all.push_back(ExecutionTarget::kDevice);
  return all;
}

template <class T>
bool same_bytes(const T* a, const T* b, std::uint64_t count) {
  return count == 0 || std::memcmp(a, b, count * sizeof(T)) == 0;
}

void expect_cpu_lists(const InputEdges& edges, const Kernel1Plan& plan, ExecutionTarget target) {
  const Csr<std::uint32_t> want = build_csr<std::uint32_t>(edges, CsrOrder::kDegree);
  const cuda_backend::Kernel1Lists got = cuda_backend::build_lists(target, edges, plan);
  const std::uint64_t n = want.num_vertices();
  ASSERT_EQ(got.num_vertices, n);
  ASSERT_EQ(got.offsets.size(), n + 1);
  EXPECT_TRUE(same_bytes(got.offsets.data(), want.offsets(), n + 1));
  ASSERT_EQ(got.neighbors.size(), want.num_directed_edges());
  EXPECT_TRUE(same_bytes(got.neighbors.data(), want.neighbor_data(), want.num_directed_edges()));
  ASSERT_EQ(got.tuple_degree.size(), n);
  ASSERT_EQ(got.sorted_of.size(), n);
  ASSERT_EQ(got.original_of.size(), n);
  for (std::uint64_t v = 0; v < n; ++v) {
    ASSERT_EQ(got.tuple_degree[v], want.input_tuple_degree(v)) << "vertex " << v;
    ASSERT_EQ(got.sorted_of[v], want.internal_id(v)) << "vertex " << v;
    ASSERT_EQ(got.original_of[v], want.original_id(v)) << "vertex " << v;
  }
  EXPECT_GE(got.traffic.to_device, edges.size() * 8);
  EXPECT_GE(got.traffic.to_host, want.num_directed_edges() * 4 + (n + 1) * 8);
  if (plan.tuples != Kernel1Plan::Tuples::kAuto) {
    EXPECT_EQ(got.tuples_resident, plan.tuples == Kernel1Plan::Tuples::kResident);
  }
}

struct PlanCase {
  std::string name;
  Kernel1Plan plan;
  int threads;
};

// `row_a_pass`: also passes of one row each (every pass reads all tuples: small graphs).
std::vector<PlanCase> plan_cases(bool row_a_pass) {
  std::vector<PlanCase> cases;
  for (const int threads : {1, 3}) {
    for (const auto tuples : {Kernel1Plan::Tuples::kStreamed, Kernel1Plan::Tuples::kResident}) {
      const std::string held = tuples == Kernel1Plan::Tuples::kResident ? "resident" : "streamed";
      const std::string t = std::to_string(threads) + " threads";
      cases.push_back({"one pass, " + held + ", " + t, Kernel1Plan{0, tuples, 0, false}, threads});
      cases.push_back({"passes of 97 entries, chunks of 1000 tuples, " + held + ", " + t,
                       Kernel1Plan{97, tuples, 1000, false}, threads});
      if (row_a_pass) {
        cases.push_back(
            {"a row a pass, chunks of 77 tuples, " + held + ", " + t, Kernel1Plan{1, tuples, 77, false}, threads});
      }
    }
  }
  return cases;
}

class DeviceKernel1 : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_backend_built()) GTEST_SKIP() << "built without CUDA";
    threads_ = omp_get_max_threads();
  }
  void TearDown() override { omp_set_num_threads(threads_); }

  void expect_every_plan(const InputEdges& edges, bool row_a_pass = true) {
    for (const ExecutionTarget target : targets()) {
      for (const PlanCase& c : plan_cases(row_a_pass)) {
        SCOPED_TRACE(c.name + " on the " + std::string(to_string(target)));
        omp_set_num_threads(c.threads);
        expect_cpu_lists(edges, c.plan, target);
      }
    }
  }

 private:
  int threads_ = 1;
};

TEST_F(DeviceKernel1, KroneckerGraphGetsTheCpuLists) {
  // Scale 10: self-loops, duplicate tuples and edgeless vertices, hubs far above a pass.
  const PackedEdgeList list = testing::pack(10, testing::kronecker_edges(10, 16, 5));
  expect_every_plan(InputEdges(list), false);
}

TEST_F(DeviceKernel1, DrawnGraphWithEdgelessVerticesPastItsIds) {
  const PackedEdgeList list = testing::pack(testing::kDrawnGraphBits, testing::drawn_graph());
  expect_every_plan(InputEdges(list));
  // Fewer vertices than the packing's width holds: 12, the last two without edges.
  expect_every_plan(InputEdges(list, 12));
}

TEST_F(DeviceKernel1, ProducedTuplesAndDegenerateLists) {
  const std::vector<Edge> star = [] {
    std::vector<Edge> edges;
    for (std::uint64_t v = 1; v < 300; ++v) edges.push_back({0, v});
    edges.push_back({5, 5});
    edges.push_back({0, 7});
    return edges;
  }();
  const InputEdges produced(300, star.size(), [&star](std::uint64_t first, std::span<Edge> out) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = star[first + i];
  });
  expect_every_plan(produced);
  const std::vector<Edge> loops{{3, 3}, {1, 1}};
  const PackedEdgeList only_loops = testing::pack(3, loops);
  expect_every_plan(InputEdges(only_loops));
  const PackedEdgeList empty(3, 0);
  expect_every_plan(InputEdges(empty));
}

TEST_F(DeviceKernel1, TupleOutsideTheGraphIsRefusedAsOnTheCpu) {
  const PackedEdgeList list = testing::pack(4, {{0, 1}, {2, 13}, {14, 14}});
  const InputEdges edges(list, 12);
  std::string cpu_error;
  try {
    (void)build_csr<std::uint32_t>(edges, CsrOrder::kDegree);
  } catch (const Error& e) {
    cpu_error = e.what();
  }
  ASSERT_FALSE(cpu_error.empty());
  for (const ExecutionTarget target : targets()) {
    try {
      (void)cuda_backend::build_lists(target, edges);
      ADD_FAILURE() << "an id outside the graph was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), cpu_error);
      EXPECT_EQ(e.code(), ExitCode::kFailure);
    }
  }
}

TEST_F(DeviceKernel1, CsrOnTheTargetIsTheCpuCsr) {
  const PackedEdgeList list = testing::pack(9, testing::kronecker_edges(9, 8, 11));
  const Csr<std::uint32_t> want = build_csr<std::uint32_t>(list, CsrOrder::kDegree);
  DeviceKernel1Report report;
  const Csr<std::uint32_t> got = build_csr_on_target(Backend::kCudaHost, list, false, report);
  const HostDeviceTraffic& copies = report.copies;
  EXPECT_EQ(report.resident, nullptr);  // not asked to keep them
  EXPECT_GT(report.stages.send_s + report.stages.order_s + report.stages.lists_s + report.stages.fetch_s, 0.0);
  ASSERT_EQ(got.num_vertices(), want.num_vertices());
  EXPECT_TRUE(got.reordered());
  EXPECT_EQ(got.adjacency_bytes(), want.adjacency_bytes());
  EXPECT_EQ(got.table_bytes(), want.table_bytes());
  for (std::uint64_t v = 0; v < want.num_vertices(); ++v) {
    ASSERT_EQ(std::vector<std::uint32_t>(got.neighbors(v).begin(), got.neighbors(v).end()),
              std::vector<std::uint32_t>(want.neighbors(v).begin(), want.neighbors(v).end()));
    ASSERT_EQ(got.original_id(v), want.original_id(v));
    ASSERT_EQ(got.input_tuple_degree(v), want.input_tuple_degree(v));
  }
  // Streamed on the host target: sent for the degrees and for the one pass; and the last
  // row's end.
  EXPECT_EQ(copies.to_device, 2 * list.size() * 8 + 8);
  EXPECT_GT(copies.to_host, want.adjacency_bytes());
}

// The one-process search takes kernel 1's lists over where they were built: nothing of
// them is uploaded again, and its searches are the CPU kernel's, step for step.
TEST_F(DeviceKernel1, SearchTakesTheListsOverFromKernel1) {
  const std::vector<Edge> edges = testing::kronecker_edges(10, 16, 9);
  const PackedEdgeList list = testing::pack(10, edges);
  for (const auto& [target, loop] : [] {
         std::vector<std::pair<ExecutionTarget, LevelLoop>> cases;
         for (const ExecutionTarget target : targets()) {
           for (const LevelLoop loop : {LevelLoop::kHost, LevelLoop::kGraph}) cases.emplace_back(target, loop);
         }
         return cases;
       }()) {
    SCOPED_TRACE(std::string(to_string(target)) + ", levels driven by the " + std::string(to_string(loop)));
    const Backend backend = target == ExecutionTarget::kDevice ? Backend::kCuda : Backend::kCudaHost;
    DeviceKernel1Report built;
    const Csr<std::uint32_t> graph = build_csr_on_target(backend, list, false, built, true);
    ASSERT_NE(built.resident, nullptr);
    DeviceSearch kept(backend, graph, false, nullptr, std::move(built.resident), loop);
    DeviceSearch uploaded(backend, graph, false, nullptr, nullptr, loop);
    const std::uint64_t n = graph.num_vertices();
    EXPECT_EQ(uploaded.traffic().to_device - kept.traffic().to_device,
              8 * (n + 1) + 4 * graph.num_directed_edges() + 4 * n);
    DirectionOptimizingBfs<std::uint32_t> cpu(graph);
    std::vector<std::int64_t> cpu_parent(n);
    std::vector<std::int64_t> parent(n);
    for (const std::uint64_t root : {edges[0].u, edges[100].v, edges[2000].u}) {
      SCOPED_TRACE("root " + std::to_string(root));
      const BfsStats want = cpu.run(root, cpu_parent, BfsOptions{});
      const BfsStats got = kept.run(root, BfsOptions{});
      kept.copy_parents(parent);
      EXPECT_EQ(testing::step_list(got), testing::step_list(want));
      const ValidationReport report = validate_bfs_tree(list, root, parent);
      ASSERT_TRUE(report.ok()) << report.messages.front();
    }
  }
}

// A rank's piece (build_local_lists): the CPU's build_local_csr lists from the same
// (row, neighbour) pairs, duplicates and rows without entries among them, whatever the
// plan; and a row outside the piece is refused.
TEST_F(DeviceKernel1, LocalListsAreTheCpuLocalCsr) {
  std::vector<std::uint32_t> rows;
  std::vector<std::uint32_t> cols;
  for (const Edge& e : testing::kronecker_edges(10, 8, 3)) {
    if (e.u % 3 == 0) continue;  // rows with no entries
    rows.push_back(static_cast<std::uint32_t>(e.u));
    cols.push_back(static_cast<std::uint32_t>(e.v));
  }
  const std::uint64_t num_rows = 1100;  // past every row a pair names
  const LocalCsr<std::uint32_t> want = build_local_csr<std::uint32_t>(num_rows, rows, cols);
  for (const ExecutionTarget target : targets()) {
    for (const PlanCase& c : plan_cases(false)) {
      SCOPED_TRACE(c.name + " on the " + std::string(to_string(target)));
      omp_set_num_threads(c.threads);
      std::vector<std::uint32_t> r = rows;
      std::vector<std::uint32_t> n = cols;
      const cuda_backend::Kernel1Lists got =
          cuda_backend::build_local_lists(target, num_rows, std::move(r), std::move(n), c.plan);
      EXPECT_TRUE(r.empty() && n.empty()) << "the pairs were not consumed";
      ASSERT_EQ(got.offsets.size(), num_rows + 1);
      EXPECT_TRUE(same_bytes(got.offsets.data(), want.offsets(), num_rows + 1));
      ASSERT_EQ(got.neighbors.size(), want.num_entries());
      EXPECT_TRUE(same_bytes(got.neighbors.data(), want.neighbor_data(), want.num_entries()));
      EXPECT_TRUE(got.sorted_of.empty());
    }
  }
  std::vector<std::uint32_t> r{0, 5, 1100};
  std::vector<std::uint32_t> n{1, 2, 3};
  for (const ExecutionTarget target : targets()) {
    EXPECT_THROW((void)cuda_backend::build_local_lists(target, num_rows, std::vector<std::uint32_t>(r),
                                                       std::vector<std::uint32_t>(n)),
                 Error);
  }
  const cuda_backend::Kernel1Lists empty = cuda_backend::build_local_lists(
      ExecutionTarget::kHost, 0, std::vector<std::uint32_t>{}, std::vector<std::uint32_t>{});
  ASSERT_EQ(empty.offsets.size(), 1U);
  EXPECT_EQ(empty.offsets[0], 0U);
}

}  // namespace
}  // namespace zbfs
