// TargetBuffer: bytes of the device backend's target memory (a cudaMalloc'd buffer, or
// host memory for the host launcher) for code outside CUDA sources (the driver, tests),
// with copies from and to host memory. Plain C++ (implemented in device_runtime.cu).
#pragma once

#include <cstdint>

#include "zbfs/backend/execution_target.hpp"

namespace zbfs::cuda_backend {

class TargetBuffer {
 public:
  TargetBuffer(ExecutionTarget target, std::uint64_t bytes);
  ~TargetBuffer();
  TargetBuffer(const TargetBuffer&) = delete;
  TargetBuffer& operator=(const TargetBuffer&) = delete;

  [[nodiscard]] void* data() const { return data_; }
  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }
  // Copies `bytes` from host memory to the buffer's start, or back.
  void upload(const void* host, std::uint64_t bytes);
  void download(void* host, std::uint64_t bytes) const;

 private:
  ExecutionTarget target_;
  void* data_ = nullptr;
  std::uint64_t bytes_ = 0;
};

}  // namespace zbfs::cuda_backend
