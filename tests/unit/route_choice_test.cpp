// RouteChoice and the hop codec: gridk's dimensions on communicators of any size, the
// --route-dims syntax, and hop messages that survive encoding by every codec exactly
// (items and replies), while truncated or corrupted ones are refused.
#include "zbfs/wire/routed/route_choice.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <random>

#include "zbfs/codec/codec_cost.hpp"
#include "zbfs/core/byte_buffer.hpp"
#include "zbfs/wire/routed/hop_codec.hpp"

namespace zbfs {
namespace {

int product(const std::vector<int>& dims) { return std::accumulate(dims.begin(), dims.end(), 1, std::multiplies<>()); }

TEST(RouteChoice, BalancedDimsMultiplyToTheRanks) {
  EXPECT_EQ(balanced_dims(16, 3), (std::vector<int>{4, 2, 2}));
  EXPECT_EQ(balanced_dims(64, 3), (std::vector<int>{4, 4, 4}));
  EXPECT_EQ(balanced_dims(12, 2), (std::vector<int>{4, 3}));
  EXPECT_EQ(balanced_dims(7, 3), (std::vector<int>{7, 1, 1}));
  EXPECT_EQ(balanced_dims(1, 3), (std::vector<int>{1, 1, 1}));
  for (int p = 1; p <= 200; ++p) {
    for (int k = 1; k <= 4; ++k) EXPECT_EQ(product(balanced_dims(p, k)), p) << p << " in " << k;
  }
}

TEST(RouteChoice, GridkTakesTheUsersDimsOnlyWhereTheyFit) {
  RouteChoice choice;
  choice.kind = RouteKind::kGridK;
  choice.dims = {2, 4};
  EXPECT_EQ(choice.plan_for(8).dims(), (std::vector<int>{2, 4}));
  EXPECT_EQ(choice.plan_for(6).dims(), (std::vector<int>{3, 2}));  // a row of 6: two balanced dims
  choice.dims.clear();
  EXPECT_EQ(choice.plan_for(8).dims(), (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(choice.describe(), "gridk");
  choice.dedup = false;
  EXPECT_EQ(choice.describe(), "gridk, no dedup");
}

TEST(RouteChoice, ParsesDims) {
  EXPECT_EQ(parse_route_dims("4x2x2"), (std::vector<int>{4, 2, 2}));
  EXPECT_EQ(parse_route_dims("16"), (std::vector<int>{16}));
  for (const char* bad : {"", "x", "4x", "x4", "4x0", "4x-2", "4xa", "4 x2", "4x2x"}) {
    EXPECT_FALSE(parse_route_dims(bad).has_value()) << bad;
  }
}

// An items message as RoutedExchange builds it: groups by destination, keys sorted.
std::vector<std::uint64_t> items_message(std::mt19937_64& rng, std::size_t groups, std::size_t per_group) {
  std::vector<std::uint64_t> words{groups};
  std::vector<std::uint64_t> items;
  for (std::size_t g = 0; g < groups; ++g) {
    words.push_back(g * 3);
    const std::size_t count = per_group == 0 ? 0 : 1 + rng() % per_group;
    words.push_back(count);
    std::vector<std::uint64_t> keys(count);
    for (auto& k : keys) k = (g << 40) + rng() % 100000;
    std::sort(keys.begin(), keys.end());  // duplicates allowed (no merging)
    for (const std::uint64_t k : keys) items.insert(items.end(), {k, rng() % 5000});
  }
  words.insert(words.end(), items.begin(), items.end());
  return words;
}

TEST(HopCodec, EveryCodecRoundTripsItemsAndReplies) {
  std::mt19937_64 rng(7);
  const auto costs = std::make_shared<const CodecCostModel>(CodecCostModel::calibrate());
  for (const CodecId id : kAllCodecs) {
    MessageCodec codec(CodecChoice{id}, costs);
    for (const std::size_t groups : {0, 1, 3, 9}) {
      const std::vector<std::uint64_t> words = items_message(rng, groups, 300);
      const HopEncoding encoded = encode_hop_message(words, HopLayout{}, codec, nullptr);
      EXPECT_EQ(decode_hop_message(encoded.words, HopLayout{}, 1 << 20), words) << to_string(id) << " " << groups;
    }
    for (const std::size_t stride : {3, 4}) {
      std::vector<std::uint64_t> replies(stride * 200);
      for (auto& w : replies) w = rng() % 1000000;
      const HopLayout layout{HopLayout::kReplies, stride};
      const HopEncoding encoded = encode_hop_message(replies, layout, codec, nullptr);
      EXPECT_EQ(decode_hop_message(encoded.words, layout, 1 << 20), replies) << to_string(id);
    }
  }
  MessageCodec automatic(*parse_codec_choice("auto"), costs);
  const std::vector<std::uint64_t> words = items_message(rng, 4, 2000);
  EXPECT_EQ(decode_hop_message(encode_hop_message(words, HopLayout{}, automatic, nullptr).words, HopLayout{}, 1 << 20),
            words);
}

TEST(HopCodec, RefusesMalformedMessages) {
  std::mt19937_64 rng(3);
  const auto costs = std::make_shared<const CodecCostModel>(CodecCostModel::calibrate());
  MessageCodec codec(CodecChoice{CodecId::kBitpack}, costs);
  const std::vector<std::uint64_t> words = items_message(rng, 3, 100);
  const std::vector<std::uint64_t> encoded = encode_hop_message(words, HopLayout{}, codec, nullptr).words;
  // Truncated, a wrong length word, and every single-byte corruption of the bytes: an
  // error or (where a checksum-free field changed to another valid value) other words,
  // never a crash.
  EXPECT_THROW(decode_hop_message(std::span(encoded).first(encoded.size() - 1), HopLayout{}, 1 << 20), DecodeError);
  EXPECT_THROW(decode_hop_message({}, HopLayout{}, 1 << 20), DecodeError);
  std::vector<std::uint64_t> wrong_length = encoded;
  wrong_length[0] += 9;
  EXPECT_THROW(decode_hop_message(wrong_length, HopLayout{}, 1 << 20), DecodeError);
  const std::size_t bytes = static_cast<std::size_t>(encoded[0]);
  for (std::size_t at = 0; at < bytes; ++at) {
    std::vector<std::uint64_t> corrupt = encoded;
    reinterpret_cast<std::uint8_t*>(corrupt.data() + 1)[at] ^= 0x5a;
    try {
      EXPECT_NE(decode_hop_message(corrupt, HopLayout{}, 1 << 20), words) << "byte " << at;
    } catch (const DecodeError&) {
    }
  }
  // A message announcing more items than the receiver allows.
  EXPECT_THROW(decode_hop_message(encoded, HopLayout{}, 10), DecodeError);
}

}  // namespace
}  // namespace zbfs
