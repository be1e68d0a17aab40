// sort_adjacency_list: sorts one adjacency list, as kernel 1 does for every row after
// placing its entries (sort_and_deduplicate_lists: all of them). Short lists sort by comparisons; from kRadixFrom ids
// they sort by LSD radix on bytes, skipping the bytes that every id shares (the high ones of small graphs): a hub's
// list of a million ids takes a few linear passes instead of n log n comparisons, which made the shared build 1.2-1.4x
// faster at scales 20-24 (docs/performance.md). `scratch` (one per thread) grows to the longest list sorted by radix.
// Local, no MPI.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace zbfs {

inline constexpr std::size_t kRadixFrom = 1024;

template <class V>
void sort_adjacency_list(V* first, V* last, std::vector<V>& scratch) {
  const auto length = static_cast<std::size_t>(last - first);
  if (length < kRadixFrom) {
    std::sort(first, last);
    return;
  }
  constexpr std::size_t kBytes = sizeof(V);
  std::array<std::array<std::uint64_t, 256>, kBytes> counts{};
  for (const V* p = first; p != last; ++p) {
    for (std::size_t b = 0; b < kBytes; ++b) ++counts[b][(*p >> (8 * b)) & 0xff];
  }
  if (scratch.size() < length) scratch.resize(length);
  V* from = first;
  V* to = scratch.data();
  for (std::size_t b = 0; b < kBytes; ++b) {
    std::array<std::uint64_t, 256>& count = counts[b];
    if (count[(*first >> (8 * b)) & 0xff] == length) continue;  // every id has this byte
    std::uint64_t at = 0;
    for (std::uint64_t& c : count) {
      const std::uint64_t here = c;
      c = at;
      at += here;
    }
    for (const V* p = from; p != from + length; ++p) to[count[(*p >> (8 * b)) & 0xff]++] = *p;
    std::swap(from, to);
  }
  if (from != first) std::copy(from, from + length, first);
}

// Sorts and deduplicates every row's list in place (row r's ids at adj[off[r],
// off[r + 1])), OpenMP parallel, and hands each row's duplicate-free length to
// record(r, length).
template <class V, class Record>
void sort_and_deduplicate_lists(V* adj, const std::uint64_t* off, std::uint64_t rows, const Record& record) {
  const auto count = static_cast<std::int64_t>(rows);
#pragma omp parallel
  {
    std::vector<V> scratch;
#pragma omp for schedule(dynamic, 1024)
    for (std::int64_t r = 0; r < count; ++r) {
      V* first = adj + off[r];
      V* last = adj + off[r + 1];
      sort_adjacency_list(first, last, scratch);
      record(static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(std::unique(first, last) - first));
    }
  }
}

// The same for lists with a weight beside each entry (32-bit ids): each list sorted by
// neighbour, and of entries with the same neighbour (duplicate tuples) the lightest kept,
// its weight beside it; record(row, kept length) as above. Weights must not be negative:
// an entry travels as (neighbour << 32 | weight bits), whose order is then the weights'
// (a -0 weight is stored as +0, which it equals).
template <class Record>
void sort_and_deduplicate_weighted_lists(std::uint32_t* adj, float* weights, const std::uint64_t* off,
                                         std::uint64_t rows, const Record& record) {
  const auto count = static_cast<std::int64_t>(rows);
#pragma omp parallel
  {
    std::vector<std::uint64_t> packed;
    std::vector<std::uint64_t> scratch;
#pragma omp for schedule(dynamic, 1024)
    for (std::int64_t r = 0; r < count; ++r) {
      const std::uint64_t first = off[r];
      const std::uint64_t length = off[r + 1] - first;
      packed.resize(length);
      for (std::uint64_t k = 0; k < length; ++k) {
        const float w = weights[first + k] + 0.0f;  // -0 becomes +0
        packed[k] = std::uint64_t{adj[first + k]} << 32 | std::bit_cast<std::uint32_t>(w);
      }
      sort_adjacency_list(packed.data(), packed.data() + length, scratch);
      std::uint64_t kept = 0;
      for (std::uint64_t k = 0; k < length; ++k) {
        const auto neighbour = static_cast<std::uint32_t>(packed[k] >> 32);
        if (kept > 0 && adj[first + kept - 1] == neighbour) continue;  // a heavier duplicate
        adj[first + kept] = neighbour;
        weights[first + kept] = std::bit_cast<float>(static_cast<std::uint32_t>(packed[k]));
        ++kept;
      }
      record(static_cast<std::uint64_t>(r), kept);
    }
  }
}

}  // namespace zbfs
