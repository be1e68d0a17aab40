#include "zbfs/graph/csr_builder.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "zbfs/core/checked_cast.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/graph/list_sort.hpp"

namespace zbfs {
namespace {

// In-place exclusive prefix sum of counts[0..n), parallel over thread blocks; returns the total.
std::uint64_t exclusive_prefix_sum(std::uint64_t* counts, std::uint64_t n) {
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

// Places both directions of every tuple that is not a self-loop into `adj` at its row's
// cursor off[row] (which it advances), tuple by tuple: the fastest way while the cursors
// stay in cache (below kBlockedFromVertices). Slots are claimed for a group of edges before
// any is written: a locked fetch_add is a full barrier on x86, and interleaving it with
// the scattered stores would make every store's cache miss wait for the previous one
// instead of overlapping.
template <class V, class Internal>
void place_direct(const InputEdges& edges, const Internal& internal, std::uint64_t* off, V* adj) {
  constexpr std::size_t kGroup = 64;
  for_each_chunk(edges, [&](std::uint64_t, std::span<const Edge> part) {
    for (std::size_t first = 0; first < part.size(); first += kGroup) {
      const std::size_t last = std::min(part.size(), first + kGroup);
      std::array<std::uint64_t, 2 * kGroup> slot{};
      std::array<V, 2 * kGroup> value{};
      std::size_t count = 0;
      for (std::size_t i = first; i < last; ++i) {
        const Edge e = part[i];
        if (e.u == e.v) continue;
        const std::uint64_t u = internal(e.u);
        const std::uint64_t v = internal(e.v);
        slot[count] = std::atomic_ref<std::uint64_t>(off[u]).fetch_add(1, std::memory_order_relaxed);
        value[count++] = static_cast<V>(v);
        slot[count] = std::atomic_ref<std::uint64_t>(off[v]).fetch_add(1, std::memory_order_relaxed);
        value[count++] = static_cast<V>(u);
      }
      for (std::size_t k = 0; k < count; ++k) adj[slot[k]] = value[k];
    }
    return std::uint64_t{0};
  });
}

// From this many vertices on (8 MiB of cursors, a quarter of this machine's L3), the
// placement goes by blocks: at scale 20 the direct one was 15% faster, at 22 and 24 the
// blocked one 8% and 10% (docs/performance.md).
constexpr std::uint64_t kBlockedFromVertices = std::uint64_t{1} << 21;

// Vertices per block of the blocked placement: their insertion cursors (8 bytes each)
// fill 512 KiB, which stays in a core's L2 while the block's lists are written.
constexpr int kBlockBits = 16;
// Tuples per round: a round's entries (two per tuple, a row and a column each) wait in
// two buffers of 2 * 2^21 entries, 32 MiB each for 32-bit ids, whatever the graph's size.
constexpr std::uint64_t kRoundTuples = std::uint64_t{1} << 21;

// Places both directions of every tuple that is not a self-loop into `adj`, each at its
// row's cursor off[row] (which it advances). Writing each entry straight to its row, as
// tuples come, misses the cache twice per entry (the cursor and the slot) once the graph
// outgrows it, and the misses grow with the graph. So tuples go in rounds: a round's
// entries are translated to internal ids in tuple order (one lookup per id, streaming
// writes), then sorted into blocks of 2^kBlockBits rows by a counting pass (one write
// stream per block), and then each block's entries are placed by one thread, its cursors
// in cache and its slots within the block's lists, and without atomics, since no two
// threads share a block.
template <class V, class Internal>
void place_blocked(const InputEdges& edges, const Internal& internal, std::uint64_t* off, V* adj) {
  struct Entry {
    V row;
    V column;
  };
  const std::uint64_t n = edges.num_vertices();
  const std::uint64_t m = edges.size();
  const std::uint64_t blocks = ((n - 1) >> kBlockBits) + 1;
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
        for (const Edge& e : part) {
          if (e.u == e.v) continue;
          const auto u = static_cast<V>(internal(e.u));
          const auto v = static_cast<V>(internal(e.v));
          translated_here[count++] = {u, v};
          translated_here[count++] = {v, u};
          ++mine[u >> kBlockBits];
          ++mine[v >> kBlockBits];
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
          adj[off[out[k].row]++] = out[k].column;
        }
      }
    }
  }
}

}  // namespace

std::uint64_t csr_build_peak_bytes(std::uint64_t num_vertices, std::uint64_t num_edges, unsigned vertex_bytes,
                                   CsrOrder order) {
  const std::uint64_t tables = order == CsrOrder::kDegree ? 2 * num_vertices * vertex_bytes : 0;
  // The blocked placement's two round buffers: two entries of two ids per tuple of a round.
  const std::uint64_t rounds =
      num_vertices >= kBlockedFromVertices ? 2 * 2 * std::min(num_edges, kRoundTuples) * 2 * vertex_bytes : 0;
  return (num_vertices + 1) * sizeof(std::uint64_t) + num_vertices * vertex_bytes + 2 * num_edges * vertex_bytes +
         tables + rounds;
}

