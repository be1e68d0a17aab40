#include "zbfs/codec/sorted_set.hpp"

#include <algorithm>
#include <bit>

namespace zbfs {

void sort_set(std::span<const std::uint64_t> ids, std::vector<std::uint64_t>& out) {
  out.clear();
  if (ids.empty()) return;
  const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
  const std::uint64_t range = *hi - *lo;
  // A bitmap sort costs a pass over range / 64 words; a comparison sort about log2(n)
  // passes over the ids.
  const auto n = static_cast<std::uint64_t>(ids.size());
  if (range / 64 <= n * static_cast<std::uint64_t>(std::bit_width(n))) {
    std::vector<std::uint64_t> words(static_cast<std::size_t>(range / 64 + 1), 0);
    const std::uint64_t base = *lo;
    for (const std::uint64_t id : ids) words[(id - base) / 64] |= std::uint64_t{1} << ((id - base) % 64);
    out.reserve(ids.size());
    append_set_bits(words, base, out);
    return;
  }
  out.assign(ids.begin(), ids.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

void append_set_bits(std::span<const std::uint64_t> words, std::uint64_t base, std::vector<std::uint64_t>& out) {
  for (std::size_t w = 0; w < words.size(); ++w) {
    for (std::uint64_t bits = words[w]; bits != 0; bits &= bits - 1) {
      out.push_back(base + w * 64 + static_cast<std::uint64_t>(std::countr_zero(bits)));
    }
  }
}

std::uint64_t count_set_bits(std::span<const std::uint64_t> words) {
  std::uint64_t set = 0;
  for (const std::uint64_t w : words) set += static_cast<std::uint64_t>(std::popcount(w));
  return set;
}

}  // namespace zbfs
