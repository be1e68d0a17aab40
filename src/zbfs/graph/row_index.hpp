// RowIndex: which ids of a range [0, size) are present, a bit each, and a present id's
// position among the present ones (its rank: the present ids in earlier words, kept per
// word, plus a popcount in its own). Arrays that only present ids need are then kept by
// position: a hypersparse 2D block's offsets (doubly compressed rows, as CombBLAS's 2D BFS
// keeps them), its hubs, a rank's reported parents. At P ranks in 2D a rank's block spans
// sqrt(P) times more rows than it owns vertices for the same entries, so arrays over all
// of them grow with sqrt(P); kept by position, they grow with the entries, and the index
// costs a quarter byte a row (a bit and a 64-bit count per 64 rows).
//
// RowRank is its view for hot loops (two pointers); a default one is the identity (every
// id present, at its own position), for arrays that stay dense.
#pragma once

#include <bit>
#include <cstdint>
#include <utility>

#include "zbfs/core/bitmap.hpp"
#include "zbfs/core/large_array.hpp"

namespace zbfs {

struct RowRank {
  const std::uint64_t* words = nullptr;   // present bits; null: the identity
  const std::uint64_t* before = nullptr;  // per word, the present ids in earlier words

  [[nodiscard]] bool identity() const { return words == nullptr; }
  [[nodiscard]] bool has(std::uint64_t id) const {
    return words == nullptr || ((words[id >> 6] >> (id & 63)) & 1) != 0;
  }
  // `id`'s position; for an absent id, the position the next present one has.
  [[nodiscard]] std::uint64_t position(std::uint64_t id) const {
    if (words == nullptr) return id;
    const std::uint64_t below = (std::uint64_t{1} << (id & 63)) - 1;
    return before[id >> 6] + static_cast<std::uint64_t>(std::popcount(words[id >> 6] & below));
  }
};

class RowIndex {
 public:
  RowIndex() = default;
  // The ids set in `present`.
  explicit RowIndex(Bitmap present) : present_(std::move(present)), before_(present_.num_words() + 1) {
    std::uint64_t count = 0;
    for (std::size_t w = 0; w < present_.num_words(); ++w) {
      before_[w] = count;
      count += static_cast<std::uint64_t>(std::popcount(present_.word(w)));
    }
    before_[present_.num_words()] = count;
    count_ = count;
  }

  [[nodiscard]] std::uint64_t size() const { return present_.size(); }
  [[nodiscard]] std::uint64_t count() const { return count_; }
  [[nodiscard]] const Bitmap& present() const { return present_; }
  [[nodiscard]] RowRank rank() const { return {present_.data(), before_.data()}; }
  [[nodiscard]] std::uint64_t bytes() const {
    return present_.num_words() * sizeof(std::uint64_t) + before_.size() * sizeof(std::uint64_t);
  }

 private:
  Bitmap present_;
  LargeArray<std::uint64_t> before_;
  std::uint64_t count_ = 0;
};

// Calls visit(id) for every id below `count` set in `words`, in order.
template <class Visit>
void for_each_set_bit(const std::uint64_t* words, std::uint64_t count, Visit visit) {
  for (std::uint64_t w = 0; w < (count + 63) / 64; ++w) {
    for (std::uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
      visit(w * 64 + static_cast<std::uint64_t>(std::countr_zero(bits)));
    }
  }
}

// Whether keeping an array of `bytes_per_id` over only `present` of `ids` ids, beside a
// RowIndex, saves at least half of keeping it over all of them.
inline bool sparse_pays(std::uint64_t present, std::uint64_t ids, double bytes_per_id) {
  const double sparse = static_cast<double>(present) * bytes_per_id + static_cast<double>(ids) / 4.0;
  return sparse <= 0.5 * static_cast<double>(ids) * bytes_per_id;
}

}  // namespace zbfs
