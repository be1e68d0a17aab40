// The placement step of kernel 1, shared by the plain and the compressed builders: both
// directions of every input tuple that is not a self-loop go to their row's list, at the
// row's insertion cursor. A builder says which rows it places (all of them, or one range
// of a pass) and how a column id is written (the degree order's id), so that each entry
// is translated once, however many passes the build takes. Local, OpenMP parallel.
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/core/input_edges.hpp"
#include "zbfs/core/large_array.hpp"

namespace zbfs {

// In-place exclusive prefix sum of counts[0..n), parallel over thread blocks; returns the total.
inline std::uint64_t exclusive_prefix_sum(std::uint64_t* counts, std::uint64_t n) {
  const int max_threads = omp_get_max_threads();
  std::vector<std::uint64_t> block_sums(static_cast<std::size_t>(max_threads) + 1, 0);
  int used_threads = 1;
#pragma omp parallel
  {
    const int threads = omp_get_num_threads();
    const int t = omp_get_thread_num();
#pragma omp single
    used_threads = threads;
    const std::uint64_t begin = n * static_cast<std::uint64_t>(t) / static_cast<std::uint64_t>(threads);
    const std::uint64_t end = n * static_cast<std::uint64_t>(t + 1) / static_cast<std::uint64_t>(threads);
    std::uint64_t sum = 0;
    for (std::uint64_t i = begin; i < end; ++i) sum += counts[i];
    block_sums[static_cast<std::size_t>(t) + 1] = sum;
#pragma omp barrier
#pragma omp single
    for (int i = 0; i < threads; ++i)
      block_sums[static_cast<std::size_t>(i) + 1] += block_sums[static_cast<std::size_t>(i)];
    std::uint64_t running = block_sums[static_cast<std::size_t>(t)];
    for (std::uint64_t i = begin; i < end; ++i) {
      const std::uint64_t c = counts[i];
      counts[i] = running;
      running += c;
    }
  }
  return block_sums[static_cast<std::size_t>(used_threads)];
}

// Each vertex's input tuple degree (both ends of every tuple that is not a self-loop
// count), in n + 1 entries, the last zero. A produced list's ids are checked here, once:
// the passes after this one trust them.
inline LargeArray<std::uint64_t> count_tuple_degrees(const InputEdges& edges) {
  const std::uint64_t n = edges.num_vertices();
  LargeArray<std::uint64_t> counts(n + 1);
  std::uint64_t* count = counts.data();
  const std::uint64_t outside = for_each_chunk(edges, [&](std::uint64_t, std::span<const Edge> part) {
    std::uint64_t wrong = 0;
    for (const Edge& e : part) {
      if (e.u == e.v) continue;
      if (e.u >= n || e.v >= n) {
        ++wrong;
        continue;
      }
      std::atomic_ref<std::uint64_t>(count[e.u]).fetch_add(1, std::memory_order_relaxed);
      std::atomic_ref<std::uint64_t>(count[e.v]).fetch_add(1, std::memory_order_relaxed);
    }
    return wrong;
  });
  if (outside != 0) {
    throw Error(ExitCode::kFailure, "an input tuple names a vertex outside the " + std::to_string(n) + " vertices");
  }
  return counts;
}

// What a row function returns for a vertex whose list this placement does not build.
inline constexpr std::uint64_t kNotPlaced = ~std::uint64_t{0};

// From this many rows (8 MiB of cursors, more than a core's share of a typical L3), the
// placement goes by blocks: below it the direct one is faster, above it the blocked one
// (docs/performance.md).
inline constexpr std::uint64_t kBlockedFromRows = std::uint64_t{1} << 21;

// Tuples per round of the blocked placement: a round's entries (two per tuple, a row and
// a column each) wait in two buffers of 2 * 2^21 entries, 32 MiB each for 32-bit ids,
// whatever the graph's size.
inline constexpr std::uint64_t kRoundTuples = std::uint64_t{1} << 21;

// Bytes the blocked placement's round buffers take (zero below kBlockedFromRows rows).
inline std::uint64_t placement_buffer_bytes(std::uint64_t rows, std::uint64_t tuples, unsigned vertex_bytes) {
  return rows >= kBlockedFromRows ? 2 * 2 * std::min(tuples, kRoundTuples) * 2 * vertex_bytes : 0;
}
// What placing weights too adds to them: a float beside every buffered entry.
inline std::uint64_t weighted_placement_buffer_bytes(std::uint64_t rows, std::uint64_t tuples) {
  return rows >= kBlockedFromRows ? 2 * 2 * std::min(tuples, kRoundTuples) * sizeof(float) : 0;
}

namespace placement_detail {

// Vertices per block of the blocked placement: their insertion cursors (8 bytes each)
// fill 512 KiB, which stays in a core's L2 while the block's lists are written.
inline constexpr int kBlockBits = 16;

// Tuple by tuple: the fastest way while the cursors stay in cache. Slots are claimed for
// a group of edges before any is written: a locked fetch_add is a full barrier on x86,
// and interleaving it with the scattered stores would make every store's cache miss wait
// for the previous one instead of overlapping.
// With `weights` (kWeighted), each entry's tuple weight goes to the same slot there.
template <bool kWeighted, class V, class Row, class Column>
void place_direct(const InputEdges& edges, const Row& row, const Column& column, std::uint64_t* off, V* adj,
                  float* weights) {
  constexpr std::size_t kGroup = 64;
  visit_chunks<kWeighted>(edges, [&](std::uint64_t, std::span<const Edge> part, auto... tuple_weights) {
    for (std::size_t first = 0; first < part.size(); first += kGroup) {
      const std::size_t last = std::min(part.size(), first + kGroup);
      std::array<std::uint64_t, 2 * kGroup> slot{};
      std::array<V, 2 * kGroup> value{};
      std::array<float, kWeighted ? 2 * kGroup : 0> weight{};
      std::size_t count = 0;
      for (std::size_t i = first; i < last; ++i) {
        const Edge e = part[i];
        if (e.u == e.v) continue;
        if (const std::uint64_t r = row(e.u); r != kNotPlaced) {
          slot[count] = std::atomic_ref<std::uint64_t>(off[r]).fetch_add(1, std::memory_order_relaxed);
          if constexpr (kWeighted) weight[count] = (tuple_weights[i], ...);
          value[count++] = static_cast<V>(column(e.v));
        }
        if (const std::uint64_t r = row(e.v); r != kNotPlaced) {
          slot[count] = std::atomic_ref<std::uint64_t>(off[r]).fetch_add(1, std::memory_order_relaxed);
          if constexpr (kWeighted) weight[count] = (tuple_weights[i], ...);
          value[count++] = static_cast<V>(column(e.u));
        }
      }
      for (std::size_t k = 0; k < count; ++k) adj[slot[k]] = value[k];
      if constexpr (kWeighted) {
        for (std::size_t k = 0; k < count; ++k) weights[slot[k]] = weight[k];
      }
    }
    return std::uint64_t{0};
  });
}

// Writing each entry straight to its row, as tuples come, misses the cache twice per entry
// (the cursor and the slot) once the rows outgrow it, and the misses grow with the graph.
// So tuples go in rounds: a round's entries are translated in tuple order (one lookup per
// id, streaming writes), then sorted into blocks of 2^kBlockBits rows by a counting pass
// (one write stream per block), and then each block's entries are placed by one thread,
// its cursors in cache and its slots within the block's lists, and without atomics, since
// no two threads share a block.
template <class V>
struct PlainEntry {
  V row;
  V column;
};
template <class V>
struct WeightedEntry {
  V row;
  V column;
  float weight;
};

template <bool kWeighted, class V, class Row, class Column>
void place_blocked(const InputEdges& edges, std::uint64_t rows, const Row& row, const Column& column,
                   std::uint64_t* off, V* adj, float* weights) {
  using Entry = std::conditional_t<kWeighted, WeightedEntry<V>, PlainEntry<V>>;
  const std::uint64_t m = edges.size();
  const std::uint64_t blocks = ((rows - 1) >> kBlockBits) + 1;
  const int threads = omp_get_max_threads();
  const std::uint64_t round_tuples = std::min(m, kRoundTuples);
  LargeArray<Entry> translated(2 * round_tuples);
  LargeArray<Entry> by_block(2 * round_tuples);
  Entry* in = translated.data();
  Entry* out = by_block.data();
  // counts[t * (blocks + 1) + b]: thread t's entries for block b in this round, then where
  // they go in `by_block`.
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(threads) * (blocks + 1));
  std::vector<std::uint64_t> block_start(blocks + 1);
  std::vector<std::vector<Edge>> chunks(static_cast<std::size_t>(threads), std::vector<Edge>(InputEdges::kChunk));
  std::vector<std::vector<float>> chunk_weights(static_cast<std::size_t>(threads),
                                                std::vector<float>(kWeighted ? InputEdges::kChunk : 0));
  for (std::uint64_t first = 0; first < m; first += round_tuples) {
    const std::uint64_t last = std::min(m, first + round_tuples);
    std::fill(counts.begin(), counts.end(), 0);
#pragma omp parallel num_threads(threads)
    {
      const auto t = static_cast<std::uint64_t>(omp_get_thread_num());
      const auto team = static_cast<std::uint64_t>(omp_get_num_threads());
      const std::uint64_t span = last - first;
      const std::uint64_t begin = first + span * t / team;
      const std::uint64_t end = first + span * (t + 1) / team;
      std::uint64_t* mine = counts.data() + t * (blocks + 1);
      std::vector<Edge>& chunk = chunks[t];
      // Thread t's entries start at twice its first tuple's place in the round.
      Entry* translated_here = in + 2 * (begin - first);
      std::uint64_t count = 0;
      for (std::uint64_t at = begin; at < end; at += InputEdges::kChunk) {
        const std::span<Edge> part(chunk.data(), std::min(InputEdges::kChunk, end - at));
        edges.read(at, part);
        const std::span<float> part_weights(chunk_weights[t].data(), kWeighted ? part.size() : 0);
        if constexpr (kWeighted) edges.read_weights(at, part_weights);
        // Tuple i's entry in row r, for neighbour w.
        const auto entry = [&](std::uint64_t r, std::uint64_t w, std::size_t i) {
          if constexpr (kWeighted) {
            return Entry{static_cast<V>(r), static_cast<V>(column(w)), part_weights[i]};
          } else {
            return Entry{static_cast<V>(r), static_cast<V>(column(w))};
          }
        };
        for (std::size_t i = 0; i < part.size(); ++i) {
          const Edge e = part[i];
          if (e.u == e.v) continue;
          if (const std::uint64_t r = row(e.u); r != kNotPlaced) {
            translated_here[count++] = entry(r, e.v, i);
            ++mine[r >> kBlockBits];
          }
          if (const std::uint64_t r = row(e.v); r != kNotPlaced) {
            translated_here[count++] = entry(r, e.u, i);
            ++mine[r >> kBlockBits];
          }
        }
      }
#pragma omp barrier
#pragma omp single
      {
        // Block by block, thread by thread: each block's entries end up together.
        std::uint64_t at = 0;
        for (std::uint64_t b = 0; b < blocks; ++b) {
          block_start[b] = at;
          for (std::uint64_t u = 0; u < team; ++u) {
            const std::uint64_t c = counts[u * (blocks + 1) + b];
            counts[u * (blocks + 1) + b] = at;
            at += c;
          }
        }
        block_start[blocks] = at;
      }
      for (std::uint64_t k = 0; k < count; ++k) {
        const Entry entry = translated_here[k];
        out[mine[entry.row >> kBlockBits]++] = entry;
      }
#pragma omp barrier
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t b = 0; b < static_cast<std::int64_t>(blocks); ++b) {
        const auto block = static_cast<std::size_t>(b);
        for (std::uint64_t k = block_start[block]; k < block_start[block + 1]; ++k) {
          const std::uint64_t slot = off[out[k].row]++;
          adj[slot] = out[k].column;
          if constexpr (kWeighted) weights[slot] = out[k].weight;
        }
      }
    }
  }
}

}  // namespace placement_detail

// Places both directions of every tuple that is not a self-loop: the entry for vertex u
// (its neighbour w) goes to row row(u), written as column(w), at the row's cursor off[row]
// (which it advances); a row of kNotPlaced drops the entry. `rows`: how many rows there
// are (row() returns less, or kNotPlaced). Rows must fit V. With `weights` (the edges must
// have them), each entry's tuple weight goes to the entry's slot there.
template <class V, class Row, class Column>
void place_entries(const InputEdges& edges, std::uint64_t rows, const Row& row, const Column& column,
                   std::uint64_t* off, V* adj, float* weights = nullptr) {
  if (rows == 0) return;
  if (weights != nullptr) {
    if (rows >= kBlockedFromRows) {
      placement_detail::place_blocked<true, V>(edges, rows, row, column, off, adj, weights);
    } else {
      placement_detail::place_direct<true, V>(edges, row, column, off, adj, weights);
    }
  } else if (rows >= kBlockedFromRows) {
    placement_detail::place_blocked<false, V>(edges, rows, row, column, off, adj, nullptr);
  } else {
    placement_detail::place_direct<false, V>(edges, row, column, off, adj, nullptr);
  }
}

}  // namespace zbfs
