// Kernel bodies (launch.cuh) the device BFS and the device codecs share, over bitmaps of
// 64-bit words: a word's population, the populations stored for a scan, a bitmap's set
// positions written from that scan, and a list's positions set in a bitmap.
#pragma once

#include <cstdint>
#include <cuda/std/bit>

#include "zbfs/backend/cuda/launch.cuh"

namespace zbfs::cuda_backend {

// The population of word w (a reduction's transform).
struct WordPopulation {
  const std::uint64_t* words;
  ZBFS_HD std::uint64_t operator()(std::uint64_t w) const {
    return static_cast<std::uint64_t>(cuda::std::popcount(words[w]));
  }
};

// population[w] = the population of word w: the counts a scan turns into positions.
struct StorePopulation {
  const std::uint64_t* words;
  std::uint64_t* population;
  ZBFS_HD void operator()(std::uint64_t w) const {
    population[w] = static_cast<std::uint64_t>(cuda::std::popcount(words[w]));
  }
};

// Word w's set positions, plus `base`, to out[at[w]...] (at: the scan of the populations).
template <class T>
struct WritePositions {
  const std::uint64_t* words;
  const std::uint64_t* at;
  std::uint64_t base;
  T* out;
  ZBFS_HD void operator()(std::uint64_t w) const {
    std::uint64_t next = at[w];
    for (std::uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
      out[next++] = static_cast<T>(base + w * 64 + static_cast<std::uint64_t>(cuda::std::countr_zero(bits)));
    }
  }
};

// Sets bit (list[i] - base) of `words` for each index i; words shared, so atomically.
template <class T>
struct SetListedBits {
  const T* list;
  std::uint64_t base;
  std::uint64_t* words;
  ZBFS_HD void operator()(std::uint64_t i) const {
    const std::uint64_t p = static_cast<std::uint64_t>(list[i]) - base;
    shared_word(words[p / 64]).fetch_or(std::uint64_t{1} << (p % 64), cuda::std::memory_order_relaxed);
  }
};

}  // namespace zbfs::cuda_backend
