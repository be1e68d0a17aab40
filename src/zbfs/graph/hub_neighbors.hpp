// The hub shortcut of bottom-up steps (as the RIKEN/Fugaku Graph500 code keeps one): for
// each row of an adjacency, the neighbour most likely to be in a frontier, which is the
// one of highest degree. A bottom-up step tests it before reading the row's list, and
// on a Kronecker graph that test alone finds most parents, so the list is never touched
// (a dense array read in order instead of a cache miss per row). The caller says what
// "degree" is: the exact degree where it is known (one process), a local estimate where
// it is not (a distributed piece). Local, no MPI.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/graph/csr.hpp"

namespace zbfs {

// A degree on a byte's log scale: the bit width and the three bits after the leading
// one, so degrees within 12.5% of each other share a class; 255 from 2^31 on. A
// distributed piece weighs its hubs by the class (a byte per vertex to gather, not eight).
inline std::uint8_t degree_class(std::uint64_t degree) {
  if (degree == 0) return 0;
  const auto width = static_cast<unsigned>(std::bit_width(degree));
  if (width > 31) return 255;
  const auto fraction = static_cast<unsigned>(width >= 4 ? (degree >> (width - 4)) & 7 : (degree << (4 - width)) & 7);
  return static_cast<std::uint8_t>(width * 8 + fraction);
}

// hub[r]: the neighbour w of row r with the largest weight(w), the first in list order
// among equals; `none` for a row without neighbours. `rows`: a rows view (PlainRows,
// GapRows: degree(r) and scan(r, visit)) of `count` rows.
template <class V, class Rows, class Weight>
LargeArray<V> hub_neighbors(const Rows& rows, std::uint64_t count, Weight weight, V none) {
  LargeArray<V> hub(count);
  V* out = hub.data();
  const auto rows_count = static_cast<std::int64_t>(count);
#pragma omp parallel for schedule(dynamic, 4096)
  for (std::int64_t r = 0; r < rows_count; ++r) {
    V best = none;
    std::uint64_t best_weight = 0;
    bool first = true;
    rows.scan(static_cast<std::uint64_t>(r), [&](V w) {
      if (const std::uint64_t wt = weight(w); first || wt > best_weight) {
        best = w;
        best_weight = wt;
        first = false;
      }
      return false;
    });
    out[r] = best;
  }
  return hub;
}

// The same over plain lists: row r's neighbours at adjacency[offsets[r], offsets[r + 1]).
template <class V, class Weight>
LargeArray<V> hub_neighbors(const std::uint64_t* offsets, const V* adjacency, std::uint64_t rows, Weight weight,
                            V none) {
  return hub_neighbors<V>(PlainRows<V>{offsets, adjacency}, rows, weight, none);
}

// The rows that have at least one neighbour, as a bitmap of `count` bits, from a rows view.
template <class Rows>
Bitmap rows_with_edges(const Rows& rows, std::uint64_t count) {
  Bitmap with_edges(count);
  const auto words = static_cast<std::int64_t>(with_edges.num_words());
#pragma omp parallel for schedule(static)
  for (std::int64_t w = 0; w < words; ++w) {
    std::uint64_t bits = 0;
    const std::uint64_t first = static_cast<std::uint64_t>(w) * 64;
    for (std::uint64_t r = first; r < std::min(count, first + 64); ++r) {
      if (rows.degree(r) != 0) bits |= std::uint64_t{1} << (r - first);
    }
    with_edges.word(static_cast<std::size_t>(w)) = bits;
  }
  return with_edges;
}

// The same over plain lists' offsets.
inline Bitmap rows_with_edges(const std::uint64_t* offsets, std::uint64_t rows) {
  return rows_with_edges(PlainRows<std::uint32_t>{offsets, nullptr}, rows);
}

}  // namespace zbfs
