// Where the device backend's kernels run: on a CUDA device, or through the host launcher
// (the same kernel bodies over the same index space on OpenMP threads, Thrust on its
// OpenMP system), which is how machines without a GPU (CI) run and test the whole GPU
// code path (--backend cuda-host). Plain C++: no CUDA header.
#pragma once

#include <string_view>

namespace zbfs {

enum class ExecutionTarget { kDevice, kHost };

inline std::string_view to_string(ExecutionTarget target) {
  return target == ExecutionTarget::kDevice ? "device" : "host";
}

}  // namespace zbfs
