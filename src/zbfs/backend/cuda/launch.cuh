// The device backend's execution layer, one source for both targets (execution_target.hpp):
// - for_each_index runs a kernel body over [0, count): as a CUDA grid (grid-stride loop)
//   or on OpenMP threads. A body is a functor with a __host__ __device__ call operator
//   that touches only memory of its target and shares words through cuda::atomic_ref,
//   which libcu++ implements on the host too. Nothing block- or warp-level: the host
//   launcher has no blocks, so a body must be correct for any order of its indices.
// - for_each_index_up_to does the same over a count that lies in target memory (known
//   only to the device when the launch runs).
// - on_policy hands a Thrust algorithm the target's execution policy (the CUDA system on
//   the backend's stream, or the OpenMP system); on_policy_async, reduce_into and
//   sum_into leave results in target memory without waiting for the device.
// - DeviceArray<T>: RAII memory of the target (cudaMalloc / host allocation), with copies
//   from and to host memory.
// CUDA errors become zbfs::Error (exit status 1) with the call that failed.
#pragma once

#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system/omp/execution_policy.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cub/device/device_reduce.cuh>
#include <cuda/atomic>
#include <cuda/std/functional>
#include <memory>
#include <string>
#include <utility>

#include "zbfs/backend/execution_target.hpp"
#include "zbfs/core/error.hpp"

#define ZBFS_HD __host__ __device__

namespace zbfs::cuda_backend {

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error(ExitCode::kFailure, std::string("CUDA: ") + what + ": " + cudaGetErrorString(status));
  }
}

// A word of a bitmap or a counter shared by concurrent bodies.
template <class T>
ZBFS_HD inline cuda::atomic_ref<T, cuda::thread_scope_device> shared_word(T& word) {
  return cuda::atomic_ref<T, cuda::thread_scope_device>(word);
}

// A count a launch or a body reads: known to the host when it launched (FixedCount), or
// lying in target memory, written by an earlier launch on the stream (CountAt).
struct FixedCount {
  std::uint64_t count;
  ZBFS_HD std::uint64_t operator()() const { return count; }
};
struct CountAt {
  const std::uint64_t* at;
  ZBFS_HD std::uint64_t operator()() const { return *at; }
};

template <class Count, class Body>
__global__ void index_kernel(Count count, Body body) {
  const std::uint64_t n = count();
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    body(i);
  }
}

// Thrust's temporary storage on the device (a scan's, a reduction's), kept between calls:
// Thrust otherwise allocates and frees it with cudaMalloc around every algorithm, which
// costs tens of microseconds and synchronizes the device each time, several times per
// BFS level. One cached block serves the calls in turn; a request while it is out gets a
// block of its own.
class TemporaryStorage {
 public:
  using value_type = char;
  TemporaryStorage() = default;
  ~TemporaryStorage() {
    if (cached_ != nullptr) cudaFree(cached_);
  }
  TemporaryStorage(const TemporaryStorage&) = delete;
  TemporaryStorage& operator=(const TemporaryStorage&) = delete;

  char* allocate(std::ptrdiff_t bytes) {
    const auto wanted = static_cast<std::size_t>(bytes);
    if (!lent_) {
      if (wanted > capacity_) {
        if (cached_ != nullptr) cudaFree(cached_);
        cached_ = nullptr;
        capacity_ = 0;
        check_cuda(cudaMalloc(reinterpret_cast<void**>(&cached_), wanted), "cudaMalloc (temporary storage)");
        capacity_ = wanted;
      }
      lent_ = true;
      return cached_;
    }
    char* own = nullptr;
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&own), wanted), "cudaMalloc (temporary storage)");
    return own;
  }
  void deallocate(char* block, std::size_t) {
    if (block == cached_) {
      lent_ = false;
    } else {
      cudaFree(block);
    }
  }

 private:
  char* cached_ = nullptr;
  std::size_t capacity_ = 0;
  bool lent_ = false;
};