template <class V>
Csr<V> build_csr(const InputEdges& edges, CsrOrder order) {
  const std::uint64_t n = edges.num_vertices();
  if (n - 1 > std::numeric_limits<V>::max()) {
    throw Error(ExitCode::kFailure, "vertex ids do not fit the local id type");
  }

  // 1. Degrees (both directions of every tuple that is not a self-loop). A produced list's
  // ids are checked here, once: the passes after this one trust them.
  LargeArray<std::uint64_t> offsets(n + 1);
  std::uint64_t* off = offsets.data();
  const std::uint64_t outside = for_each_chunk(edges, [&](std::uint64_t, std::span<const Edge> part) {
    std::uint64_t wrong = 0;
    for (const Edge& e : part) {
      if (e.u == e.v) continue;
      if (e.u >= n || e.v >= n) {
        ++wrong;
        continue;
      }
      std::atomic_ref<std::uint64_t>(off[e.u]).fetch_add(1, std::memory_order_relaxed);
      std::atomic_ref<std::uint64_t>(off[e.v]).fetch_add(1, std::memory_order_relaxed);
    }
    return wrong;
  });
  if (outside != 0) {
    throw Error(ExitCode::kFailure, "an input tuple names a vertex outside the " + std::to_string(n) + " vertices");
  }
  // The degree order, from these counts (the input tuple degrees); the counts move to
  // their sorted places, and every id is sorted as it is placed.
  DegreeOrder<V> degree_order;
  if (order == CsrOrder::kDegree) {
    degree_order = DegreeOrder<V>(std::span<const std::uint64_t>(off, n));
    LargeArray<std::uint64_t> sorted_counts(n + 1);
    const V* original = degree_order.original_offsets().data();
#pragma omp parallel for schedule(static)
    for (std::int64_t s = 0; s < static_cast<std::int64_t>(n); ++s)
      sorted_counts[static_cast<std::size_t>(s)] = off[original[s]];
    sorted_counts[n] = 0;
    offsets = std::move(sorted_counts);
    off = offsets.data();
  }
  const V* sorted = order == CsrOrder::kDegree ? degree_order.sorted_offsets().data() : nullptr;
  const auto internal = [sorted](std::uint64_t v) {
    return sorted != nullptr ? static_cast<std::uint64_t>(sorted[v]) : v;
  };
  const std::uint64_t total = exclusive_prefix_sum(off, n);
  off[n] = total;

  // 2. Placement: off[v] serves as v's insertion cursor and ends at v's end, i.e. the
  // start of v + 1; shifting by one slot afterwards restores the starts.
  LargeArray<V> adjacency(total);
  V* adj = adjacency.data();
  if (n >= kBlockedFromVertices) {
    place_blocked<V>(edges, internal, off, adj);
  } else {
    place_direct<V>(edges, internal, off, adj);
  }
  std::memmove(off + 1, off, n * sizeof(std::uint64_t));
  off[0] = 0;

  // 3. Sort and deduplicate each list; the deduplicated length goes to tuple_degree for
  // now and is swapped for the tuple count during compaction.
  LargeArray<V> tuple_degree(n);
  V* tdeg = tuple_degree.data();
  sort_and_deduplicate_lists(adj, off, n,
                             [tdeg](std::uint64_t v, std::uint64_t length) { tdeg[v] = static_cast<V>(length); });

  // 4. Compaction, in vertex order because lists only move towards the front.
  std::uint64_t write = 0;
  std::uint64_t old_start = 0;
  for (std::uint64_t v = 0; v < n; ++v) {
    const std::uint64_t old_end = off[v + 1];
    const std::uint64_t unique_count = tdeg[v];
    if (write != old_start && unique_count != 0) std::memmove(adj + write, adj + old_start, unique_count * sizeof(V));
    off[v] = write;
    tdeg[v] = checked_cast<V>(old_end - old_start);
    write += unique_count;
    old_start = old_end;
  }
  off[n] = write;
  adjacency.shrink(write);
  return Csr<V>(n, std::move(offsets), std::move(adjacency), std::move(tuple_degree), std::move(degree_order));
}

template Csr<std::uint32_t> build_csr<std::uint32_t>(const InputEdges&, CsrOrder);
template Csr<std::uint64_t> build_csr<std::uint64_t>(const InputEdges&, CsrOrder);

}  // namespace zbfs
