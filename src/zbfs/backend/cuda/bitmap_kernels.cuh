// What the device BFS kernels and the device codecs share (launch.cuh's kernel bodies and
// helpers), over bitmaps of 64-bit words: bit tests and claims, a word's population, the
// populations stored for a scan, a bitmap's set positions written from that scan, a
// list's positions set in a bitmap; sums and the tallest tree over a word's bits; and the
// edge-balanced step's search for the frontier entry an edge index belongs to.
#pragma once

#include <cstdint>
#include <cuda/std/bit>

#include "zbfs/backend/cuda/launch.cuh"

namespace zbfs::cuda_backend {

ZBFS_HD inline std::uint64_t bit_of(std::uint64_t v) { return std::uint64_t{1} << (v & 63); }
ZBFS_HD inline bool test_bit(const std::uint64_t* words, std::uint64_t v) { return (words[v >> 6] & bit_of(v)) != 0; }
// Test-and-set of a bit other bodies may set too: true when this call set it. A plain
// look first, since most claims of a busy step find the bit set already.
ZBFS_HD inline bool claim_bit(std::uint64_t* words, std::uint64_t v) {
  auto word = shared_word(words[v >> 6]);
  const std::uint64_t mask = bit_of(v);
  if ((word.load(cuda::std::memory_order_relaxed) & mask) != 0) return false;
  return (word.fetch_or(mask, cuda::std::memory_order_relaxed) & mask) == 0;
}

// The sum of value(v) over the set bits v of word w (a reduction's transform): a level's
// edges, by a degree table or by the lists' offsets.
template <class Value>
struct WordSum {
  const std::uint64_t* words;
  Value value;
  ZBFS_HD std::uint64_t operator()(std::uint64_t w) const {
    std::uint64_t sum = 0;
    for (std::uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
      sum += value(w * 64 + static_cast<std::uint64_t>(cuda::std::countr_zero(bits)));
    }
    return sum;
  }
};
// Vertex v's degree, from a table or from the lists' offsets.
struct TableDegree {
  const std::uint64_t* degree;
  ZBFS_HD std::uint64_t operator()(std::uint64_t v) const { return degree[v]; }
};
struct ListDegree {
  const std::uint64_t* offsets;
  ZBFS_HD std::uint64_t operator()(std::uint64_t v) const { return offsets[v + 1] - offsets[v]; }
};

// A pruned search's depth: the tallest tree (height per vertex) hanging below the set
// bits of word w (a reduction's transform, with Larger).
struct WordHeight {
  const std::uint64_t* bits;
  const std::uint8_t* height;
  ZBFS_HD std::uint32_t operator()(std::uint64_t w) const {
    std::uint32_t tallest = 0;
    for (std::uint64_t b = bits[w]; b != 0; b &= b - 1) {
      const std::uint32_t h = height[w * 64 + static_cast<std::uint64_t>(cuda::std::countr_zero(b))];
      tallest = h > tallest ? h : tallest;
    }
    return tallest;
  }
};

struct Larger {
  ZBFS_HD std::uint32_t operator()(std::uint32_t a, std::uint32_t b) const { return a > b ? a : b; }
};

// Edge-balanced steps give every edge of a frontier an index: `scan` holds the exclusive
// scan of the frontier's `count` degrees, and edge e belongs to the last entry whose scan
// is at most e (an entry without edges never is: the next one has the same scan).
ZBFS_HD inline std::uint64_t entry_of_edge(const std::uint64_t* scan, std::uint64_t count, std::uint64_t e) {
  std::uint64_t lo = 0;
  std::uint64_t hi = count;
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (scan[mid] <= e) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

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
