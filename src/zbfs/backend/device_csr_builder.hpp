// Kernel 1 of the one-process device backends (--backend cuda / cuda-host with --partition
// shared): the degree-ordered Csr<uint32_t> built on the target (cuda/device_kernel1.hpp),
// the same lists and tables, byte for byte, as the CPU's build_csr gives, handed to the
// host, where the counts, the search keys, --prune's forest and the validator read them.
// Plain C++: on a build without CUDA it throws require_backend's usage error.
#pragma once

#include <cstdint>

#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/execution_target.hpp"
#include "zbfs/core/input_edges.hpp"
#include "zbfs/graph/csr.hpp"

namespace zbfs {

// `traffic`: what kernel 1 copied between host and target memory (added to it).
Csr<std::uint32_t> build_csr_on_target(Backend backend, const InputEdges& edges, bool force,
                                       HostDeviceTraffic& traffic);

}  // namespace zbfs
