// DeviceDistributedBfs: kernel 2 over MPI on the device backend (--backend cuda or
// cuda-host with --partition 1d, 2d or hybrid): each rank's piece of the graph and its
// search state live in its device's memory (cuda/distributed_steps.hpp). With the staged
// exchange the steps are StepProtocol's (bfs/step_protocol.hpp), the CPU backend's
// protocol, over the device's LocalSteps: the exchanges go through the Exchanger from
// host memory (the frontier and the reports are copied out, what arrives is copied in),
// so the network carries exactly the CPU backend's bytes. Its top-down folds send ids
// only (under --route the CPU backend sends vertex-parent updates instead): the same
// trees, and the predecessor reduction brings the parents.
//
// With a device wire (--device-exchange cuda-aware or nccl; device_wire.hpp) the steps'
// exchanges skip host memory: the frontier, the reports and the bitmaps stay in device
// memory and the wire moves them between the ranks' devices, as 64-bit ids (--codec
// none) or as the device's bitpack frames (--codec bitpack), the masked gather packed on
// the device, the ring's bits device to device.
//
// With --prune (the staged exchange), a search runs on the 2-core as the CPU backend's
// does (bfs/distributed_pruned_search.hpp: the same chain walk, depth and collectives):
// the peeled vertices start visited from the forest's bits uploaded in kernel 1, each
// level's tallest tree is counted on the device, and after the core search the gathered
// anchors' bits go to the device, where every owned peeled vertex whose anchor was
// reached gets its parent.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/cuda/pcie_pricing.hpp"
#include "zbfs/backend/device_wire.hpp"
#include "zbfs/backend/execution_target.hpp"
#include "zbfs/bfs/bfs_options.hpp"
#include "zbfs/bfs/bfs_stats.hpp"
#include "zbfs/bfs/direction_policy.hpp"
#include "zbfs/bfs/distributed_forest.hpp"
#include "zbfs/bfs/distributed_pruned_search.hpp"
#include "zbfs/bfs/step_protocol.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/topology/process_grid.hpp"
#include "zbfs/wire/exchanger.hpp"

namespace zbfs {

namespace cuda_backend {
struct TargetMessages;  // cuda/distributed_steps.hpp
}  // namespace cuda_backend

class DeviceDistributedBfs {
 public:
  // Uploads this rank's pieces (collective: the device memory check is agreed on by all
  // ranks). `backend`: kCuda (this rank's device: `device`) or kCudaHost. `id_transfer`:
  // how id lists cross PCIe (cuda/pcie_pricing.hpp). `exchange`: how the steps' messages
  // travel; a device wire sends ids as words with IdTransfer::kRaw and as frames with
  // kFrames (kPriced is for the staged exchange only).
  DeviceDistributedBfs(Backend backend, int device, const ProcessGrid& grid,
                       const DistributedGraph<std::uint32_t>& graph, Exchanger& exchanger, PhaseMetrics& metrics,
                       bool force, cuda_backend::IdTransfer id_transfer = cuda_backend::IdTransfer::kRaw,
                       DeviceExchange exchange = DeviceExchange::kStaged,
                       const DistributedForest<std::uint32_t>* forest = nullptr);
  ~DeviceDistributedBfs();
  DeviceDistributedBfs(const DeviceDistributedBfs&) = delete;
  DeviceDistributedBfs& operator=(const DeviceDistributedBfs&) = delete;

  // Collective. The parents stay in the device's memory until copy_parents.
  BfsStats run(std::uint64_t root, const BfsOptions& options);
  // Collective: one search, from the highest-degree vertex of rank 0's piece, whose
  // counters are then dropped. CUDA loads a module's kernels at their first launch, and
  // that belongs to setting up (kernel 1), not to the first search key's time.
  void warm_up();
  // The last search's parents: one per vertex of this rank's piece (blocks().block()),
  // as DistributedBfs writes them.
  void copy_parents(std::span<std::int64_t> parent);

  [[nodiscard]] const std::string& device_name() const { return device_name_; }
  [[nodiscard]] DeviceExchange exchange() const { return exchange_; }
  [[nodiscard]] HostDeviceTraffic traffic() const;
  // How id lists crossed PCIe: the mode, the calibration that priced them (kPriced), and
  // the lists that crossed as frames and as they were.
  [[nodiscard]] cuda_backend::IdTransfer id_transfer() const { return id_transfer_; }
  [[nodiscard]] cuda_backend::PcieCosts pcie_costs() const;
  [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> lists_framed_and_raw() const;

 private:
  using LevelCounts = zbfs::LevelCounts;
  // With a device wire (not staged), the steps whose exchanges skip host memory; the
  // staged steps are StepProtocol's over the device's LocalSteps (Steps).
  LevelCounts top_down_on_wire();
  LevelCounts bottom_up_on_wire();
  LevelCounts fold_on_wire(const TraversalLayout& layout, bool with_edges);
  // Books a wire exchange's ids and, with frames, its codec work, as the Exchanger does.
  // The same for personalised messages (this rank's own not counted).
  void book_messages(const Communicator& comm, const cuda_backend::TargetMessages& sent);
  void book_wire(std::uint64_t ids_to_others, std::uint64_t raw_bytes, std::uint64_t wire_bytes, std::uint64_t frames);
  // The predecessor reduction over the device wire.
  void reduce_on_wire();
  // A pruned search's attach step (collective).
  void attach_trees(std::uint64_t root, const DistributedPrunedSearch<std::uint32_t>::Start& start, BfsStats& stats);

  const ProcessGrid& grid_;
  const DistributedGraph<std::uint32_t>& graph_;
  Exchanger& exchanger_;
  PhaseMetrics& metrics_;
  std::string device_name_;
  cuda_backend::IdTransfer id_transfer_;
  DeviceExchange exchange_;
  std::unique_ptr<DeviceWire> wire_;  // a device wire's (not staged)
  // What a pruned search does around its core search (forest() is nullptr without
  // --prune).
  DistributedPrunedSearch<std::uint32_t> pruning_;
  // cuda_backend::DistributedSteps where the CUDA backend is built (a build without it
  // refuses the device backends before constructing this).
  struct Steps;
  std::unique_ptr<Steps> steps_;
  std::unique_ptr<StepProtocol> protocol_;
};

}  // namespace zbfs
