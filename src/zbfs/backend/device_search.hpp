// The one-process search of the device backends (--backend cuda / cuda-host with
// --partition shared): a degree-ordered Csr's kernel-1 extras as the CPU kernel has them
// (the edgeless bitmap from the host; the hubs found on the target), uploaded once with
// the lists (or beside the lists kernel 1 left on the target), and DeviceBfs run per root. Plain C++: on a build
// without CUDA, construction throws the usage error of require_backend.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/cuda/device_bfs.hpp"
#include "zbfs/bfs/bfs_options.hpp"
#include "zbfs/bfs/bfs_stats.hpp"
#include "zbfs/graph/csr.hpp"
#include "zbfs/graph/peeled_forest.hpp"

namespace zbfs {

class DeviceSearch {
 public:
  // `backend`: kCuda (device 0 of the visible ones) or kCudaHost. Throws a usage error
  // when the device's memory is short (unless `force`). `forest`: --prune's trees (it
  // must outlive this object), or nullptr: searches run on the 2-core and the trees are
  // attached on the device, as the CPU kernel does it.
  // `resident`: the graph's lists as kernel 1 left them on the target
  // (build_csr_on_target), taken over instead of uploaded; nullptr: upload them.
  // `loop`: who drives the levels (--level-loop).
  DeviceSearch(Backend backend, const Csr<std::uint32_t>& graph, bool force,
               const PeeledForest<std::uint32_t>* forest = nullptr,
               std::shared_ptr<cuda_backend::ResidentLists> resident = nullptr, LevelLoop loop = LevelLoop::kHost);
  ~DeviceSearch();
  DeviceSearch(const DeviceSearch&) = delete;
  DeviceSearch& operator=(const DeviceSearch&) = delete;

  // Kernel 2 from `root` (an input id); the parents stay in the target's memory.
  BfsStats run(std::uint64_t root, const BfsOptions& options);
  // The last search's parents, indexed by input id.
  void copy_parents(std::span<std::int64_t> parent);
  // The hubs found on the target, one per internal id (tests compare them with
  // hub_neighbors').
  void copy_hubs(std::span<std::uint32_t> hubs);

  // The device's name ("host" for cuda-host) and the bytes copied each way so far.
  [[nodiscard]] const std::string& device_name() const;
  [[nodiscard]] HostDeviceTraffic traffic() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zbfs
