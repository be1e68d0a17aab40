#include "zbfs/graph/local_csr.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/graph/gap_list.hpp"
#include "zbfs/graph/list_placement.hpp"
#include "zbfs/graph/list_sort.hpp"

namespace zbfs {
namespace {

// The row starts of a CSR whose entries lie in rows row_of[i] < num_rows: a count per row,
// then the running sum.
template <class V>
LargeArray<std::uint64_t> row_starts(std::span<const V> row_of, std::uint64_t num_rows) {
  LargeArray<std::uint64_t> offsets(num_rows + 1);
  std::uint64_t* off = offsets.data();
  const auto m = static_cast<std::int64_t>(row_of.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    std::atomic_ref<std::uint64_t>(off[row_of[static_cast<std::size_t>(i)] + 1])
        .fetch_add(1, std::memory_order_relaxed);
  }
  for (std::uint64_t r = 0; r < num_rows; ++r) off[r + 1] += off[r];
  return offsets;
}

}  // namespace

template <class V>
void LocalCsr<V>::compress() {
  if (compressed_) return;
  if (weighted_) throw Error(ExitCode::kFailure, "a weighted CSR keeps plain lists");
  // By position: a hypersparse CSR stays so.
  const std::uint64_t kept = positions();
  const auto count = static_cast<std::int64_t>(kept);
  LargeArray<std::uint64_t> starts(kept + 1);
  LargeArray<V> degrees(kept);
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t r = 0; r < count; ++r) {
    const auto k = static_cast<std::uint64_t>(r);
    degrees[k] = static_cast<V>(degree_at(k));
    starts[k] = gap_list_bytes<V>(neighbors_at(k));
  }
  starts[kept] = exclusive_prefix_sum(starts.data(), kept);
  LargeArray<std::uint8_t> bytes(starts[kept]);
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t r = 0; r < count; ++r) {
    const auto k = static_cast<std::uint64_t>(r);
    encode_gap_list<V>(neighbors_at(k), bytes.data() + starts[k]);
  }
  starts_ = std::move(starts);
  degrees_ = std::move(degrees);
  bytes_ = std::move(bytes);
  offsets_ = {};
  neighbors_ = {};
  compressed_ = true;
}

template <class V>
std::uint64_t LocalCsr<V>::rows_with_lists() const {
  if (hypersparse_) return index_.count();
  std::uint64_t count = 0;
  const auto rows = static_cast<std::int64_t>(num_rows_);
#pragma omp parallel for schedule(static) reduction(+ : count)
  for (std::int64_t r = 0; r < rows; ++r) count += degree_at(static_cast<std::uint64_t>(r)) != 0 ? 1 : 0;
  return count;
}

