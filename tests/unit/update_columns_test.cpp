// Keyed updates in columns (wire/direct/update_columns.hpp): every message reads back as the
// items written, whatever their keys, values and repeats; the dictionary is taken when
// the low halves repeat and makes the framed message smaller; every malformed message is
// a DecodeError.
#include "zbfs/wire/direct/update_columns.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "zbfs/codec/frame.hpp"
#include "zbfs/core/byte_buffer.hpp"

namespace zbfs {
namespace {

// `count` merged items (rising keys from `first`), whose low halves are drawn from
// `distinct_lows` values (0: any 32-bit value).
std::vector<KeyedItem> items_of(std::mt19937_64& random, std::size_t count, std::uint64_t first,
                                std::uint64_t distinct_lows) {
  std::vector<std::uint32_t> lows(distinct_lows);
  for (std::uint32_t& low : lows) low = static_cast<std::uint32_t>(random());
  std::vector<KeyedItem> items(count);
  std::uint64_t key = first;
  for (KeyedItem& item : items) {
    item.key = key;
    key += 1 + random() % 1000;
    const std::uint64_t low = lows.empty() ? random() & 0xffffffffU : lows[random() % lows.size()];
    item.value = (random() & 0xffffffffU) << 32 | low;
  }
  return items;
}

std::vector<KeyedItem> read_back(std::span<const std::uint64_t> words) {
  std::vector<KeyedItem> items;
  read_update_columns(words, items);
  return items;
}

TEST(UpdateColumns, MessagesReadBackAsTheItemsWritten) {
  std::mt19937_64 random(5);
  UpdateColumnsScratch scratch;
  for (const std::size_t count : {0, 1, 2, 127, 128, 129, 5000}) {
    for (const std::uint64_t lows : {0, 1, 3, 100}) {
      SCOPED_TRACE(std::to_string(count) + " items, " + std::to_string(lows) + " distinct low halves");
      // Keys anywhere, the top of the 64-bit range included.
      for (const std::uint64_t first : {std::uint64_t{0}, std::uint64_t{1} << 40, ~std::uint64_t{0} - 1000 * count}) {
        const std::vector<KeyedItem> items = items_of(random, count, first, lows);
        std::vector<std::uint64_t> words;
        append_update_columns(items, words, scratch);
        EXPECT_EQ(words.empty(), count == 0);
        EXPECT_EQ(read_back(words), items);
      }
    }
  }
  // Messages one after another, each read on its own (as a destination's are sent).
  const std::vector<KeyedItem> a = items_of(random, 300, 7, 5);
  const std::vector<KeyedItem> b = items_of(random, 40, 1, 0);
  std::vector<std::uint64_t> words;
  append_update_columns(a, words, scratch);
  const std::size_t split = words.size();
  append_update_columns(b, words, scratch);
  EXPECT_EQ(read_back(std::span(words).first(split)), a);
  EXPECT_EQ(read_back(std::span(words).subspan(split)), b);
}

// Bytes of the message framed by bitpack as a sequence (what a codec's frame of reference
// makes of the columns).
std::size_t framed_bytes(std::span<const std::uint64_t> words) {
  ByteBuffer frame;
  encode_frame(CodecId::kBitpack, words, IdOrder::kSequence, frame);
  return frame.size();
}

TEST(UpdateColumns, RepeatedLowHalvesTravelAsADictionaryThatPays) {
  std::mt19937_64 random(11);
  UpdateColumnsScratch scratch;
  // Parents of SSSP requests at scale 20: a third as many as the items.
  const std::vector<KeyedItem> repeated = items_of(random, 3000, 1 << 20, 1000);
  std::vector<std::uint64_t> words;
  append_update_columns(repeated, words, scratch);
  std::set<std::uint64_t> parents;
  for (const KeyedItem& item : repeated) parents.insert(item.value & 0xffffffffU);
  ASSERT_EQ(words[0], parents.size());  // the dictionary's size
  // The same items with their low halves in a plain column: a message as valid, larger.
  std::vector<std::uint64_t> plain = {0};
  for (std::size_t i = 0; i < repeated.size(); ++i) plain.push_back(repeated[i].key - (i ? repeated[i - 1].key : 0));
  for (const KeyedItem& item : repeated) plain.push_back(item.value >> 32);
  for (const KeyedItem& item : repeated) plain.push_back(item.value & 0xffffffffU);
  EXPECT_EQ(read_back(plain), repeated);
  EXPECT_LT(framed_bytes(words), framed_bytes(plain) * 9 / 10);
  // Low halves that do not repeat go plain.
  const std::vector<KeyedItem> distinct = items_of(random, 3000, 1 << 20, 0);
  words.clear();
  append_update_columns(distinct, words, scratch);
  EXPECT_EQ(words[0], 0U);
}

TEST(UpdateColumns, MalformedMessagesAreDecodeErrors) {
  std::mt19937_64 random(13);
  UpdateColumnsScratch scratch;
  std::vector<std::uint64_t> good;
  append_update_columns(items_of(random, 200, 100, 20), good, scratch);
  const std::uint64_t entries = good[0];
  ASSERT_GT(entries, 0U);
  const std::size_t k = 200;
  const std::size_t keys = 1;
  const std::size_t highs = keys + k;
  const std::size_t dictionary = highs + k;
  const std::size_t indices = dictionary + entries;
  ASSERT_EQ(good.size(), indices + k);
  ASSERT_NO_THROW(read_back(good));
  const auto expect_malformed = [&](const char* what, auto&& change) {
    SCOPED_TRACE(what);
    std::vector<std::uint64_t> bad = good;
    change(bad);
    EXPECT_THROW(read_back(bad), DecodeError);
  };
  expect_malformed("a word short", [](auto& m) { m.pop_back(); });
  expect_malformed("a dictionary past the message", [&](auto& m) { m[0] = m.size(); });
  expect_malformed("a dictionary as large as the items", [&](auto& m) {
    m[0] = 50;  // 1 + 3 * 50 + 50 words
    m.resize(1 + 4 * 50);
  });
  expect_malformed("only the size word", [](auto& m) { m.assign(1, 0); });
  expect_malformed("a zero key gap", [&](auto& m) { m[keys + 7] = 0; });
  expect_malformed("keys past 2^64", [&](auto& m) { m[keys + 7] = ~std::uint64_t{0}; });
  expect_malformed("a high half over 32 bits", [&](auto& m) { m[highs + 3] = std::uint64_t{1} << 32; });
  expect_malformed("a dictionary that does not rise", [&](auto& m) { m[dictionary + 5] = 0; });
  expect_malformed("a dictionary entry over 32 bits", [&](auto& m) { m[dictionary + 5] = std::uint64_t{1} << 32; });
  expect_malformed("an index past the dictionary", [&](auto& m) { m[indices + 9] = entries; });
  // Without a dictionary, a low half over 32 bits.
  std::vector<std::uint64_t> plain;
  append_update_columns(items_of(random, 10, 100, 0), plain, scratch);
  ASSERT_EQ(plain[0], 0U);
  plain[1 + 2 * 10 + 4] = std::uint64_t{1} << 32;
  EXPECT_THROW(read_back(plain), DecodeError);
}

}  // namespace
}  // namespace zbfs
