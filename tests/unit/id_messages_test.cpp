// merge_by_key: a keyed update's merge (sorted by key, one per key, the smallest value),
// the same as sorting by (key, value) and keeping each key's first, whatever the keys'
// range (the radix sort skips the bytes every key shares).
#include "zbfs/wire/id_messages.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace zbfs {
namespace {

std::vector<KeyedItem> by_sorting(std::vector<KeyedItem> items) {
  std::sort(items.begin(), items.end(),
            [](const KeyedItem& a, const KeyedItem& b) { return a.key != b.key ? a.key < b.key : a.value < b.value; });
  items.erase(
      std::unique(items.begin(), items.end(), [](const KeyedItem& a, const KeyedItem& b) { return a.key == b.key; }),
      items.end());
  return items;
}

TEST(MergeByKey, KeepsTheSmallestValuePerKeyInKeyOrder) {
  std::mt19937_64 random(3);
  std::vector<KeyedItem> scratch;
  for (const std::uint64_t key_range :
       {std::uint64_t{1}, std::uint64_t{40}, std::uint64_t{1} << 20, std::uint64_t{1} << 40, ~std::uint64_t{0}}) {
    for (const std::size_t count :
         {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{5000}}) {
      std::vector<KeyedItem> items(count);
      for (KeyedItem& item : items) item = {(std::uint64_t{1} << 33) + random() % key_range, random() % 1000};
      const std::vector<KeyedItem> expected = by_sorting(items);
      merge_by_key(items, scratch);
      EXPECT_EQ(items, expected) << "range " << key_range << ", " << count << " items";
    }
  }
}

}  // namespace
}  // namespace zbfs