template <class V>
void LocalCsr<V>::order_weighted_rows(float light_below, bool heavy_by_neighbour) {
  if constexpr (sizeof(V) != sizeof(std::uint32_t)) {
    throw Error(ExitCode::kFailure, "weighted lists number their groups in 32 bits");
  } else {
    if (!weighted_) throw Error(ExitCode::kFailure, "order_weighted_rows: the lists have no weights");
    const auto rows = static_cast<std::int64_t>(num_rows_);
    V* adj = neighbors_.data();
    float* wt = weights_.data();
    const std::uint64_t* off = offsets_.data();
    // An entry as one word: what orders it above what breaks ties.
    const auto by_weight = [&](std::uint64_t e) {
      return std::uint64_t{std::bit_cast<std::uint32_t>(wt[e])} << 32 | adj[e];
    };
    const auto by_neighbour = [&](std::uint64_t e) {
      return std::uint64_t{adj[e]} << 32 | std::bit_cast<std::uint32_t>(wt[e]);
    };
#pragma omp parallel
    {
      std::vector<std::uint64_t> words;
      std::vector<std::uint64_t> scratch;
#pragma omp for schedule(dynamic, 1024)
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::uint64_t first = off[r];
        const std::uint64_t last = off[r + 1];
        std::uint64_t tail = first;
        while (tail < last && wt[tail] < light_below) ++tail;
        bool ordered = true;
        for (std::uint64_t e = first + 1; e < last && ordered; ++e) {
          const bool in_tail = heavy_by_neighbour && e > tail;
          ordered = in_tail ? by_neighbour(e - 1) < by_neighbour(e)
                            : (e == tail ? wt[e - 1] < light_below : by_weight(e - 1) < by_weight(e));
        }
        for (std::uint64_t e = tail; e < last && ordered; ++e) ordered = !(wt[e] < light_below);
        if (ordered) continue;
        words.resize(last - first);
        for (std::uint64_t e = first; e < last; ++e) words[e - first] = by_weight(e);
        sort_adjacency_list(words.data(), words.data() + words.size(), scratch);
        std::size_t split = 0;
        while (split < words.size() &&
               std::bit_cast<float>(static_cast<std::uint32_t>(words[split] >> 32)) < light_below)
          ++split;
        if (heavy_by_neighbour) {
          for (std::size_t i = split; i < words.size(); ++i) words[i] = words[i] << 32 | words[i] >> 32;
          sort_adjacency_list(words.data() + split, words.data() + words.size(), scratch);
          for (std::size_t i = split; i < words.size(); ++i) words[i] = words[i] << 32 | words[i] >> 32;
        }
        for (std::uint64_t e = first; e < last; ++e) {
          adj[e] = static_cast<V>(words[e - first]);
          wt[e] = std::bit_cast<float>(static_cast<std::uint32_t>(words[e - first] >> 32));
        }
      }
    }
  }
}

namespace {

// The placed lists (each row's entries at [off[r], cursor[r]) in any order) sorted, free
// of duplicates and packed in row order.
template <class V>
LocalCsr<V> finish_lists(std::uint64_t num_rows, LargeArray<std::uint64_t> offsets, LargeArray<std::uint64_t> cursor,
                         LargeArray<V> adjacency) {
  V* adj = adjacency.data();
  std::uint64_t* off = offsets.data();
  std::uint64_t* cur = cursor.data();
  // Sort and deduplicate each row; cursor[r] takes the deduplicated length.
  sort_and_deduplicate_lists(adj, off, num_rows, [cur](std::uint64_t r, std::uint64_t length) { cur[r] = length; });
  // Compact in row order: lists only move towards the front.
  std::uint64_t write = 0;
  for (std::uint64_t r = 0; r < num_rows; ++r) {
    const std::uint64_t start = off[r];
    const std::uint64_t length = cur[r];
    if (write != start && length != 0) std::copy(adj + start, adj + start + length, adj + write);
    off[r] = write;
    write += length;
  }
  off[num_rows] = write;
  adjacency.shrink(write);
  return LocalCsr<V>(num_rows, std::move(offsets), std::move(adjacency));
}

LargeArray<std::uint64_t> copy_of(const LargeArray<std::uint64_t>& offsets, std::uint64_t num_rows) {
  LargeArray<std::uint64_t> cursor(num_rows + 1);
  std::copy(offsets.data(), offsets.data() + num_rows + 1, cursor.data());
  return cursor;
}

}  // namespace

template <class V>
LocalCsr<V> build_local_csr(std::uint64_t num_rows, std::span<const V> rows, std::span<const V> cols) {
  const auto m = static_cast<std::int64_t>(rows.size());
  LargeArray<std::uint64_t> offsets = row_starts(rows, num_rows);
  // Place: a per-row cursor starting at the row's offset.
  LargeArray<std::uint64_t> cursor = copy_of(offsets, num_rows);
  LargeArray<V> adjacency(static_cast<std::size_t>(m));
  V* adj = adjacency.data();
  std::uint64_t* cur = cursor.data();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const std::uint64_t slot = std::atomic_ref<std::uint64_t>(cur[rows[k]]).fetch_add(1, std::memory_order_relaxed);
    adj[slot] = cols[k];
  }
  return finish_lists(num_rows, std::move(offsets), std::move(cursor), std::move(adjacency));
}

