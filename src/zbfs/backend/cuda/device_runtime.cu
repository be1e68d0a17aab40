#include "zbfs/backend/cuda/device_runtime.hpp"
#include "zbfs/backend/cuda/launch.cuh"

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

}  // namespace zbfs::cuda_backend