// The backend's CUDA stream (the default stream on the host target, never used there).
class Stream {
 public:
  explicit Stream(ExecutionTarget target) : target_(target) {
    if (target_ == ExecutionTarget::kDevice) check_cuda(cudaStreamCreate(&stream_), "cudaStreamCreate");
  }
  ~Stream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  [[nodiscard]] ExecutionTarget target() const { return target_; }
  [[nodiscard]] cudaStream_t get() const { return stream_; }
  void synchronize() const {
    if (target_ == ExecutionTarget::kDevice) check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  // Thrust algorithms on the stream take their temporary storage from here.
  [[nodiscard]] TemporaryStorage& temporary_storage() const { return storage_; }

 private:
  ExecutionTarget target_;
  cudaStream_t stream_ = nullptr;
  mutable TemporaryStorage storage_;
};

// Copies bytes between host memory and the stream's target (or within the target): on
// the device, finished before returning unless device to device (host memory handed in
// may be pageable and reused at once); on the host target, a memcpy.
inline void copy_bytes(const Stream& stream, void* to, const void* from, std::uint64_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return;
  if (stream.target() == ExecutionTarget::kDevice) {
    check_cuda(cudaMemcpyAsync(to, from, bytes, kind, stream.get()), "cudaMemcpyAsync");
    if (kind != cudaMemcpyDeviceToDevice) stream.synchronize();
  } else {
    std::memcpy(to, from, bytes);
  }
}

// The launch behind for_each_index and for_each_index_up_to: `blocks` blocks of kThreadsPerBlock
// on the device, each thread striding to count(); or count() indices on OpenMP threads.
constexpr unsigned kThreadsPerBlock = 256;

template <class Count, class Body>
void launch_indices(const Stream& stream, Count count, unsigned blocks, const Body& body) {
  if (stream.target() == ExecutionTarget::kDevice) {
    index_kernel<<<blocks, kThreadsPerBlock, 0, stream.get()>>>(count, body);
    check_cuda(cudaGetLastError(), "kernel launch");
    return;
  }
  const auto n = static_cast<std::int64_t>(count());
#pragma omp parallel for schedule(dynamic, 1024)
  for (std::int64_t i = 0; i < n; ++i) body(static_cast<std::uint64_t>(i));
}

// Blocks for `indices` indices, at most `cap`.
inline unsigned blocks_for(std::uint64_t indices, std::uint64_t cap) {
  const std::uint64_t blocks = (indices + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(blocks < cap ? blocks : cap);
}

template <class Body>
void for_each_index(const Stream& stream, std::uint64_t count, const Body& body) {
  if (count == 0) return;
  launch_indices(stream, FixedCount{count}, blocks_for(count, std::uint64_t{1} << 20), body);
}

// for_each_index over [0, *count), where *count lies in target memory and is written by
// an earlier launch on the stream (a device-driven level's sizes: the host never reads
// them): on the device a fixed grid, as many blocks as `most` indices need up to
// kCountedBlocks (a few waves of an H100's resident threads), each thread striding to
// *count, so a count of 0 costs one small launch; on the host target *count is read when
// the launch runs.
template <class Body>
void for_each_index_up_to(const Stream& stream, const std::uint64_t* count, std::uint64_t most, const Body& body) {
  if (most == 0) return;
  constexpr std::uint64_t kCountedBlocks = 2048;
  launch_indices(stream, CountAt{count}, blocks_for(most, kCountedBlocks), body);
}

// algorithm(policy) with the stream's Thrust execution policy.
template <class Algorithm>
auto on_policy(const Stream& stream, Algorithm&& algorithm) {
  if (stream.target() == ExecutionTarget::kDevice) {
    return algorithm(thrust::cuda::par(stream.temporary_storage()).on(stream.get()));
  }
  return algorithm(thrust::omp::par);
}

// The same for work whose result stays in target memory until a later step reads it: on
// the device Thrust's par_nosync, which may return before the kernels are done (the
// stream keeps them in order, and the temporary storage is handed out again only on
// it), so that a step waits for the device once, where it reads its counts; the host
// target runs it at once.
template <class Algorithm>
void on_policy_async(const Stream& stream, TemporaryStorage& storage, Algorithm&& algorithm) {
  if (stream.target() == ExecutionTarget::kDevice) {
    algorithm(thrust::cuda::par_nosync(storage).on(stream.get()));
    return;
  }
  algorithm(thrust::omp::par);
}
template <class Algorithm>
void on_policy_async(const Stream& stream, Algorithm&& algorithm) {
  on_policy_async(stream, stream.temporary_storage(), std::forward<Algorithm>(algorithm));
}

// *out = values[0, count) folded by `op` from `init` (an iterator of T), written in target
// memory without waiting for it: CUB's device reduction on the stream with its temporary
// storage from `storage`, or on the host at once.
template <class Values, class T, class Op>
void reduce_into(const Stream& stream, TemporaryStorage& storage, Values values, std::uint64_t count, T* out, Op op,
                 T init) {
  if (stream.target() == ExecutionTarget::kHost) {
    *out = thrust::reduce(thrust::omp::par, values, values + count, init, op);
    return;
  }
  std::size_t bytes = 0;
  check_cuda(cub::DeviceReduce::Reduce(nullptr, bytes, values, out, count, op, init, stream.get()),
             "cub::DeviceReduce::Reduce");
  char* temporary = storage.allocate(static_cast<std::ptrdiff_t>(bytes > 0 ? bytes : 1));
  const cudaError_t status = cub::DeviceReduce::Reduce(temporary, bytes, values, out, count, op, init, stream.get());
  storage.deallocate(temporary, bytes);
  check_cuda(status, "cub::DeviceReduce::Reduce");
}

// *out = the sum of values[0, count) (an iterator of 64-bit values), the same way.
template <class Values>
void sum_into(const Stream& stream, Values values, std::uint64_t count, std::uint64_t* out) {
  reduce_into(stream, stream.temporary_storage(), values, count, out, cuda::std::plus<std::uint64_t>(),
              std::uint64_t{0});
}

// Pinned (page-locked) host memory through which a step's transfers are staged: the copy
// engine moves pinned memory at the link's full rate, while a pageable buffer goes
// through the driver's own bounce buffer. Grown on demand; on the host target nothing
// is staged (plain memcpy).
class PinnedStaging {
 public:
  explicit PinnedStaging(ExecutionTarget target) : target_(target) {}
  ~PinnedStaging() {
    if (buffer_ != nullptr) cudaFreeHost(buffer_);
  }
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;

  // Host memory `to` <- target memory `from`.
  void to_host(const Stream& stream, void* to, const void* from, std::uint64_t bytes) {
    if (target_ == ExecutionTarget::kHost || bytes == 0)
      return copy_bytes(stream, to, from, bytes, cudaMemcpyDeviceToHost);
    reserve(bytes);
    copy_bytes(stream, buffer_, from, bytes, cudaMemcpyDeviceToHost);
    std::memcpy(to, buffer_, bytes);
  }
  // Target memory `to` <- host memory `from`.
  void to_target(const Stream& stream, void* to, const void* from, std::uint64_t bytes) {
    if (target_ == ExecutionTarget::kHost || bytes == 0)
      return copy_bytes(stream, to, from, bytes, cudaMemcpyHostToDevice);
    reserve(bytes);
    std::memcpy(buffer_, from, bytes);
    copy_bytes(stream, to, buffer_, bytes, cudaMemcpyHostToDevice);
  }

 private:
  void reserve(std::uint64_t bytes) {
    if (bytes <= capacity_) return;
    if (buffer_ != nullptr) cudaFreeHost(buffer_);
    buffer_ = nullptr;
    capacity_ = 0;
    const std::uint64_t grown = bytes + bytes / 4;
    check_cuda(cudaMallocHost(&buffer_, grown), "cudaMallocHost");
    capacity_ = grown;
  }

  ExecutionTarget target_;
  void* buffer_ = nullptr;
  std::uint64_t capacity_ = 0;
};

// Exclusive scan of counts[0, count) in place, in the target's memory (counts has room
// for count + 1): counts[count] becomes the total, which is returned (8 bytes copied to
// the host, added to `to_host`).
inline std::uint64_t scan_counts(const Stream& stream, std::uint64_t* counts, std::uint64_t count,
                                 std::uint64_t& to_host) {
  on_policy(stream, [&](auto policy) {
    thrust::fill(policy, counts + count, counts + count + 1, std::uint64_t{0});
    thrust::exclusive_scan(policy, counts, counts + count + 1, counts);
  });
  std::uint64_t total = 0;
  copy_bytes(stream, &total, counts + count, 8, cudaMemcpyDeviceToHost);
  to_host += 8;
  return total;
}

template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(ExecutionTarget target, std::uint64_t size) : target_(target), size_(size) {
    if (size == 0) return;
    if (target == ExecutionTarget::kDevice) {
      check_cuda(cudaMalloc(reinterpret_cast<void**>(&data_), size * sizeof(T)), "cudaMalloc");
    } else {
      data_ = static_cast<T*>(::operator new (size * sizeof(T), std::align_val_t{64}));
    }
  }
  ~DeviceArray() { release(); }
  DeviceArray(DeviceArray&& other) noexcept
      : target_(other.target_), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    if (this != &other) {
      release();
      target_ = other.target_;
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  [[nodiscard]] T* data() const { return data_; }
  [[nodiscard]] std::uint64_t size() const { return size_; }
  [[nodiscard]] std::uint64_t bytes() const { return size_ * sizeof(T); }

  // Copies `count` elements from host memory to [at, at + count); returns the bytes moved.
  std::uint64_t upload(const Stream& stream, const T* host, std::uint64_t count, std::uint64_t at = 0) {
    copy(stream, data_ + at, host, count * sizeof(T), cudaMemcpyHostToDevice);
    return count * sizeof(T);
  }
  std::uint64_t download(const Stream& stream, T* host, std::uint64_t count, std::uint64_t at = 0) const {
    copy(stream, host, data_ + at, count * sizeof(T), cudaMemcpyDeviceToHost);
    return count * sizeof(T);
  }
  // Copies all of `other` (of the same target and size) into this array.
  void assign(const Stream& stream, const DeviceArray& other) {
    copy(stream, data_, other.data_, other.bytes(), cudaMemcpyDeviceToDevice);
  }

 private:
  static void copy(const Stream& stream, void* to, const void* from, std::uint64_t bytes, cudaMemcpyKind kind) {
    copy_bytes(stream, to, from, bytes, kind);
  }
  void release() noexcept {
    if (data_ == nullptr) return;
    if (target_ == ExecutionTarget::kDevice) {
      cudaFree(data_);
    } else {
      ::operator delete (data_, std::align_val_t{64});
    }
    data_ = nullptr;
  }

  ExecutionTarget target_ = ExecutionTarget::kHost;
  T* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace zbfs::cuda_backend