template <class V>
LocalCsr<V> build_local_csr(std::uint64_t num_rows, std::vector<V>&& rows, std::vector<V>&& cols, int ranges) {
  LargeArray<std::uint64_t> offsets = row_starts(std::span<const V>(rows), num_rows);
  LargeArray<std::uint64_t> cursor = copy_of(offsets, num_rows);
  const std::uint64_t m = rows.size();
  // The lists' pages are touched only where a range places entries.
  LargeArray<V> adjacency(static_cast<std::size_t>(m));
  V* adj = adjacency.data();
  std::uint64_t* cur = cursor.data();
  const std::uint64_t* off = offsets.data();
  ranges = std::max(1, ranges);
  std::size_t left = rows.size();
  std::vector<std::size_t> kept(static_cast<std::size_t>(omp_get_max_threads()), 0);
  std::uint64_t row_begin = 0;
  for (int range = 0; range < ranges && left > 0; ++range) {
    // The rows whose entries reach the next share of m.
    const std::uint64_t share = m / static_cast<std::uint64_t>(ranges) * static_cast<std::uint64_t>(range + 1);
    const std::uint64_t row_end =
        range + 1 == ranges
            ? num_rows
            : std::max<std::uint64_t>(
                  row_begin, static_cast<std::uint64_t>(std::upper_bound(off, off + num_rows + 1, share) - off) - 1);
    V* r = rows.data();
    V* c = cols.data();
    // Place the range's pairs; each thread moves the others to the front of its chunk
    // (chunks by the team the runtime gave, which may be fewer threads than asked for).
    std::size_t team = 1;
#pragma omp parallel
    {
#pragma omp single
      team = static_cast<std::size_t>(omp_get_num_threads());
      const auto t = static_cast<std::size_t>(omp_get_thread_num());
      const std::size_t begin = left * t / team;
      const std::size_t end = left * (t + 1) / team;
      std::size_t write = begin;
      for (std::size_t i = begin; i < end; ++i) {
        const V row = r[i];
        if (row >= row_begin && row < row_end) {
          const std::uint64_t slot = std::atomic_ref<std::uint64_t>(cur[row]).fetch_add(1, std::memory_order_relaxed);
          adj[slot] = c[i];
        } else {
          r[write] = row;
          c[write] = c[i];
          ++write;
        }
      }
      kept[t] = write - begin;
    }
    // Close the chunks' gaps, then give back the pages past what is left.
    std::size_t front = 0;
    for (std::size_t t = 0; t < team; ++t) {
      const std::size_t begin = left * t / team;
      if (front != begin && kept[t] != 0) {
        std::memmove(r + front, r + begin, kept[t] * sizeof(V));
        std::memmove(c + front, c + begin, kept[t] * sizeof(V));
      }
      front += kept[t];
    }
    left = front;
    release_pages(r + left, (rows.capacity() - left) * sizeof(V));
    release_pages(c + left, (cols.capacity() - left) * sizeof(V));
    row_begin = row_end;
  }
  std::vector<V>().swap(rows);
  std::vector<V>().swap(cols);
  return finish_lists(num_rows, std::move(offsets), std::move(cursor), std::move(adjacency));
}

LocalCsr<std::uint32_t> build_weighted_local_csr(std::uint64_t num_rows, std::span<const std::uint32_t> rows,
                                                 std::span<const std::uint32_t> cols, std::span<const float> weights) {
  const auto m = static_cast<std::int64_t>(rows.size());
  LargeArray<std::uint64_t> offsets = row_starts(rows, num_rows);
  std::uint64_t* off = offsets.data();
  LargeArray<std::uint64_t> cursor(num_rows + 1);
  std::copy(off, off + num_rows + 1, cursor.data());
  // An entry is placed as one word, the neighbour above the weight's bits: sorting a row
  // sorts by neighbour and then by weight (a non-negative float's bits order as it does),
  // so the first of each neighbour's run is its lightest.
  LargeArray<std::uint64_t> packed(static_cast<std::size_t>(m));
  std::uint64_t* words = packed.data();
  std::uint64_t* cur = cursor.data();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const std::uint64_t slot = std::atomic_ref<std::uint64_t>(cur[rows[k]]).fetch_add(1, std::memory_order_relaxed);
    words[slot] = std::uint64_t{cols[k]} << 32 | std::bit_cast<std::uint32_t>(weights[k]);
  }
  const auto count = static_cast<std::int64_t>(num_rows);
