#include "zbfs/backend/search_factory.hpp"

#include <string>
#include <utility>

#include "zbfs/backend/device_bfs_search.hpp"
#include "zbfs/backend/device_search.hpp"
#include "zbfs/bfs/direction_optimizing_bfs.hpp"
#include "zbfs/graph/compressed_csr.hpp"
#include "zbfs/graph/csr.hpp"
#include "zbfs/graph/peeled_forest.hpp"
#include "zbfs/sssp/delta_stepping.hpp"

namespace zbfs {
namespace {

// The CPU's one-process search, into its own parent array.
template <class V>
class CpuBfsSearch final : public BfsSearch {
 public:
  // DirectionOptimizingBfs's arguments: the graph, and a plain graph's forest.
  template <class... Args>
  explicit CpuBfsSearch(const Args&... args) : bfs_(args...) {}

  BfsStats run(std::uint64_t root, const BfsOptions& options) override { return bfs_.run(root, options); }
  std::span<const std::int64_t> parents() override { return bfs_.parent(); }
  void clear() override { bfs_.clear_parent(); }

 private:
  DirectionOptimizingBfs<V> bfs_;
};

class CpuSsspSearch final : public SsspSearch {
 public:
  CpuSsspSearch(const Csr<std::uint32_t>& graph, LargeArray<float> weights, std::optional<double> delta)
      : sssp_(graph, std::move(weights), delta) {}
  SsspStats run(std::uint64_t root, std::span<std::int64_t> parent, std::span<float> distance) override {
    return sssp_.run(root, parent, distance);
  }

 private:
  DeltaStepping sssp_;
};

}  // namespace

std::unique_ptr<BfsSearch> SearchFactory::bfs(const Csr<std::uint32_t>& graph,
                                              const PeeledForest<std::uint32_t>* forest) const {
  if (backend == Backend::kCpu) return std::make_unique<CpuBfsSearch<std::uint32_t>>(graph, forest);
  return std::make_unique<DeviceBfsSearch<DeviceSearch>>(graph.num_vertices(), backend, graph, force, forest,
                                                         device_lists, level_loop);
}

std::unique_ptr<BfsSearch> SearchFactory::bfs(const Csr<std::uint64_t>& graph,
                                              const PeeledForest<std::uint64_t>* forest) const {
  if (backend != Backend::kCpu) refuse_backend(backend, "numbers vertices in 32 bits: fewer than 2^32 vertices");
  return std::make_unique<CpuBfsSearch<std::uint64_t>>(graph, forest);
}

std::unique_ptr<BfsSearch> SearchFactory::bfs(const CompressedCsr<std::uint32_t>& graph) const {
  if (backend != Backend::kCpu) refuse_backend(backend, "reads plain lists: leave out --adjacency");
  return std::make_unique<CpuBfsSearch<std::uint32_t>>(graph);
}

std::unique_ptr<BfsSearch> SearchFactory::bfs(const CompressedCsr<std::uint64_t>& graph) const {
  if (backend != Backend::kCpu) refuse_backend(backend, "reads plain lists: leave out --adjacency");
  return std::make_unique<CpuBfsSearch<std::uint64_t>>(graph);
}

std::unique_ptr<SsspSearch> SearchFactory::sssp(const Csr<std::uint32_t>& graph, LargeArray<float> weights) const {
  if (backend != Backend::kCpu) refuse_backend(backend, "runs BFS only: --kernels sssp runs on the CPU backend");
  return std::make_unique<CpuSsspSearch>(graph, std::move(weights), delta);
}

}  // namespace zbfs
