#include "zbfs/backend/cuda/device_runtime.hpp"
#include "zbfs/backend/cuda/launch.cuh"
#include "zbfs/backend/cuda/target_buffer.hpp"

namespace zbfs::cuda_backend {

int visible_devices(std::string& why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    why = cudaGetErrorString(status);
    cudaGetLastError();  // clear the sticky error so a later call starts clean
    return 0;
  }
  if (count == 0) why = "the CUDA runtime sees no device";
  return count;
}

DeviceInfo use_device(int index) {
  check_cuda(cudaSetDevice(index), "cudaSetDevice");
  cudaDeviceProp properties{};
  check_cuda(cudaGetDeviceProperties(&properties, index), "cudaGetDeviceProperties");
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  return {index, properties.name, total_bytes, free_bytes};
}

void open_device(int index) {
  check_cuda(cudaSetDevice(index), "cudaSetDevice");
  check_cuda(cudaFree(nullptr), "cudaFree");  // the runtime's idiom for "create the context"
}

std::string pci_bus_id(int index) {
  char id[64] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof(id), index) != cudaSuccess) return "";
  return id;
}

}  // namespace zbfs::cuda_backend

namespace zbfs::cuda_backend {

TargetBuffer::TargetBuffer(ExecutionTarget target, std::uint64_t bytes) : target_(target), bytes_(bytes) {
  if (bytes == 0) return;
  if (target == ExecutionTarget::kDevice) {
    check_cuda(cudaMalloc(&data_, bytes), "cudaMalloc");
  } else {
    data_ = ::operator new (bytes, std::align_val_t{64});
  }
}

TargetBuffer::~TargetBuffer() {
  if (data_ == nullptr) return;
  if (target_ == ExecutionTarget::kDevice) {
    cudaFree(data_);
  } else {
    ::operator delete (data_, std::align_val_t{64});
  }
}

void TargetBuffer::upload(const void* host, std::uint64_t bytes) {
  if (bytes > bytes_) throw Error(ExitCode::kFailure, "upload past the end of a target buffer");
  if (bytes == 0) return;
  if (target_ == ExecutionTarget::kDevice) {
    check_cuda(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  } else {
    std::memcpy(data_, host, bytes);
  }
}

void TargetBuffer::download(void* host, std::uint64_t bytes) const {
  if (bytes > bytes_) throw Error(ExitCode::kFailure, "download past the end of a target buffer");
  if (bytes == 0) return;
  if (target_ == ExecutionTarget::kDevice) {
    check_cuda(cudaMemcpy(host, data_, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  } else {
    std::memcpy(host, data_, bytes);
  }
}

}  // namespace zbfs::cuda_backend
