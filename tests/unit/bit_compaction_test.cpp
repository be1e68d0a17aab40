#include "zbfs/core/bit_compaction.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <vector>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

using bit_compaction_detail::Method;
using Words = std::vector<std::uint64_t>;

// One bit at a time: the definition the fast paths must meet.
Words reference_compact(const Words& words, const Words& mask) {
  Words packed;
  std::uint64_t at = 0;
  for (std::size_t w = 0; w < words.size(); ++w) {
    for (unsigned bit = 0; bit < 64; ++bit) {
      if (((mask[w] >> bit) & 1) == 0) continue;
      if (at % 64 == 0) packed.push_back(0);
      packed.back() |= ((words[w] >> bit) & 1) << (at % 64);
      ++at;
    }
  }
  return packed;
}

// Random words in which each bit is set with probability 1 / one_in (0: none, 1: all).
Words random_words(std::size_t n, unsigned one_in, std::mt19937_64& rng) {
  Words words(n, 0);
  if (one_in == 0) return words;
  for (auto& w : words) {
    for (unsigned bit = 0; bit < 64; ++bit) {
      if (rng() % one_in == 0) w |= std::uint64_t{1} << bit;
    }
  }
  return words;
}

std::uint64_t count_bits(const Words& words) {
  std::uint64_t bits = 0;
  for (const std::uint64_t w : words) bits += static_cast<std::uint64_t>(std::popcount(w));
  return bits;
}

std::vector<Method> methods() {
  std::vector<Method> all = {Method::kTables};
  if (bit_compaction_detail::hardware_available()) all.push_back(Method::kHardware);
  return all;
}

TEST(BitCompaction, PacksTheMaskedBitsInOrderAndExpandsThemBack) {
  std::mt19937_64 rng(7);
  const std::uint64_t kGuard = 0x5a5a5a5a5a5a5a5aULL;
  for (const Method method : methods()) {
    for (const std::size_t n : {0u, 1u, 2u, 3u, 7u, 64u, 129u}) {
      for (const unsigned mask_one_in : {0u, 1u, 2u, 3u, 17u}) {
        for (const unsigned word_one_in : {0u, 1u, 2u, 5u}) {
          const Words mask = random_words(n, mask_one_in, rng);
          const Words words = random_words(n, word_one_in, rng);
          const Words want = reference_compact(words, mask);
          // A guard word after the packed ones must survive.
          Words packed(want.size() + 1, kGuard);
          const std::uint64_t bits = bit_compaction_detail::compact_bits(words, mask, packed, method);
          ASSERT_EQ(packed_words(bits), want.size());
          EXPECT_EQ(Words(packed.begin(), packed.end() - 1), want) << "n " << n << " mask 1/" << mask_one_in;
          EXPECT_EQ(packed.back(), kGuard);

          // Expanding writes every word: the masked bits of the input, 0 elsewhere.
          Words back(n, ~std::uint64_t{0});
          bit_compaction_detail::expand_bits(packed, mask, back, method);
          for (std::size_t w = 0; w < n; ++w) EXPECT_EQ(back[w], words[w] & mask[w]) << "word " << w;
        }
      }
    }
  }
}

TEST(BitCompaction, ExpandIgnoresBitsPastTheMasksPositions) {
  std::mt19937_64 rng(11);
  for (const Method method : methods()) {
    const Words mask = random_words(5, 3, rng);  // about 107 positions: a partial second word
    const Words words = random_words(5, 2, rng);
    Words packed(packed_words(107) + 2, 0);
    const std::uint64_t bits = bit_compaction_detail::compact_bits(words, mask, packed, method);
    ASSERT_GT(bits % 64, 0u);
    packed[bits / 64] |= ~std::uint64_t{0} << (bits % 64);
    for (std::size_t w = bits / 64 + 1; w < packed.size(); ++w) packed[w] = ~std::uint64_t{0};
    Words back(5, 0);
    bit_compaction_detail::expand_bits(packed, mask, back, method);
    for (std::size_t w = 0; w < 5; ++w) EXPECT_EQ(back[w], words[w] & mask[w]);
  }
}

TEST(BitCompaction, TheMachinesChoiceMatchesTheReference) {
  std::mt19937_64 rng(3);
  const Words mask = random_words(1000, 2, rng);
  const Words words = random_words(1000, 4, rng);
  const Words want = reference_compact(words, mask);
  Words packed(want.size());
  EXPECT_EQ(compact_bits(words, mask, packed), count_bits(mask));
  EXPECT_EQ(packed, want);
  Words back(1000);
  expand_bits(packed, mask, back);
  for (std::size_t w = 0; w < back.size(); ++w) EXPECT_EQ(back[w], words[w] & mask[w]);
}

TEST(BitCompaction, RefusesBuffersOfTheWrongSize) {
  const Words mask = {~std::uint64_t{0}, 1};  // 65 positions: two packed words
  const Words words = {3, 1};
  Words one(1);
  Words out(2);
  EXPECT_THROW(compact_bits(words, mask, one), Error);
  EXPECT_THROW(expand_bits(one, mask, out), Error);
  Words two(2);
  EXPECT_THROW(compact_bits(Words{3}, mask, two), Error);
  Words three_words(3);
  EXPECT_THROW(expand_bits(two, mask, three_words), Error);
}

}  // namespace
}  // namespace zbfs
