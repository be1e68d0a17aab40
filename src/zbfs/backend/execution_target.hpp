// Where the device backend's kernels run: on a CUDA device, or through the host launcher
// (the same kernel bodies over the same index space on OpenMP threads, Thrust on its
// OpenMP system), which is how machines without a GPU (CI) run and test the whole GPU
// code path (--backend cuda-host). Plain C++: no CUDA header.
#pragma once

#include <cstdint>
#include <string_view>

namespace zbfs {

enum class ExecutionTarget { kDevice, kHost };

// Bytes copied between host memory and the target's (on the host target the same copies
// happen, as memcpy, and are counted alike).
struct HostDeviceTraffic {
  std::uint64_t to_device = 0;
  std::uint64_t to_host = 0;
};

inline std::string_view to_string(ExecutionTarget target) {
  return target == ExecutionTarget::kDevice ? "device" : "host";
}

}  // namespace zbfs
