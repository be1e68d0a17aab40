// SearchFactory: the one place a run's searches are built (search.hpp), on the backend
// it names: the CPU's kernels, or a device's (--backend cuda or cuda-host) through its
// launcher. One process or distributed, the runner asks the same factory; it never
// builds a kernel itself. The distributed searches are built in zbfs_mpi
// (distributed_search_factory.cpp), the one-process ones in zbfs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/cuda/pcie_pricing.hpp"
#include "zbfs/backend/search.hpp"
#include "zbfs/core/large_array.hpp"

namespace zbfs {

template <class V>
class Csr;
template <class V>
class CompressedCsr;
template <class V>
class PeeledForest;
template <class V>
class DistributedGraph;
template <class V>
class DistributedForest;
class ProcessGrid;
class Exchanger;
class PhaseMetrics;
namespace cuda_backend {
struct ResidentLists;  // cuda/resident_lists.cuh
}  // namespace cuda_backend

struct SearchFactory {
  Backend backend = Backend::kCpu;
  bool force = false;  // --force: a device's memory check does not refuse
  int device = 0;      // --backend cuda on a distributed run: this rank's device
  // A distributed device search's id lists across PCIe, and its messages between ranks.
  cuda_backend::IdTransfer id_transfer = cuda_backend::IdTransfer::kRaw;
  DeviceExchange exchange = DeviceExchange::kStaged;
  LevelLoop level_loop = LevelLoop::kHost;  // one process on a device backend: who drives the levels
  std::optional<double> delta;              // SSSP's bucket width (--delta; unset: the kernel's own)
  // One process on a device backend: the lists kernel 1 left on the target
  // (build_csr_on_target), which the search takes over (nullptr: it uploads them).
  std::shared_ptr<cuda_backend::ResidentLists> device_lists;

  // One process over `graph`, which must outlive the search. `forest`: its peeled trees
  // (--prune; nullptr: none). A device search uploads the graph here; it takes 32-bit ids
  // on plain lists and no forest (a usage error otherwise; the configuration check
  // refuses those first).
  [[nodiscard]] std::unique_ptr<BfsSearch> bfs(const Csr<std::uint32_t>& graph,
                                               const PeeledForest<std::uint32_t>* forest) const;
  [[nodiscard]] std::unique_ptr<BfsSearch> bfs(const Csr<std::uint64_t>& graph,
                                               const PeeledForest<std::uint64_t>* forest) const;
  [[nodiscard]] std::unique_ptr<BfsSearch> bfs(const CompressedCsr<std::uint32_t>& graph) const;
  [[nodiscard]] std::unique_ptr<BfsSearch> bfs(const CompressedCsr<std::uint64_t>& graph) const;
  // `weights`: one per list entry, beside the lists; the search takes them over.
  [[nodiscard]] std::unique_ptr<SsspSearch> sssp(const Csr<std::uint32_t>& graph, LargeArray<float> weights) const;

  // Distributed, collective over `grid`'s world: everything passed must outlive the
  // search. A device search uploads this rank's pieces and runs one warm-up search (its
  // messages go through `exchanger` like a search's).
  [[nodiscard]] std::unique_ptr<BfsSearch> bfs(const ProcessGrid& grid, const DistributedGraph<std::uint32_t>& graph,
                                               Exchanger& exchanger, PhaseMetrics& metrics,
                                               const DistributedForest<std::uint32_t>* forest) const;
  [[nodiscard]] std::unique_ptr<BfsSearch> bfs(const ProcessGrid& grid, const DistributedGraph<std::uint64_t>& graph,
                                               Exchanger& exchanger, PhaseMetrics& metrics,
                                               const DistributedForest<std::uint64_t>* forest) const;
  // `graph` must be weighted; the search orders its rows (DistributedSssp).
  [[nodiscard]] std::unique_ptr<SsspSearch> sssp(const ProcessGrid& grid, DistributedGraph<std::uint32_t>& graph,
                                                 Exchanger& exchanger, PhaseMetrics& metrics) const;
};

}  // namespace zbfs
