// The two ways kernel 1's graphs hold adjacency lists, as a search reads them: a rows
// view has degree(u), and scan(u, visit), which calls visit(w) for u's neighbours in
// ascending order until it returns true (and then returns true itself);
// scan_blocks(u, first, last, visit) does the same for the list's blocks [first, last) of
// kGapBlock ids (blocks past the list's end are none), so that threads can share a hub's
// list; position(u) is where arrays kept beside the lists hold row u's entry (u itself,
// but for IndexedRows). A search is written once over a rows view and runs over any.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "zbfs/graph/gap_list.hpp"
#include "zbfs/graph/row_index.hpp"

namespace zbfs {

// Plain lists: row u's ids at neighbors[offsets[u], offsets[u + 1]).
template <class V>
struct PlainRows {
  const std::uint64_t* offsets;
  const V* neighbors;

  [[nodiscard]] std::uint64_t position(std::uint64_t u) const { return u; }
  [[nodiscard]] std::uint64_t degree(std::uint64_t u) const { return offsets[u + 1] - offsets[u]; }
  // Row u's list as [first, last).
  [[nodiscard]] std::pair<const V*, const V*> list(std::uint64_t u) const {
    return {neighbors + offsets[u], neighbors + offsets[u + 1]};
  }
  void prefetch(std::uint64_t u) const { __builtin_prefetch(neighbors + offsets[u]); }
  template <class Visit>
  bool scan(std::uint64_t u, Visit&& visit) const {
    for (std::uint64_t e = offsets[u], end = offsets[u + 1]; e < end; ++e) {
      if (visit(neighbors[e])) return true;
    }
    return false;
  }
  template <class Visit>
  bool scan_blocks(std::uint64_t u, std::uint64_t first, std::uint64_t last, Visit&& visit) const {
    const std::uint64_t end = std::min(offsets[u + 1], offsets[u] + last * kGapBlock);
    for (std::uint64_t e = offsets[u] + first * kGapBlock; e < end; ++e) {
      if (visit(neighbors[e])) return true;
    }
    return false;
  }
};

// Compressed lists (graph/gap_list.hpp): row u's list of degrees[u] ids at bytes + starts[u].
template <class V>
struct GapRows {
  const std::uint64_t* starts;
  const V* degrees;
  const std::uint8_t* bytes;

  [[nodiscard]] std::uint64_t position(std::uint64_t u) const { return u; }
  [[nodiscard]] std::uint64_t degree(std::uint64_t u) const { return degrees[u]; }
  void prefetch(std::uint64_t u) const { __builtin_prefetch(bytes + starts[u]); }
  template <class Visit>
  bool scan(std::uint64_t u, Visit&& visit) const {
    return scan_gap_list<V>(bytes + starts[u], degrees[u], visit);
  }
  template <class Visit>
  bool scan_blocks(std::uint64_t u, std::uint64_t first, std::uint64_t last, Visit&& visit) const {
    return scan_gap_blocks<V>(bytes + starts[u], degrees[u], first, last, visit);
  }
};

// Hypersparse lists (LocalCsr::by_position): `lists` holds only the rows `index` has,
// by position; a row it lacks has no neighbours.
template <class Rows>
struct IndexedRows {
  Rows lists;
  RowRank index;

  [[nodiscard]] std::uint64_t position(std::uint64_t u) const { return index.position(u); }
  [[nodiscard]] std::uint64_t degree(std::uint64_t u) const {
    return index.has(u) ? lists.degree(index.position(u)) : 0;
  }
  [[nodiscard]] auto list(std::uint64_t u) const requires requires(const Rows& r) { r.list(std::uint64_t{0}); }
  {
    using List = decltype(lists.list(0));
    return index.has(u) ? lists.list(index.position(u)) : List{};
  }
  void prefetch(std::uint64_t u) const {
    if (index.has(u)) lists.prefetch(index.position(u));
  }
  template <class Visit>
  bool scan(std::uint64_t u, Visit&& visit) const {
    return index.has(u) && lists.scan(index.position(u), visit);
  }
  template <class Visit>
  bool scan_blocks(std::uint64_t u, std::uint64_t first, std::uint64_t last, Visit&& visit) const {
    return index.has(u) && lists.scan_blocks(index.position(u), first, last, visit);
  }
};

}  // namespace zbfs
