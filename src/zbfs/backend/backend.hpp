// Which kernels run a benchmark's searches (--backend): the CPU's (the default), the
// CUDA device backend on a GPU (cuda), or the same device code through its host launcher
// (cuda-host: every kernel body on OpenMP threads, for machines without a GPU, CI
// included). Plain C++: whether the CUDA backend was built is a fact of this build.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zbfs {

enum class Backend { kCpu, kCuda, kCudaHost };

std::string_view to_string(Backend backend);
std::optional<Backend> parse_backend(std::string_view text);

// How a distributed device search's messages travel between ranks (--device-exchange):
// - staged (the default): copied to host memory through pinned buffers and sent by the
//   Exchanger there, so every codec and route applies;
// - cuda-aware: straight from device memory through MPI calls (a CUDA-aware MPI library
//   reads and writes device buffers itself);
// - nccl: straight from device memory through NCCL's grouped sends and receives (NVLink
//   between a node's GPUs, the network between nodes).
// The last two are the device wires (device_wire.hpp).
enum class DeviceExchange { kStaged, kCudaAware, kNccl };

std::string_view to_string(DeviceExchange exchange);
std::optional<DeviceExchange> parse_device_exchange(std::string_view text);

// Who drives a one-process device search's levels (--level-loop):
// - host (the default): the host reads each level's counts (one wait a level), decides
//   the next direction and launches that level's kernels;
// - device: the device decides (the same DirectionPolicy, kept in device memory) and the
//   host enqueues each level's fixed sequence of launches one level ahead, never waiting
//   for a level before launching the next;
// - graph: as device, each level's launches captured once as a CUDA graph and replayed
//   (the host launcher has no graphs: it runs them as device does).
// Which costs less on a GPU is gpu-check's to measure (docs/gpu.md).
enum class LevelLoop { kHost, kDevice, kGraph };

std::string_view to_string(LevelLoop loop);
std::optional<LevelLoop> parse_level_loop(std::string_view text);

// Whether this build has the NCCL device wire (CMake found NCCL with CUDA and MPI).
bool nccl_built();

// Throws a usage error (one line, exit status 2) where `exchange` cannot serve `backend`
// in this build: a device wire with the CPU backend, nccl without NCCL or on the host
// launcher (NCCL moves device memory only). Whether the MPI library is CUDA-aware is
// device_wire.hpp's check.
void require_device_exchange(DeviceExchange exchange, Backend backend);

// Whether this build has the CUDA backend (CMake found nvcc, or -DZBFS_CUDA=ON).
bool cuda_backend_built();

// The device memory check, made before anything is allocated on the device: throws a
// usage error (exit status 2) when `needed` bytes exceed the device's `free` ones, unless
// `force` (the host's check of core/memory.hpp, for the device).
void require_device_memory(std::uint64_t needed, std::uint64_t free, std::uint64_t total, bool force);

// Whether a CUDA device is visible to this process (false on a build without CUDA).
bool cuda_device_visible();

// --backend cuda: makes `device` this process's device and creates its context before
// any phase is timed (kernel 1's timer included it before). Returns the seconds it took;
// 0 for the other backends, which have no device to open.
double open_device(Backend backend, int device);

// Device `device`'s PCI bus id ("0000:19:00.0"), where NVML finds its board's energy
// counter; "" without a visible device or on a build without CUDA.
std::string device_pci_bus_id(int device);

// The device a rank uses: rank `node_rank` of its node takes device node_rank % gpus,
// gpus being `gpus_per_node` or else every visible device. Throws a usage error when
// gpus_per_node exceeds the visible devices. Only for --backend cuda.
int device_for_rank(int node_rank, std::optional<int> gpus_per_node);
// How many of a node's `node_ranks` ranks use device `device` (device_for_rank's sharing):
// each of them may take that share of its free memory at once.
int ranks_sharing_device(int node_ranks, int device, std::optional<int> gpus_per_node);

// Throws a usage error (exit status 2, one line) when `backend` cannot run here: a CUDA
// backend on a build without CUDA, or cuda with no visible device. The first check is
// the same on every rank of a job; the second is this process's alone (a job's nodes
// may differ), so a job agrees on it (device_for_rank) before it may throw.
void require_backend_built(Backend backend);
void require_backend(Backend backend);

// Throws a usage error "--backend B WHY" (exit status 2): `backend` cannot run what was
// asked of it.
[[noreturn]] void refuse_backend(Backend backend, std::string_view why);

}  // namespace zbfs
