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
#include "zbfs/backend/execution_target.hpp"
#include "zbfs/core/input_edges.hpp"
#include "zbfs/graph/csr.hpp"
#include "zbfs/graph/local_csr.hpp"

namespace zbfs {

namespace cuda_backend {
struct ResidentLists;  // cuda/resident_lists.cuh
}  // namespace cuda_backend

// `traffic`: what kernel 1 copied between host and target memory (added to it).
// `resident` (unless nullptr): the lists left on the target for the search to take over
// (SearchFactory::device_lists).
Csr<std::uint32_t> build_csr_on_target(Backend backend, const InputEdges& edges, bool force, HostDeviceTraffic& traffic,
                                       std::shared_ptr<cuda_backend::ResidentLists>* resident = nullptr);

// A distributed rank's: its piece's lists built on its target (device `device` under
// kCuda, which `sharers` ranks use at once) from the pairs the shuffle brought it, the
// same as build_local_csr's; `traffic` (which must outlive the builder) adds what each
// build copied.
LocalListBuilder<std::uint32_t> local_list_builder_on_target(Backend backend, int device, bool force,
                                                             HostDeviceTraffic& traffic, int sharers = 1);

}  // namespace zbfs
