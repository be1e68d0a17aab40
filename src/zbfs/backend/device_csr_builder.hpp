// Kernel 1 of the one-process device backends (--backend cuda / cuda-host with --partition
// shared): the degree-ordered Csr<uint32_t> built on the target (cuda/device_kernel1.hpp),
// the same lists and tables, byte for byte, as the CPU's build_csr gives, handed to the
// host, where the counts, the search keys, --prune's forest and the validator read them;
// and a distributed rank's piece of the lists, built there from its pairs.
// Plain C++: on a build without CUDA it throws require_backend's usage error.
#pragma once

#include <cstdint>
#include <memory>

#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/cuda/device_kernel1.hpp"
#include "zbfs/backend/execution_target.hpp"
#include "zbfs/core/input_edges.hpp"
#include "zbfs/graph/csr.hpp"
#include "zbfs/graph/local_csr.hpp"

namespace zbfs {

// What kernel 1 on the target reports: the bytes it copied between host and target, the
// time its stages took (summed over its builds), and, where asked, the one-process lists
// it left on the target for the search to take over (SearchFactory::device_lists).
struct DeviceKernel1Report {
  HostDeviceTraffic copies;
  cuda_backend::Kernel1Stages stages;
  std::shared_ptr<cuda_backend::ResidentLists> resident;
};

// `keep_on_target`: leave the lists on the target (report.resident).
Csr<std::uint32_t> build_csr_on_target(Backend backend, const InputEdges& edges, bool force,
                                       DeviceKernel1Report& report, bool keep_on_target = false);

// A distributed rank's: its piece's lists built on its target (device `device` under
// kCuda, which `sharers` ranks use at once) from the pairs the shuffle brought it, the
// same as build_local_csr's; `report` (which must outlive the builder) adds each build's
// copies and stages.
LocalListBuilder<std::uint32_t> local_list_builder_on_target(Backend backend, int device, bool force,
                                                             DeviceKernel1Report& report, int sharers = 1);

}  // namespace zbfs
