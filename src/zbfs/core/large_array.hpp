// LargeArray<T>: a move-only array of trivially copyable elements backed by anonymous
// mmap. Pages are zero and untouched until written (no value-initialisation pass over
// gigabytes), and shrink() returns the tail to the OS without copying, which keeps the
// peak memory of in-place graph construction at its minimum. Arrays of 4 MiB and more
// are 2 MiB aligned and advised to use transparent huge pages: BFS and construction
// access them at random, and with 4 KiB pages nearly every access misses the TLB.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "zbfs/core/error.hpp"

namespace zbfs {

template <class T>
class LargeArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  LargeArray() = default;
  explicit LargeArray(std::size_t size) : size_(size) {
    if (size == 0) return;
    bytes_ = round_to_page(size * sizeof(T));
    const bool huge = bytes_ >= 2 * kHugePage;
    // Reserve one huge page more than needed so that an aligned start exists, then trim.
    const std::size_t reserved = huge ? bytes_ + kHugePage : bytes_;
    void* p = mmap(nullptr, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      bytes_ = 0;
      size_ = 0;
      throw Error(ExitCode::kFailure, "cannot allocate " + std::to_string(size * sizeof(T)) + " bytes");
    }
    char* base = static_cast<char*>(p);
    if (huge) {
      const auto address = reinterpret_cast<std::uintptr_t>(base);
      const std::size_t head = (kHugePage - address % kHugePage) % kHugePage;
      if (head > 0) munmap(base, head);
      if (kHugePage - head > 0) munmap(base + head + bytes_, kHugePage - head);
      base += head;
      madvise(base, bytes_, MADV_HUGEPAGE);
    }
    data_ = reinterpret_cast<T*>(base);
  }
  LargeArray(const LargeArray&) = delete;
  LargeArray& operator=(const LargeArray&) = delete;
  LargeArray(LargeArray&& other) noexcept { swap(other); }
  LargeArray& operator=(LargeArray&& other) noexcept {
    LargeArray(std::move(other)).swap(*this);
    return *this;
  }
  ~LargeArray() {
    if (data_ != nullptr) munmap(data_, bytes_);
  }

  void swap(LargeArray& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(bytes_, other.bytes_);
  }

  // Keeps the first new_size elements and unmaps the whole pages after them.
  void shrink(std::size_t new_size) {
    if (new_size >= size_) return;
    const std::size_t keep = round_to_page(new_size * sizeof(T));
    if (keep < bytes_) {
      munmap(reinterpret_cast<char*>(data_) + keep, bytes_ - keep);
      bytes_ = keep;
    }
    size_ = new_size;
    if (bytes_ == 0) data_ = nullptr;
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  [[nodiscard]] std::span<T> span() noexcept { return {data_, size_}; }
  [[nodiscard]] std::span<const T> span() const noexcept { return {data_, size_}; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }

 private:
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static std::size_t round_to_page(std::size_t bytes) {
    constexpr std::size_t kPage = 4096;
    return (bytes + kPage - 1) / kPage * kPage;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace zbfs
