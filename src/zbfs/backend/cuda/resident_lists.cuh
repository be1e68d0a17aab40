// ResidentLists: the lists kernel 1 built on the target (device_kernel1.cu), left there for
// the one-process search (device_bfs.cu) to take over instead of uploading the host's copy
// again: the rows' offsets, the neighbours (the array as kernel 1 sized it: room for every
// entry before deduplication) and the internal -> input id table. For those two
// translation units only; elsewhere the type is opaque.
#pragma once

#include <cstdint>

#include "zbfs/backend/cuda/launch.cuh"

namespace zbfs::cuda_backend {

struct ResidentLists {
  std::uint64_t num_vertices = 0;
  DeviceArray<std::uint64_t> offsets;    // num_vertices + 1
  DeviceArray<std::uint32_t> neighbors;  // offsets[num_vertices] used
  DeviceArray<std::uint32_t> original;   // num_vertices
};

}  // namespace zbfs::cuda_backend
