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

namespace {
// Sized once and written through a pointer, eight positions per word whatever its count
// (the extra ones land in slack that the next word overwrites): a loop that stops at
// each word's last bit mispredicts about once a word, which cost more than the rest.
template <class Select>
void append_bits(std::span<const std::uint64_t> words, std::uint64_t base, std::vector<std::uint64_t>& out,
                 Select select) {
  constexpr std::size_t kStride = 8;
  std::uint64_t count = 0;
  for (const std::uint64_t w : words) count += static_cast<std::uint64_t>(std::popcount(select(w)));
  const std::size_t start = out.size();
  out.resize(start + static_cast<std::size_t>(count) + kStride);
  std::uint64_t* at = out.data() + start;
  for (std::size_t w = 0; w < words.size(); ++w) {
    std::uint64_t bits = select(words[w]);
    if (bits == 0) continue;
    const auto n = static_cast<std::size_t>(std::popcount(bits));
    const std::uint64_t first = base + w * 64;
    for (std::size_t i = 0; i < kStride; ++i) {
      at[i] = first + static_cast<std::uint64_t>(std::countr_zero(bits));  // 64 once bits runs out
      bits &= bits - 1;
    }
    for (std::size_t i = kStride; i < n; ++i) {
      at[i] = first + static_cast<std::uint64_t>(std::countr_zero(bits));
      bits &= bits - 1;
    }
    at += n;
  }
  out.resize(start + static_cast<std::size_t>(count));
}
}  // namespace

void append_set_bits(std::span<const std::uint64_t> words, std::uint64_t base, std::vector<std::uint64_t>& out) {
  append_bits(words, base, out, [](std::uint64_t w) { return w; });
}

void append_clear_bits(std::span<const std::uint64_t> words, std::vector<std::uint64_t>& out) {
  append_bits(words, 0, out, [](std::uint64_t w) { return ~w; });
}

std::uint64_t count_set_bits(std::span<const std::uint64_t> words) {
  std::uint64_t set = 0;
  for (const std::uint64_t w : words) set += static_cast<std::uint64_t>(std::popcount(w));
  return set;
}

}  // namespace zbfs
