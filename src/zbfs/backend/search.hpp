// The searches behind one interface, whichever backend runs them and however many ranks
// share them (search_factory.hpp builds them):
// - BfsSearch, kernel 2: the CPU's DirectionOptimizingBfs and DistributedBfs, a device's
//   DeviceSearch and DeviceDistributedBfs;
// - SsspSearch, kernel 3: the CPU's DeltaStepping and DistributedSssp.
// A distributed search's calls are collective over its grid's world.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "zbfs/backend/device_record.hpp"
#include "zbfs/backend/execution_target.hpp"
#include "zbfs/bfs/bfs_options.hpp"
#include "zbfs/bfs/bfs_stats.hpp"
#include "zbfs/sssp/sssp_stats.hpp"

namespace zbfs {

class BfsSearch {
 public:
  virtual ~BfsSearch() = default;

  // Kernel 2 from `root` (an input id): what the benchmark times.
  virtual BfsStats run(std::uint64_t root, const BfsOptions& options) = 0;
  // The last search's parents in host memory, by input id: every vertex's on one
  // process, this rank's piece's (blocks().block() entries) on a distributed search. A
  // device's come over here, untimed.
  virtual std::span<const std::int64_t> parents() = 0;
  // Done with the last tree (untimed, as a fresh array would be): the CPU's next search
  // starts from a cleared array and touches only what it reaches.
  virtual void clear() = 0;
  // The bytes copied between host and device memory so far (none on the CPU).
  [[nodiscard]] virtual HostDeviceTraffic traffic() const { return {}; }
  // A device's record over the job (the lists' bytes summed over the ranks, so
  // collective on a distributed search); nullopt on the CPU.
  [[nodiscard]] virtual std::optional<DeviceRecord> device_record() const { return std::nullopt; }
};

class SsspSearch {
 public:
  virtual ~SsspSearch() = default;

  // Kernel 3 from `root` (an input id) into `parent` and `distance`, one entry per
  // vertex as BfsSearch::parents() has them: the parent's input id (root: itself; -1
  // unreached) and the distance (+infinity unreached).
  virtual SsspStats run(std::uint64_t root, std::span<std::int64_t> parent, std::span<float> distance) = 0;
};

}  // namespace zbfs
