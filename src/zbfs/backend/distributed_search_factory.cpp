// SearchFactory's distributed searches (search_factory.hpp), in zbfs_mpi.
#include <string>
#include <type_traits>
#include <utility>

#include "zbfs/backend/device_bfs_search.hpp"
#include "zbfs/backend/device_distributed_bfs.hpp"
#include "zbfs/backend/search_factory.hpp"
#include "zbfs/bfs/distributed_bfs.hpp"
#include "zbfs/bfs/distributed_forest.hpp"
#include "zbfs/mpi/communicator.hpp"
#include "zbfs/sssp/distributed_sssp.hpp"
#include "zbfs/topology/process_grid.hpp"

namespace zbfs {
namespace {

// The CPU's distributed search, into its own parent array.
template <class V>
class CpuDistributedBfsSearch final : public BfsSearch {
 public:
  CpuDistributedBfsSearch(const ProcessGrid& grid, const DistributedGraph<V>& graph, Exchanger& exchanger,
                          PhaseMetrics& metrics, const DistributedForest<V>* forest)
      : bfs_(grid, graph, exchanger, metrics, forest) {}

  BfsStats run(std::uint64_t root, const BfsOptions& options) override { return bfs_.run(root, options); }
  std::span<const std::int64_t> parents() override { return bfs_.parent(); }
  void clear() override { bfs_.clear_parent(); }

 private:
  DistributedBfs<V> bfs_;
};

// A device's distributed search (32-bit local ids), warmed up with one search: CUDA loads
// a module's kernels at their first launch, which belongs to kernel 1, not to the first
// search key's time.
class DeviceDistributedBfsSearch final : public DeviceBfsSearch<DeviceDistributedBfs> {
 public:
  DeviceDistributedBfsSearch(const SearchFactory& factory, const ProcessGrid& grid,
                             const DistributedGraph<std::uint32_t>& graph, Exchanger& exchanger, PhaseMetrics& metrics,
                             const DistributedForest<std::uint32_t>* forest)
      : DeviceBfsSearch(grid.blocks().block(), factory.backend, factory.device, grid, graph, exchanger, metrics,
                        factory.force, factory.id_transfer, factory.exchange, forest),
        world_(grid.world()) {
    device_.warm_up();
    set_up();
  }

  // With how the lists crossed PCIe and between ranks (their bytes summed over the job).
  [[nodiscard]] std::optional<DeviceRecord> device_record() const override {
    std::optional<DeviceRecord> record = DeviceBfsSearch::device_record();
    record->id_transfer = std::string(to_string(device_.id_transfer()));
    record->exchange = std::string(to_string(device_.exchange()));
    record->pcie = device_.pcie_costs();
    const auto [framed, raw] = device_.lists_framed_and_raw();
    std::uint64_t lists[2] = {framed, raw};
    world_.allreduce(std::span<std::uint64_t>(lists), ReduceOp::kSum);
    record->lists_framed = lists[0];
    record->lists_raw = lists[1];
    return record;
  }

 private:
  const Communicator& world_;
};

class CpuDistributedSsspSearch final : public SsspSearch {
 public:
  CpuDistributedSsspSearch(const ProcessGrid& grid, DistributedGraph<std::uint32_t>& graph, Exchanger& exchanger,
                           PhaseMetrics& metrics, std::optional<double> delta)
      : sssp_(grid, graph, exchanger, metrics, delta) {}
  SsspStats run(std::uint64_t root, std::span<std::int64_t> parent, std::span<float> distance) override {
    return sssp_.run(root, parent, distance);
  }

 private:
  DistributedSssp sssp_;
};

}  // namespace

std::unique_ptr<BfsSearch> SearchFactory::bfs(const ProcessGrid& grid, const DistributedGraph<std::uint32_t>& graph,
                                              Exchanger& exchanger, PhaseMetrics& metrics,
                                              const DistributedForest<std::uint32_t>* forest) const {
  if (backend == Backend::kCpu) {
    return std::make_unique<CpuDistributedBfsSearch<std::uint32_t>>(grid, graph, exchanger, metrics, forest);
  }
  return std::make_unique<DeviceDistributedBfsSearch>(*this, grid, graph, exchanger, metrics, forest);
}

std::unique_ptr<BfsSearch> SearchFactory::bfs(const ProcessGrid& grid, const DistributedGraph<std::uint64_t>& graph,
                                              Exchanger& exchanger, PhaseMetrics& metrics,
                                              const DistributedForest<std::uint64_t>* forest) const {
  if (backend != Backend::kCpu) refuse_backend(backend, "numbers a rank's vertex groups in 32 bits: use more ranks");
  return std::make_unique<CpuDistributedBfsSearch<std::uint64_t>>(grid, graph, exchanger, metrics, forest);
}

std::unique_ptr<SsspSearch> SearchFactory::sssp(const ProcessGrid& grid, DistributedGraph<std::uint32_t>& graph,
                                                Exchanger& exchanger, PhaseMetrics& metrics) const {
  if (backend != Backend::kCpu) refuse_backend(backend, "runs BFS only: --kernels sssp runs on the CPU backend");
  return std::make_unique<CpuDistributedSsspSearch>(grid, graph, exchanger, metrics, delta);
}

}  // namespace zbfs