#pragma omp parallel
  {
    std::vector<std::uint64_t> scratch;
#pragma omp for schedule(dynamic, 1024)
    for (std::int64_t r = 0; r < count; ++r) {
      std::uint64_t* first = words + off[r];
      std::uint64_t* last = words + off[r + 1];
      sort_adjacency_list(first, last, scratch);
      const auto same_neighbor = [](std::uint64_t a, std::uint64_t b) { return a >> 32 == b >> 32; };
      std::uint64_t* kept_end = std::unique(first, last, same_neighbor);
      // Then by weight (neighbour second): the light edges of a row are its prefix, and a
      // search can stop a row's scan at the first weight too heavy to matter.
      for (std::uint64_t* p = first; p != kept_end; ++p) *p = *p << 32 | *p >> 32;
      sort_adjacency_list(first, kept_end, scratch);
      cur[r] = static_cast<std::uint64_t>(kept_end - first);
    }
  }
  // The kept rows' starts (cursor holds each row's kept length), then each row's kept
  // words split into the two arrays.
  LargeArray<std::uint64_t> kept_offsets(num_rows + 1);
  kept_offsets[0] = 0;
  for (std::uint64_t r = 0; r < num_rows; ++r) kept_offsets[r + 1] = kept_offsets[r] + cur[r];
  const std::uint64_t kept = kept_offsets[num_rows];
  LargeArray<std::uint32_t> adjacency(kept);
  LargeArray<float> entry_weights(kept);
#pragma omp parallel for schedule(dynamic, 1024)
  for (std::int64_t r = 0; r < count; ++r) {
    const auto row = static_cast<std::uint64_t>(r);
    const std::uint64_t* from = words + off[row];
    for (std::uint64_t e = kept_offsets[row]; e < kept_offsets[row + 1]; ++e, ++from) {
      adjacency[e] = static_cast<std::uint32_t>(*from);
      entry_weights[e] = std::bit_cast<float>(static_cast<std::uint32_t>(*from >> 32));
    }
  }
  return LocalCsr<std::uint32_t>(num_rows, std::move(kept_offsets), std::move(adjacency), std::move(entry_weights));
}

template <class V>
LocalCsr<V> transpose_local_csr(const LocalCsr<V>& csr, std::uint64_t num_cols, std::optional<RowIndex> kept) {
  if (csr.compressed()) throw Error(ExitCode::kFailure, "transpose_local_csr: the lists are compressed");
  if (kept && kept->size() != num_cols) throw Error(ExitCode::kFailure, "transpose_local_csr: an index of other rows");
  const RowRank rank = kept ? kept->rank() : RowRank{};
  const std::uint64_t rows_out = kept ? kept->count() : num_cols;
  const std::uint64_t* row_offsets = csr.offsets();
  const V* entries = csr.neighbor_data();
  const auto m = static_cast<std::int64_t>(csr.num_entries());
  // Offsets over the output's positions: a count per position, then the running sum.
  LargeArray<std::uint64_t> offsets(rows_out + 1);
  std::uint64_t* off = offsets.data();
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < m; ++e) {
    std::atomic_ref<std::uint64_t>(off[rank.position(entries[e]) + 1]).fetch_add(1, std::memory_order_relaxed);
  }
  for (std::uint64_t r = 0; r < rows_out; ++r) off[r + 1] += off[r];

  LargeArray<std::uint64_t> cursor(rows_out + 1);
  std::copy(off, off + rows_out + 1, cursor.data());
  LargeArray<V> adjacency(static_cast<std::size_t>(m));
  V* adj = adjacency.data();
  std::uint64_t* cur = cursor.data();
  // The input's rows by word of 64, each kept one's id and position (its offsets are by
  // position when it is hypersparse).
  const RowRank in_rank = csr.row_rank();
  const auto words = static_cast<std::int64_t>((csr.num_rows() + 63) / 64);
  const std::uint64_t in_rows = csr.num_rows();
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t w = 0; w < words; ++w) {
    const std::uint64_t first = static_cast<std::uint64_t>(w) * 64;
    for (std::uint64_t r = first; r < std::min(in_rows, first + 64); ++r) {
      if (!in_rank.has(r)) continue;
      const std::uint64_t k = in_rank.position(r);
      for (std::uint64_t e = row_offsets[k]; e < row_offsets[k + 1]; ++e) {
        const std::uint64_t slot =
            std::atomic_ref<std::uint64_t>(cur[rank.position(entries[e])]).fetch_add(1, std::memory_order_relaxed);
        adj[slot] = static_cast<V>(r);
      }
    }
  }
  cursor = {};
  // Threads place rows out of order; the lists are duplicate-free already.
  const auto cols = static_cast<std::int64_t>(rows_out);
