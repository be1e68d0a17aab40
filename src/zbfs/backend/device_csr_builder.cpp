#include "zbfs/backend/device_csr_builder.hpp"

#include <utility>

#ifdef ZBFS_HAVE_CUDA
#include "zbfs/backend/cuda/device_kernel1.hpp"
#include "zbfs/backend/cuda/device_runtime.hpp"
#endif

namespace zbfs {

Csr<std::uint32_t> build_csr_on_target(Backend backend, const InputEdges& edges, bool force, HostDeviceTraffic& traffic,
                                       std::shared_ptr<cuda_backend::ResidentLists>* resident) {
  require_backend(backend);
#ifdef ZBFS_HAVE_CUDA
  const ExecutionTarget target = backend == Backend::kCuda ? ExecutionTarget::kDevice : ExecutionTarget::kHost;
  if (target == ExecutionTarget::kDevice) cuda_backend::use_device(0);
  cuda_backend::Kernel1Plan plan;
  plan.force = force;
  plan.keep_on_target = resident != nullptr;
  cuda_backend::Kernel1Lists lists = cuda_backend::build_lists(target, edges, plan);
  traffic.to_device += lists.traffic.to_device;
  traffic.to_host += lists.traffic.to_host;
  if (resident != nullptr) *resident = std::move(lists.resident);
  return Csr<std::uint32_t>(lists.num_vertices, std::move(lists.offsets), std::move(lists.neighbors),
                            std::move(lists.tuple_degree),
                            DegreeOrder<std::uint32_t>(std::move(lists.sorted_of), std::move(lists.original_of)));
#else
  (void)edges;
  (void)force;
  (void)traffic;
  (void)resident;
  return {};
#endif
}

LocalListBuilder<std::uint32_t> local_list_builder_on_target(Backend backend, int device, bool force,
                                                             HostDeviceTraffic& traffic, int sharers) {
  require_backend_built(backend);
  return [backend, device, force, &traffic, sharers](std::uint64_t num_rows, std::vector<std::uint32_t>&& rows,
                                                     std::vector<std::uint32_t>&& cols) {
#ifdef ZBFS_HAVE_CUDA
    const ExecutionTarget target = backend == Backend::kCuda ? ExecutionTarget::kDevice : ExecutionTarget::kHost;
    if (target == ExecutionTarget::kDevice) cuda_backend::use_device(device);
    cuda_backend::Kernel1Plan plan;
    plan.force = force;
    plan.memory_share = static_cast<unsigned>(sharers);
    cuda_backend::Kernel1Lists lists =
        cuda_backend::build_local_lists(target, num_rows, std::move(rows), std::move(cols), plan);
    traffic.to_device += lists.traffic.to_device;
    traffic.to_host += lists.traffic.to_host;
    return LocalCsr<std::uint32_t>(num_rows, std::move(lists.offsets), std::move(lists.neighbors));
#else
    (void)backend;
    (void)device;
    (void)force;
    (void)traffic;
    (void)sharers;
    return build_local_csr<std::uint32_t>(num_rows, std::move(rows), std::move(cols), 1);
#endif
  };
}

}  // namespace zbfs
