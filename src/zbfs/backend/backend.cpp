#include "zbfs/backend/backend.hpp"

#include <algorithm>
#include <string>

#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/core/timer.hpp"
#ifdef ZBFS_HAVE_CUDA
#include "zbfs/backend/cuda/device_runtime.hpp"
#endif

namespace zbfs {

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::kCpu: return "cpu";
    case Backend::kCuda: return "cuda";
    case Backend::kCudaHost: return "cuda-host";
  }
  return "unknown";
}

std::optional<Backend> parse_backend(std::string_view text) {
  if (text == "cpu") return Backend::kCpu;
  if (text == "cuda") return Backend::kCuda;
  if (text == "cuda-host") return Backend::kCudaHost;
  return std::nullopt;
}

std::string_view to_string(DeviceExchange exchange) {
  switch (exchange) {
    case DeviceExchange::kStaged: return "staged";
    case DeviceExchange::kCudaAware: return "cuda-aware";
    case DeviceExchange::kNccl: return "nccl";
  }
  return "unknown";
}

std::optional<DeviceExchange> parse_device_exchange(std::string_view text) {
  if (text == "staged") return DeviceExchange::kStaged;
  if (text == "cuda-aware") return DeviceExchange::kCudaAware;
  if (text == "nccl") return DeviceExchange::kNccl;
  return std::nullopt;
}

std::string_view to_string(LevelLoop loop) {
  switch (loop) {
    case LevelLoop::kHost: return "host";
    case LevelLoop::kDevice: return "device";
    case LevelLoop::kGraph: return "graph";
  }
  return "unknown";
}

std::optional<LevelLoop> parse_level_loop(std::string_view text) {
  if (text == "host") return LevelLoop::kHost;
  if (text == "device") return LevelLoop::kDevice;
  if (text == "graph") return LevelLoop::kGraph;
  return std::nullopt;
}

bool nccl_built() {
#ifdef ZBFS_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

void require_device_exchange(DeviceExchange exchange, Backend backend) {
  if (exchange == DeviceExchange::kStaged) return;
  const std::string flag = "--device-exchange " + std::string(to_string(exchange));
  if (backend == Backend::kCpu) throw_usage_error(flag + " needs --backend cuda or cuda-host");
  if (exchange != DeviceExchange::kNccl) return;
  if (!nccl_built()) throw_usage_error(flag + ": this build has no NCCL (CMake found no nccl.h and libnccl)");
  if (backend != Backend::kCuda) {
    throw_usage_error(flag + " needs --backend cuda: NCCL moves device memory and has no host launcher");
  }
}

bool cuda_backend_built() {
#ifdef ZBFS_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

void require_device_memory(std::uint64_t needed, std::uint64_t free, std::uint64_t total, bool force) {
  if (needed <= free || force) return;
  throw_usage_error("the graph needs about " + format_bytes(needed) + " of device memory but the device has " +
                    format_bytes(free) + " free of " + format_bytes(total) + " (use --force to try anyway)");
}

bool cuda_device_visible() {
#ifdef ZBFS_HAVE_CUDA
  std::string why;
  return cuda_backend::visible_devices(why) > 0;
#else
  return false;
#endif
}

double open_device(Backend backend, int device) {
  if (backend != Backend::kCuda) return 0;
  require_backend(backend);
  const Stopwatch clock;
#ifdef ZBFS_HAVE_CUDA
  cuda_backend::open_device(device);
#endif
  (void)device;
  return clock.elapsed_s();
}

std::string device_pci_bus_id(int device) {
#ifdef ZBFS_HAVE_CUDA
  std::string why;
  if (cuda_backend::visible_devices(why) > device) return cuda_backend::pci_bus_id(device);
#endif
  (void)device;
  return "";
}

int device_for_rank(int node_rank, std::optional<int> gpus_per_node) {
  int visible = 0;
  std::string why = "built without CUDA";
#ifdef ZBFS_HAVE_CUDA
  visible = cuda_backend::visible_devices(why);
#endif
  if (visible == 0) throw_usage_error("--backend cuda: no CUDA device is visible (" + why + ")");
  if (gpus_per_node && *gpus_per_node > visible) {
    throw_usage_error("--gpus-per-node " + std::to_string(*gpus_per_node) + " but this node's ranks see " +
                      std::to_string(visible) + " device" + (visible == 1 ? "" : "s"));
  }
  return node_rank % gpus_per_node.value_or(visible);
}

int ranks_sharing_device(int node_ranks, int device, std::optional<int> gpus_per_node) {
  int visible = 1;
#ifdef ZBFS_HAVE_CUDA
  std::string why;
  visible = std::max(1, cuda_backend::visible_devices(why));
#endif
  const int gpus = std::max(1, gpus_per_node.value_or(visible));
  return std::max(1, (node_ranks - device + gpus - 1) / gpus);
}

void require_backend_built(Backend backend) {
  if (backend == Backend::kCpu || cuda_backend_built()) return;
  throw_usage_error("--backend " + std::string(to_string(backend)) +
                    ": this zbfs was built without CUDA (configure with -DZBFS_CUDA=ON where nvcc is installed)");
}

void require_backend(Backend backend) {
  require_backend_built(backend);
#ifdef ZBFS_HAVE_CUDA
  if (backend == Backend::kCuda) {
    std::string why;
    if (cuda_backend::visible_devices(why) == 0) {
      throw_usage_error("--backend cuda: no CUDA device is visible (" + why + "); --backend cuda-host runs the " +
                        "same code on the CPU");
    }
  }
#endif
}

void refuse_backend(Backend backend, std::string_view why) {
  throw_usage_error("--backend " + std::string(to_string(backend)) + " " + std::string(why));
}

}  // namespace zbfs
