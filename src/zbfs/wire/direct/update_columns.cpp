#include "zbfs/wire/direct/update_columns.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <string>
#include <utility>

#include "zbfs/core/byte_buffer.hpp"

namespace zbfs {
namespace {

constexpr std::uint64_t kHalf = 0xffffffffU;

// The dictionary pays when its entries (rising: their gaps) and the items' indices take
// fewer bits than the low halves' own frame of reference; both estimates are what a
// frame-of-reference block codec spends, less its blocks' headers.
bool dictionary_pays(std::size_t items, std::span<const std::uint32_t> distinct) {
  const std::size_t entries = distinct.size();
  if (entries >= items) return false;
  const std::uint32_t span = distinct.back() - distinct.front();
  const std::uint64_t plain_bits = static_cast<std::uint64_t>(items) * std::bit_width(span);
  const std::uint64_t dictionary_bits = static_cast<std::uint64_t>(entries) * (std::bit_width(span / entries) + 1) +
                                        static_cast<std::uint64_t>(items) * std::bit_width(entries - 1) +
                                        64;  // + the size word's block
  return dictionary_bits < plain_bits;
}

[[noreturn]] void malformed(const std::string& what) { throw DecodeError("an update message " + what); }

// The distinct low halves of `merged`, rising, into scratch.lows, and each item's index
// among them into scratch.index. An LSD radix sort of (low half, item) pairs on the bytes
// in which the low halves differ (three for a scale-20 parent), then one pass, where a
// comparison sort and a binary search per item would cost log k each.
void index_low_halves(std::span<const KeyedItem> merged, UpdateColumnsScratch& scratch) {
  const std::size_t k = merged.size();
  std::vector<std::uint64_t>& pairs = scratch.pairs;
  std::vector<std::uint64_t>& other = scratch.sorted;
  pairs.resize(k);
  other.resize(k);
  std::uint32_t any = 0;
  std::uint32_t every = kHalf;
  for (std::size_t i = 0; i < k; ++i) {
    const auto low = static_cast<std::uint32_t>(merged[i].value & kHalf);
    any |= low;
    every &= low;
    pairs[i] = std::uint64_t{low} << 32 | i;
  }
  std::uint64_t* from = pairs.data();
  std::uint64_t* to = other.data();
  for (unsigned shift = 32; shift < 64; shift += 8) {
    if ((((any ^ every) >> (shift - 32)) & 0xff) == 0) continue;  // every low half has this byte
    std::array<std::size_t, 256> count{};
    for (std::size_t i = 0; i < k; ++i) ++count[(from[i] >> shift) & 0xff];
    std::size_t at = 0;
    for (std::size_t& c : count) at += std::exchange(c, at);
    for (std::size_t i = 0; i < k; ++i) to[count[(from[i] >> shift) & 0xff]++] = from[i];
    std::swap(from, to);
  }
  scratch.lows.clear();
  scratch.index.resize(k);
  for (std::size_t j = 0; j < k; ++j) {
    const auto low = static_cast<std::uint32_t>(from[j] >> 32);
    if (scratch.lows.empty() || scratch.lows.back() != low) scratch.lows.push_back(low);
    scratch.index[from[j] & kHalf] = static_cast<std::uint32_t>(scratch.lows.size() - 1);
  }
}

}  // namespace

void append_update_columns(std::span<const KeyedItem> merged, std::vector<std::uint64_t>& words,
                           UpdateColumnsScratch& scratch) {
  const std::size_t k = merged.size();
  if (k == 0) return;
  // An item's index travels beside its low half in the sort: 2^32 items and more (a
  // message of 64 GB) go plain.
  const bool indexed = k <= kHalf;
  if (indexed) index_low_halves(merged, scratch);
  const std::vector<std::uint32_t>& distinct = scratch.lows;
  const bool dictionary = indexed && dictionary_pays(k, distinct);
  const std::size_t entries = dictionary ? distinct.size() : 0;
  const std::size_t base = words.size();
  words.resize(base + 1 + 3 * k + entries);
  std::uint64_t* out = words.data() + base;
  *out++ = entries;
  for (std::size_t i = 0; i < k; ++i) {
    out[i] = merged[i].key - (i == 0 ? 0 : merged[i - 1].key);
    out[k + i] = merged[i].value >> 32;
  }
  out += 2 * k;
  if (!dictionary) {
    for (std::size_t i = 0; i < k; ++i) out[i] = merged[i].value & kHalf;
    return;
  }
  for (std::size_t j = 0; j < entries; ++j) out[j] = distinct[j] - (j == 0 ? 0 : distinct[j - 1]);
  out += entries;
  for (std::size_t i = 0; i < k; ++i) out[i] = scratch.index[i];
}

void read_update_columns(std::span<const std::uint64_t> message, std::vector<KeyedItem>& items) {
  if (message.empty()) return;
  const std::uint64_t entries = message[0];
  const std::uint64_t rest = message.size() - 1;
  if (entries > rest || (rest - entries) % 3 != 0 || rest == entries) {
    malformed("of " + std::to_string(message.size()) + " words does not hold a dictionary of " +
              std::to_string(entries) + " and items of 3");
  }
  const std::size_t k = (rest - entries) / 3;
  if (entries >= k && entries != 0) malformed("has a dictionary no smaller than its items");
  const std::uint64_t* keys = message.data() + 1;
  const std::uint64_t* highs = keys + k;
  const std::uint64_t* lows = highs + k;
  // The dictionary's entries: the running sums of its gaps.
  std::vector<std::uint64_t> dictionary(entries);
  for (std::size_t j = 0; j < entries; ++j) {
    if (j > 0 && lows[j] == 0) malformed("has a dictionary that does not rise");
    dictionary[j] = lows[j] + (j == 0 ? 0 : dictionary[j - 1]);
    if (lows[j] > kHalf || dictionary[j] > kHalf) malformed("has a dictionary entry over 32 bits");
  }
  const std::uint64_t* indices = lows + entries;
  const std::size_t first = items.size();
  items.resize(first + k);
  std::uint64_t key = 0;
  for (std::size_t i = 0; i < k; ++i) {
    // Merged keys rise: a zero gap or one past 2^64 is a malformed message.
    if (i > 0 && (keys[i] == 0 || keys[i] > ~std::uint64_t{0} - key)) malformed("has keys that do not rise");
    key += keys[i];
    std::uint64_t low = 0;
    if (entries == 0) {
      low = lows[i];
    } else {
      if (indices[i] >= entries) malformed("has an index past its dictionary of " + std::to_string(entries));
      low = dictionary[indices[i]];
    }
    if (highs[i] > kHalf || low > kHalf) malformed("has value halves over 32 bits");
    items[first + i] = {key, highs[i] << 32 | low};
  }
}

}  // namespace zbfs
