#include "zbfs/backend/device_csr_builder.hpp"

#include <utility>

#ifdef ZBFS_HAVE_CUDA
#include "zbfs/backend/cuda/device_kernel1.hpp"
#include "zbfs/backend/cuda/device_runtime.hpp"
#endif

namespace zbfs {

#ifdef ZBFS_HAVE_CUDA
namespace {

void add_stages(cuda_backend::Kernel1Stages& total, const cuda_backend::Kernel1Stages& more) {
  total.send_s += more.send_s;
  total.order_s += more.order_s;
  total.lists_s += more.lists_s;
  total.fetch_s += more.fetch_s;
}

}  // namespace
#endif

Csr<std::uint32_t> build_csr_on_target(Backend backend, const InputEdges& edges, bool force,
                                       DeviceKernel1Report& report, bool keep_on_target) {
  require_backend(backend);
#ifdef ZBFS_HAVE_CUDA
  const ExecutionTarget target = backend == Backend::kCuda ? ExecutionTarget::kDevice : ExecutionTarget::kHost;
  if (target == ExecutionTarget::kDevice) cuda_backend::use_device(0);
  cuda_backend::Kernel1Plan plan;
  plan.force = force;
  plan.keep_on_target = keep_on_target;
  cuda_backend::Kernel1Lists lists = cuda_backend::build_lists(target, edges, plan);
  report.copies.to_device += lists.traffic.to_device;
  report.copies.to_host += lists.traffic.to_host;
  add_stages(report.stages, lists.stages);
  report.resident = std::move(lists.resident);
  return Csr<std::uint32_t>(lists.num_vertices, std::move(lists.offsets), std::move(lists.neighbors),
                            std::move(lists.tuple_degree),
                            DegreeOrder<std::uint32_t>(std::move(lists.sorted_of), std::move(lists.original_of)));
#else
  (void)edges;
  (void)force;
  (void)report;
  (void)keep_on_target;
  return {};
#endif
}

LocalListBuilder<std::uint32_t> local_list_builder_on_target(Backend backend, int device, bool force,
                                                             DeviceKernel1Report& report, int sharers) {
  require_backend_built(backend);
  return [backend, device, force, &report, sharers](std::uint64_t num_rows, std::vector<std::uint32_t>&& rows,
                                                    std::vector<std::uint32_t>&& cols) {
#ifdef ZBFS_HAVE_CUDA
    const ExecutionTarget target = backend == Backend::kCuda ? ExecutionTarget::kDevice : ExecutionTarget::kHost;
    if (target == ExecutionTarget::kDevice) cuda_backend::use_device(device);
    cuda_backend::Kernel1Plan plan;
    plan.force = force;
    plan.memory_share = static_cast<unsigned>(sharers);
    cuda_backend::Kernel1Lists lists =
        cuda_backend::build_local_lists(target, num_rows, std::move(rows), std::move(cols), plan);
    report.copies.to_device += lists.traffic.to_device;
    report.copies.to_host += lists.traffic.to_host;
    add_stages(report.stages, lists.stages);
    return LocalCsr<std::uint32_t>(num_rows, std::move(lists.offsets), std::move(lists.neighbors));
#else
    (void)backend;
    (void)device;
    (void)force;
    (void)report;
    (void)sharers;
    return build_local_csr<std::uint32_t>(num_rows, std::move(rows), std::move(cols), 1);
#endif
  };
}

}  // namespace zbfs
