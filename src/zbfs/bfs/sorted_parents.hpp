// SortedParents<V>: a search's parents kept at sorted offsets, the order the kernels number
// vertices in (graph/degree_order.hpp), and moved to original offsets, the order of the
// benchmark's parent array, once at the end of the search.
//
// Why: the kernels find vertices in sorted order (a bottom-up step scans them in it; a
// top-down step's targets are mostly hubs, at the front), while their original offsets
// are scattered. Written straight to the original offset, each parent was a store to a
// random place in an array of 8 bytes a vertex that the graph's lists keep pushing out of
// the cache, and each top-down edge to a vertex found in the same level read one back
// (the smallest parent wins). At scale 20 on 2 ranks, pruned, that made the top-down and
// bottom-up steps 1.8 ms of a 9 ms search slower than with the parents here; the move at
// the end costs 0.8-1.4 ms, in one loop of independent stores. (Two streaming passes
// through buckets of 2^15 original offsets, which touch each cache line once, moved more
// bytes and took 1.4-1.8 ms.) Local, no MPI.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>

#include "zbfs/core/large_array.hpp"

namespace zbfs {

template <class V>
class SortedParents {
 public:
  SortedParents() = default;
  // `original_of[s]`: the original offset of sorted offset s (a permutation; it must
  // outlive this object).
  explicit SortedParents(std::span<const V> original_of)
      : original_of_(original_of.data()), size_(original_of.size()), parents_(size_) {
    std::fill_n(parents_.data(), size_, std::int64_t{-1});
  }

  // Before a search: whether its discoverers lower parents from -1 (threads sharing a step
  // do, -1 comparing as the largest unsigned), which then is what the search finds in
  // every entry; a lone thread stores and needs nothing. Restoring the -1s costs a store
  // an entry in move_to (0.5 ms of a 7 ms search at scale 20 on 2 ranks of one thread),
  // so it is done only for searches that need them.
  void prepare(bool lowering) {
    if (lowering && !clean_) std::fill_n(parents_.data(), size_, std::int64_t{-1});
    clean_ = lowering;
  }

  // The parent of sorted offset s, as the kernels write and read it during a search.
  [[nodiscard]] std::int64_t* data() { return parents_.data(); }
  std::int64_t& operator[](std::uint64_t s) { return parents_[s]; }

  // parent[original_of[s]] = (*this)[s] for every s whose bit is set in reached_word(w)
  // (the bits of sorted offsets 64 w ... 64 w + 63): the entries a search wrote, set back
  // to -1 after a lowering search. Other entries of `parent` are left alone.
  template <class ReachedWord>
  void move_to(std::span<std::int64_t> parent, ReachedWord reached_word) {
    std::int64_t* out = parent.data();
    std::int64_t* in = parents_.data();
    const V* original_of = original_of_;
    const bool restore = clean_;
    const auto words = static_cast<std::int64_t>((size_ + 63) / 64);
#pragma omp parallel for schedule(static)
    for (std::int64_t w = 0; w < words; ++w) {
      const auto first = static_cast<std::uint64_t>(w) * 64;
      for (std::uint64_t bits = reached_word(static_cast<std::uint64_t>(w)); bits != 0; bits &= bits - 1) {
        const std::uint64_t s = first + static_cast<std::uint64_t>(std::countr_zero(bits));
        out[original_of[s]] = in[s];
        if (restore) in[s] = -1;
      }
    }
  }

 private:
  const V* original_of_ = nullptr;
  std::uint64_t size_ = 0;
  LargeArray<std::int64_t> parents_;
  bool clean_ = true;  // every entry -1 outside a search
};

}  // namespace zbfs