#pragma omp parallel
  {
    std::vector<V> scratch;
#pragma omp for schedule(dynamic, 1024)
    for (std::int64_t c = 0; c < cols; ++c) sort_adjacency_list(adj + off[c], adj + off[c + 1], scratch);
  }
  LocalCsr<V> transposed(rows_out, std::move(offsets), std::move(adjacency));
  if (!kept) return transposed;
  return LocalCsr<V>::by_position(std::move(transposed), std::move(*kept));
}

template <class V>
Bitmap ids_present(std::span<const V> ids, std::uint64_t count) {
  Bitmap present(count);
  const auto m = static_cast<std::int64_t>(ids.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < m; ++i) {
    present.claim(ids[static_cast<std::size_t>(i)], true);  // a plain read first: most ids repeat
  }
  return present;
}

template <class V>
LocalCsr<V> LocalCsr<V>::by_position(LocalCsr by_position, RowIndex rows) {
  if (by_position.num_rows_ != rows.count()) {
    throw Error(ExitCode::kFailure, "LocalCsr::by_position: " + std::to_string(by_position.num_rows_) + " lists for " +
                                        std::to_string(rows.count()) + " kept rows");
  }
  if (by_position.weighted_) throw Error(ExitCode::kFailure, "a weighted CSR keeps a row's offsets by row");
  LocalCsr kept = std::move(by_position);
  kept.num_rows_ = rows.size();
  kept.index_ = std::move(rows);
  kept.hypersparse_ = true;
  return kept;
}

template LocalCsr<std::uint32_t> build_local_csr<std::uint32_t>(std::uint64_t, std::span<const std::uint32_t>,
                                                                std::span<const std::uint32_t>);
template LocalCsr<std::uint64_t> build_local_csr<std::uint64_t>(std::uint64_t, std::span<const std::uint64_t>,
                                                                std::span<const std::uint64_t>);
template LocalCsr<std::uint32_t> build_local_csr<std::uint32_t>(std::uint64_t, std::vector<std::uint32_t>&&,
                                                                std::vector<std::uint32_t>&&, int);
template LocalCsr<std::uint64_t> build_local_csr<std::uint64_t>(std::uint64_t, std::vector<std::uint64_t>&&,
                                                                std::vector<std::uint64_t>&&, int);
template LocalCsr<std::uint32_t> transpose_local_csr<std::uint32_t>(const LocalCsr<std::uint32_t>&, std::uint64_t,
                                                                    std::optional<RowIndex>);
template LocalCsr<std::uint64_t> transpose_local_csr<std::uint64_t>(const LocalCsr<std::uint64_t>&, std::uint64_t,
                                                                    std::optional<RowIndex>);
template Bitmap ids_present<std::uint32_t>(std::span<const std::uint32_t>, std::uint64_t);
template Bitmap ids_present<std::uint64_t>(std::span<const std::uint64_t>, std::uint64_t);

template class LocalCsr<std::uint32_t>;
template class LocalCsr<std::uint64_t>;

}  // namespace zbfs
