// Which kernels run a benchmark's searches (--backend): the CPU's (the default), the
// CUDA device backend on a GPU (cuda), or the same device code through its host launcher
// (cuda-host: every kernel body on OpenMP threads, for machines without a GPU, CI
// included). Plain C++: whether the CUDA backend was built is a fact of this build.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace zbfs {

enum class Backend { kCpu, kCuda, kCudaHost };

std::string_view to_string(Backend backend);
std::optional<Backend> parse_backend(std::string_view text);

// Whether this build has the CUDA backend (CMake found nvcc, or -DZBFS_CUDA=ON).
bool cuda_backend_built();

// The device memory check, made before anything is allocated on the device: throws a
// usage error (exit status 2) when `needed` bytes exceed the device's `free` ones, unless
// `force` (the host's check of core/memory.hpp, for the device).
void require_device_memory(std::uint64_t needed, std::uint64_t free, std::uint64_t total, bool force);

// Whether a CUDA device is visible to this process (false on a build without CUDA).
bool cuda_device_visible();

// The device a rank uses: rank `node_rank` of its node takes device node_rank % gpus,
// gpus being `gpus_per_node` or else every visible device. Throws a usage error when
// gpus_per_node exceeds the visible devices. Only for --backend cuda.
int device_for_rank(int node_rank, std::optional<int> gpus_per_node);

// Throws a usage error (exit status 2, one line) when `backend` cannot run here: a CUDA
// backend on a build without CUDA, or cuda with no visible device. The first check is
// the same on every rank of a job; the second is this process's alone (a job's nodes
// may differ), so a job agrees on it (device_for_rank) before it may throw.
void require_backend_built(Backend backend);
void require_backend(Backend backend);

}  // namespace zbfs
