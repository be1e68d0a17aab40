// Frames and codecs: round trips of every codec on the cases that break codecs (empty,
// one id, the largest ids, huge gaps, all-equal gaps, random sets of many sizes, long
// runs), fallbacks, and malformed buffers (every truncation, flipped bits, hostile
// headers) that must give DecodeError and never a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "zbfs/codec/bit_packing.hpp"
#include "zbfs/codec/bit_stream.hpp"
#include "zbfs/codec/checksum.hpp"
#include "zbfs/codec/codec_cost.hpp"
#include "zbfs/codec/frame.hpp"
#include "zbfs/codec/sorted_set.hpp"
#include "zbfs/wire/direct/message_codec.hpp"

namespace zbfs {
namespace {

constexpr std::uint64_t kMaxId = (std::uint64_t{1} << 63) - 1;

std::vector<std::uint64_t> random_set(std::size_t n, std::uint64_t range, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::set<std::uint64_t> s;
  while (s.size() < n) s.insert(range == 0 ? rng() : rng() % range);
  return {s.begin(), s.end()};
}

std::vector<std::uint64_t> random_sequence(std::size_t n, std::uint64_t lo, std::uint64_t range, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> v(n);
  for (auto& x : v) x = lo + rng() % range;
  return v;
}

struct Case {
  std::string name;
  std::vector<std::uint64_t> ids;
  IdOrder order;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  c.push_back({"empty", {}, IdOrder::kSortedSet});
  c.push_back({"empty_sequence", {}, IdOrder::kSequence});
  c.push_back({"one", {42}, IdOrder::kSortedSet});
  c.push_back({"zero", {0}, IdOrder::kSortedSet});
  c.push_back({"max_id", {kMaxId}, IdOrder::kSortedSet});
  c.push_back({"max_u64", {~std::uint64_t{0}}, IdOrder::kSortedSet});
  c.push_back({"extremes", {0, 1, kMaxId - 1, kMaxId, ~std::uint64_t{0}}, IdOrder::kSortedSet});
  c.push_back({"huge_gaps", {3, std::uint64_t{1} << 40, (std::uint64_t{1} << 62) + 5, kMaxId}, IdOrder::kSortedSet});
  std::vector<std::uint64_t> equal_gaps;
  for (std::uint64_t k = 0; k < 1000; ++k) equal_gaps.push_back(17 + k * 1000);
  c.push_back({"equal_gaps", equal_gaps, IdOrder::kSortedSet});
  std::vector<std::uint64_t> run;
  for (std::uint64_t k = 0; k < 70000; ++k) run.push_back((std::uint64_t{5} << 32) - 100 + k);
  c.push_back({"run_across_2^32", run, IdOrder::kSortedSet});
  for (const std::size_t n : {1, 2, 3, 4, 5, 127, 128, 129, 255, 256, 257, 1000, 4095, 4096, 4097, 20000}) {
    c.push_back({"dense_" + std::to_string(n), random_set(n, n * 3, n), IdOrder::kSortedSet});
    c.push_back({"sparse_" + std::to_string(n), random_set(n, std::uint64_t{1} << 40, n + 7), IdOrder::kSortedSet});
    c.push_back({"wide_" + std::to_string(n), random_set(n, 0, n + 11), IdOrder::kSortedSet});
    c.push_back({"sequence_" + std::to_string(n), random_sequence(n, 1000000, 1u << 19, n + 13), IdOrder::kSequence});
  }
  c.push_back({"sequence_wide", random_sequence(3000, 0, ~std::uint64_t{0}, 5), IdOrder::kSequence});
  c.push_back({"sequence_max", {kMaxId, 0, ~std::uint64_t{0}, 7, 7, 7}, IdOrder::kSequence});
  c.push_back({"sequence_equal", std::vector<std::uint64_t>(300, 123456789), IdOrder::kSequence});
  // Full blocks that end exactly at 2^64 - 1 (the fused block decoders' wrap checks).
  std::vector<std::uint64_t> top(300);
  for (std::size_t i = 0; i < top.size(); ++i) top[i] = ~std::uint64_t{0} - 3 * (top.size() - 1 - i);
  c.push_back({"set_at_the_top", top, IdOrder::kSortedSet});
  c.push_back({"sequence_at_the_top", top, IdOrder::kSequence});
  return c;
}

TEST(Checksum, MatchesTheCrc32cCheckValue) {
  const std::string text = "123456789";
  const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
  EXPECT_EQ(crc32c(bytes), 0xE3069283u);
  EXPECT_EQ(crc32c_portable(bytes), 0xE3069283u);
  // Inputs take three streams (strides of 3 x 256 bytes, then three chunks of the
  // length that fits, joined by carry-less multiplication) and a rest: every length up
  // to two strides and past them, from several starting values.
  std::vector<std::uint8_t> long_input(5000);
  for (std::size_t i = 0; i < long_input.size(); ++i) long_input[i] = static_cast<std::uint8_t>(i * 7 + 3 + i / 251);
  std::vector<std::size_t> lengths(1600);
  std::iota(lengths.begin(), lengths.end(), 0);
  lengths.insert(lengths.end(), {2304, 2305, 2376, 5000});
  for (const std::size_t n : lengths) {
    const auto input = std::span<const std::uint8_t>(long_input).first(n);
    EXPECT_EQ(crc32c(input), crc32c_portable(input)) << n;
    EXPECT_EQ(crc32c(input, 0xDEADBEEFu), crc32c_portable(input, 0xDEADBEEFu)) << n;
    const std::size_t cut = std::min<std::size_t>(n, 100);
    EXPECT_EQ(crc32c(input.subspan(cut), crc32c(input.first(cut))), crc32c(input)) << n;
  }
}

TEST(Codec, ParsesEveryNameAndAuto) {
  for (const CodecId codec : kAllCodecs) {
    const auto choice = parse_codec_choice(to_string(codec));
    ASSERT_TRUE(choice.has_value());
    EXPECT_EQ(choice->fixed, codec);
  }
  EXPECT_TRUE(parse_codec_choice("auto")->is_auto());
  EXPECT_FALSE(parse_codec_choice("lz4").has_value());
}

TEST(Codec, EveryCodecRoundTripsEveryCase) {
  for (const CodecId codec : kAllCodecs) {
    for (const Case& c : cases()) {
      ByteBuffer buffer;
      const CodecId used = encode_frame(codec, c.ids, c.order, buffer);
      const std::vector<std::uint64_t> back = decode_frame(buffer.bytes(), c.ids.size());
      EXPECT_EQ(back, c.ids) << to_string(codec) << " (" << to_string(used) << ") " << c.name;
      const FrameHeader header = read_frame_header(buffer.bytes(), c.ids.size());
      EXPECT_EQ(header.codec, used);
      EXPECT_EQ(header.count, c.ids.size());
      EXPECT_EQ(header.frame_bytes(), buffer.size());
      // The checksum, whether the encoder took it on the way or in a pass: the table
      // CRC-32C of the payload, continued over the header bytes before the checksum.
      const std::span<const std::uint8_t> bytes = buffer.bytes();
      const std::uint32_t payload_crc = crc32c_portable(bytes.subspan(header.header_bytes, header.payload_bytes));
      EXPECT_EQ(header.checksum, crc32c_portable(bytes.first(header.header_bytes - 4), payload_crc))
          << to_string(codec) << " " << c.name;
    }
  }
}

TEST(Codec, FallsBackOnlyWhereTheCodecCannotCarryTheInput) {
  ByteBuffer b;
  EXPECT_EQ(encode_frame(CodecId::kRoaring, random_sequence(10, 0, 100, 1), IdOrder::kSequence, b), CodecId::kBitpack);
  EXPECT_EQ(encode_frame(CodecId::kBitmap, random_sequence(10, 0, 100, 1), IdOrder::kSequence, b), CodecId::kBitpack);
  EXPECT_EQ(
      encode_frame(CodecId::kBitmap, std::vector<std::uint64_t>{1, std::uint64_t{1} << 50}, IdOrder::kSortedSet, b),
      CodecId::kBitpack);
  EXPECT_EQ(encode_frame(CodecId::kBitmap, random_set(1000, 3000, 2), IdOrder::kSortedSet, b), CodecId::kBitmap);
  EXPECT_EQ(encode_frame(CodecId::kStreamVByte, std::vector<std::uint64_t>{1, std::uint64_t{1} << 40},
                         IdOrder::kSortedSet, b),
            CodecId::kBitpack);
  EXPECT_EQ(encode_frame(CodecId::kStreamVByte, random_set(1000, 1u << 30, 3), IdOrder::kSortedSet, b),
            CodecId::kStreamVByte);
  for (const CodecId codec :
       {CodecId::kNone, CodecId::kVarint, CodecId::kBitpack, CodecId::kPfor, CodecId::kZstd, CodecId::kRoaring}) {
    EXPECT_EQ(encode_frame(codec, random_set(100, 0, 4), IdOrder::kSortedSet, b), codec);
  }
}

TEST(Codec, CompressesDenseSetsToAFewBitsPerId) {
  // 2^16 ids out of 2^18: gaps average 4 (entropy about 3.2 bits per id); bitpack pays
  // for the largest gap of each block, pfor patches those.
  const std::vector<std::uint64_t> ids = random_set(1 << 16, 1 << 18, 9);
  const double raw = static_cast<double>(ids.size() * 8);
  const std::pair<CodecId, double> limits[] = {{CodecId::kBitpack, 0.08},
                                               {CodecId::kPfor, 0.07},
                                               {CodecId::kBitmap, 0.065},
                                               {CodecId::kRoaring, 0.065},
                                               {CodecId::kRice, 0.053}};
  for (const auto& [codec, limit] : limits) {
    ByteBuffer b;
    encode_frame(codec, ids, IdOrder::kSortedSet, b);
    EXPECT_LT(static_cast<double>(b.size()) / raw, limit) << to_string(codec);
  }
  ByteBuffer b;
  encode_frame(CodecId::kVarint, ids, IdOrder::kSortedSet, b);
  EXPECT_LE(b.size(), ids.size() + 64);  // one byte per small gap
  const std::vector<std::uint64_t> equal(1000, 7);
  ByteBuffer e;
  encode_frame(CodecId::kBitpack, equal, IdOrder::kSequence, e);
  EXPECT_LT(e.size(), 64u);  // width 0 blocks
}

// A random set's gaps are geometric; Rice coding should cost within 3% of their
// entropy, log2(1/p) + H(p)/p... per id with density p, at every density.
TEST(Codec, RiceCodesRandomSetsNearTheirEntropy) {
  for (const std::uint64_t one_in : {2, 3, 5, 16, 100, 5000}) {
    const std::size_t n = 20000;
    const std::vector<std::uint64_t> ids = random_set(n, n * one_in, one_in);
    const double p = 1.0 / static_cast<double>(one_in);
    const double entropy_bits = (-p * std::log2(p) - (1 - p) * std::log2(1 - p)) / p;
    ByteBuffer rice;
    encode_frame(CodecId::kRice, ids, IdOrder::kSortedSet, rice);
    const double bits = static_cast<double>(rice.size() * 8) / static_cast<double>(n);
    EXPECT_LT(bits, entropy_bits * 1.03 + 0.1) << "one in " << one_in;
    ByteBuffer pack;
    encode_frame(CodecId::kBitpack, ids, IdOrder::kSortedSet, pack);
    EXPECT_LT(rice.size(), pack.size()) << "one in " << one_in;
    EXPECT_EQ(decode_frame(rice.bytes(), n), ids);
  }
  // An outlier costs its own unary run, not the block's width: the parameter follows the
  // mean, and the unary stream stays bounded.
  std::vector<std::uint64_t> outlier = random_set(1000, 4000, 3);
  outlier.push_back(outlier.back() + (std::uint64_t{1} << 40));
  ByteBuffer b;
  encode_frame(CodecId::kRice, outlier, IdOrder::kSortedSet, b);
  EXPECT_LT(b.size(), 1000u);
  EXPECT_EQ(decode_frame(b.bytes(), outlier.size()), outlier);
}

TEST(Codec, PforKeepsOutliersOutOfTheBlockWidth) {
  std::vector<std::uint64_t> ids;
  std::uint64_t x = 0;
  for (int k = 0; k < 4096; ++k) {
    x += (k % 64 == 0) ? (std::uint64_t{1} << 30) : 3;
    ids.push_back(x);
  }
  ByteBuffer pack;
  ByteBuffer pfor;
  encode_frame(CodecId::kBitpack, ids, IdOrder::kSortedSet, pack);
  encode_frame(CodecId::kPfor, ids, IdOrder::kSortedSet, pfor);
  EXPECT_LT(pfor.size() * 3, pack.size());
  EXPECT_EQ(decode_frame(pfor.bytes(), ids.size()), ids);
}

TEST(Codec, SeveralFramesInOneBuffer) {
  ByteBuffer b;
  const auto a = random_set(300, 5000, 1);
  const auto c = random_sequence(77, 10, 1000, 2);
  encode_frame(CodecId::kBitpack, a, IdOrder::kSortedSet, b);
  encode_frame(CodecId::kVarint, c, IdOrder::kSequence, b);
  const FrameHeader first = read_frame_header(b.bytes(), 1000);
  std::vector<std::uint64_t> out(first.count);
  decode_frame_into(b.bytes(), first, out.data());
  EXPECT_EQ(out, a);
  const auto rest = b.bytes().subspan(first.frame_bytes());
  EXPECT_EQ(decode_frame(rest, 1000), c);
}

TEST(Codec, BitmapFramesRoundTripThroughEveryCodec) {
  std::vector<std::uint64_t> words(37);
  std::mt19937_64 rng(4);
  for (auto& w : words) w = rng() & rng() & rng();
  words[5] = 0;
  words[36] = std::uint64_t{1} << 63;
  for (const CodecId codec : kAllCodecs) {
    ByteBuffer b;
    encode_bitmap_frame(codec, words, b);
    std::vector<std::uint64_t> back(words.size(), ~std::uint64_t{0});
    decode_bitmap_frame(b.bytes(), back);
    EXPECT_EQ(back, words) << to_string(codec);
  }
  ByteBuffer b;
  encode_bitmap_frame(CodecId::kBitmap, words, b);
  std::vector<std::uint64_t> too_small(36);
  EXPECT_THROW(decode_bitmap_frame(b.bytes(), too_small), DecodeError);
  ByteBuffer list;
  encode_bitmap_frame(CodecId::kVarint, words, list);
  EXPECT_THROW(decode_bitmap_frame(list.bytes(), too_small), DecodeError);
}

// The set (or zero) bits' positions in order, appended after what the list held, for
// words of every count of bits (the writer stores eight per word before it knows).
TEST(SortedSet, AppendsTheSetAndTheZeroBitsInOrder) {
  std::mt19937_64 rng(12);
  std::vector<std::uint64_t> words = {0, ~std::uint64_t{0}, 0xff, 0x1ff, std::uint64_t{1} << 63, 0x8000000000000001};
  for (int k = 0; k < 40; ++k) words.push_back(rng() & rng() & (k % 3 == 0 ? rng() : ~std::uint64_t{0}));
  std::vector<std::uint64_t> want_set = {7};
  std::vector<std::uint64_t> want_clear = {7};
  for (std::size_t w = 0; w < words.size(); ++w) {
    for (unsigned bit = 0; bit < 64; ++bit) {
      ((words[w] >> bit) & 1 ? want_set : want_clear).push_back((w * 64 + bit) + (((words[w] >> bit) & 1) ? 1000 : 0));
    }
  }
  std::vector<std::uint64_t> set = {7};
  append_set_bits(words, 1000, set);
  EXPECT_EQ(set, want_set);
  std::vector<std::uint64_t> clear = {7};
  append_clear_bits(words, clear);
  EXPECT_EQ(clear, want_clear);
  EXPECT_EQ(count_set_bits(words), want_set.size() - 1);
}

// A bitmap more than half full travels as its zero bits' positions (flag bit 1): fewer
// ids, the same bitmap back, through every list codec; at exactly half, as its set bits.
TEST(Codec, DenseBitmapFramesListTheZeroBits) {
  std::mt19937_64 rng(8);
  std::vector<std::uint64_t> dense(23);
  for (auto& w : dense) w = rng() | rng() | rng();  // about 7 bits in 8 set
  dense[4] = ~std::uint64_t{0};
  dense[9] = 0;
  const std::vector<std::uint64_t> full(5, ~std::uint64_t{0});
  const std::vector<std::uint64_t> half = {0xffffffffULL, 0xffffffff00000000ULL};
  for (const CodecId codec : kAllCodecs) {
    if (codec == CodecId::kBitmap) continue;  // the words as they are
    SCOPED_TRACE(std::string(to_string(codec)));
    for (const auto& words : {dense, full, half}) {
      ByteBuffer b;
      encode_bitmap_frame(codec, words, b);
      const FrameHeader header = read_frame_header(b.bytes(), words.size() * 64);
      const std::uint64_t set = count_set_bits(words);
      EXPECT_EQ(header.complement, set > words.size() * 32);
      EXPECT_EQ(header.count, header.complement ? words.size() * 64 - set : set);
      std::vector<std::uint64_t> back(words.size(), 0x1234);
      decode_bitmap_frame(b.bytes(), back);
      EXPECT_EQ(back, words);
      // It holds positions, not ids: list decoding refuses it.
      if (header.complement) {
        EXPECT_THROW(decode_frame(b.bytes(), 1u << 20), DecodeError);
      }
    }
  }
  // A complement frame must fit the receiving bitmap, like any other.
  ByteBuffer b;
  encode_bitmap_frame(CodecId::kRice, dense, b);
  std::vector<std::uint64_t> too_small(dense.size() - 1);
  EXPECT_THROW(decode_bitmap_frame(b.bytes(), too_small), DecodeError);
}

// The complement flag is refused on sequences and on raw bitmap words.
TEST(Codec, RefusesTheComplementFlagWhereItMeansNothing) {
  const auto with_flags = [](CodecId codec, std::uint8_t flags, std::span<const std::uint64_t> ids, IdOrder order) {
    ByteBuffer b;
    encode_frame(codec, ids, order, b);
    std::vector<std::uint8_t> bytes(b.data(), b.data() + b.size());
    bytes[1] = flags;
    // Re-sign the header so that only the flag is wrong.
    const FrameHeader h = read_frame_header(b.bytes(), 1000);
    const std::uint32_t crc =
        frame_checksum({bytes.data(), h.header_bytes - 4}, {bytes.data() + h.header_bytes, h.payload_bytes});
    std::memcpy(bytes.data() + h.header_bytes - 4, &crc, 4);
    return bytes;
  };
  const std::vector<std::uint64_t> ids = {0, 3, 70};  // base 0: the bitmap codec copies words
  std::vector<std::uint64_t> words(2);
  EXPECT_THROW(read_frame_header(with_flags(CodecId::kVarint, 3, ids, IdOrder::kSequence), 1000), DecodeError);
  EXPECT_THROW(decode_bitmap_frame(with_flags(CodecId::kBitmap, 2, ids, IdOrder::kSortedSet), words), DecodeError);
  // A list frame flagged as a complement is a bitmap frame: 0, 3 and 70 clear.
  decode_bitmap_frame(with_flags(CodecId::kVarint, 2, ids, IdOrder::kSortedSet), words);
  EXPECT_EQ(words[0], ~std::uint64_t{0b1001});
  EXPECT_EQ(words[1], ~(std::uint64_t{1} << 6));
}

// Every strict prefix of a frame, and every single flipped bit, must be refused.
TEST(Codec, RefusesEveryTruncationAndEveryFlippedBit) {
  for (const CodecId codec : kAllCodecs) {
    for (const IdOrder order : {IdOrder::kSortedSet, IdOrder::kSequence}) {
      const std::vector<std::uint64_t> ids =
          order == IdOrder::kSortedSet ? random_set(300, 5000, 3) : random_sequence(300, 100, 70000, 3);
      ByteBuffer b;
      encode_frame(codec, ids, order, b);
      const std::vector<std::uint8_t> bytes(b.data(), b.data() + b.size());
      for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
        EXPECT_THROW(decode_frame(std::span(bytes).first(cut), ids.size()), DecodeError)
            << to_string(codec) << " cut at " << cut;
      }
      const std::size_t payload_start = read_frame_header(bytes, ids.size()).header_bytes;
      for (std::size_t bit = 0; bit < bytes.size() * 8; bit += 3) {
        std::vector<std::uint8_t> flipped = bytes;
        flipped[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
        try {
          const auto out = decode_frame(flipped, ids.size() + 8);
          // A flip the checksum cannot see would have to leave the frame meaning the
          // same ids (CRC-32C sees every single-bit error, so this must not happen).
          ADD_FAILURE() << to_string(codec) << ": flipped bit " << bit << " decoded to " << out.size() << " ids";
        } catch (const DecodeError& e) {
          // In the payload the checksum speaks first, also for the decoders that verify
          // it behind themselves and trip on the corrupted bytes before the end.
          if (bit / 8 >= payload_start) {
            EXPECT_NE(std::string(e.what()).find("frame checksum mismatch"), std::string::npos)
                << to_string(codec) << ": flipped bit " << bit << ": " << e.what();
          }
        }
      }
    }
  }
}

// Hostile frames with a valid checksum: the decoders' own checks must hold.
std::vector<std::uint8_t> forge(std::uint8_t codec, std::uint8_t flags, std::uint64_t count, std::uint64_t base,
                                const std::vector<std::uint8_t>& payload) {
  ByteBuffer b;
  b.put_u8(codec);
  b.put_u8(flags);
  b.put_varint(count);
  b.put_varint(base);
  b.put_u32(static_cast<std::uint32_t>(payload.size()));
  const std::uint32_t crc = frame_checksum(b.bytes(), payload);
  b.put_u32(crc);
  b.append(payload.data(), payload.size());
  return {b.data(), b.data() + b.size()};
}

TEST(Codec, RefusesHostileFramesWithValidChecksums) {
  const auto codec = [](CodecId c) { return static_cast<std::uint8_t>(c); };
  // Unknown codec, unknown flags, count above the bound, payload past the end.
  EXPECT_THROW(decode_frame(forge(99, 0, 0, 0, {}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(0, 4, 0, 0, {}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(0, 0, 1000000000000, 0, {}), 10), DecodeError);
  // none: wrong length, unsorted set.
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kNone), 0, 2, 0, std::vector<std::uint8_t>(15)), 10), DecodeError);
  std::vector<std::uint8_t> unsorted(16, 0);
  unsorted[0] = 5;
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kNone), 0, 2, 0, unsorted), 10), DecodeError);
  // varint: an 11-byte varint, a value past 64 bits, ids that overflow.
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kVarint), 0, 1, 0, std::vector<std::uint8_t>(11, 0x80)), 10),
               DecodeError);
  std::vector<std::uint8_t> too_big(9, 0xff);
  too_big.push_back(0x7f);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kVarint), 0, 1, 0, too_big), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kVarint), 0, 2, ~std::uint64_t{0}, {0, 0}), 10), DecodeError);
  EXPECT_THROW(
      decode_frame(
          forge(codec(CodecId::kVarint), 1, 1, 5, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}), 10),
      DecodeError);
  // bitpack: width above 64, missing packed bytes, reference overflow; pfor: bad positions.
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kBitpack), 1, 3, 0, {65, 0}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kBitpack), 1, 3, 0, {8, 0, 1}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kBitpack), 1, 1, 10,
                                  {0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}),
                            10),
               DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kPfor), 1, 2, 0, {0, 2, 0, 1, 1, 1, 1}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kPfor), 1, 2, 0, {0, 1, 0, 7, 1}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kPfor), 1, 2, 0, {0, 1, 0, 0, 0}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kPfor), 1, 2, 0, {64, 1, 0}), 10), DecodeError);
  // bitpack full blocks decoded straight into ids: a sorted set whose second block
  // carries it past 2^64, and sequences whose block passes 2^64 by its values or by its
  // reference.
  {
    const auto full_block = [](std::uint8_t width, std::uint64_t reference, std::uint8_t fill) {
      ByteBuffer block;
      block.put_u8(width);
      block.put_varint(reference);
      std::fill_n(block.extend(16 * std::size_t{width}), 16 * std::size_t{width}, fill);
      return std::vector<std::uint8_t>(block.data(), block.data() + block.size());
    };
    std::vector<std::uint8_t> two = full_block(0, 0, 0);
    const std::vector<std::uint8_t> wide = full_block(54, (std::uint64_t{1} << 54) - 1, 0xff);
    two.insert(two.end(), wide.begin(), wide.end());
    const std::uint64_t near_top = ~std::uint64_t{0} - (std::uint64_t{1} << 61);
    EXPECT_THROW(decode_frame(forge(codec(CodecId::kBitpack), 0, 256, near_top, two), 256), DecodeError);
    EXPECT_NO_THROW(decode_frame(forge(codec(CodecId::kBitpack), 0, 256, 0, two), 256));
    EXPECT_THROW(
        decode_frame(forge(codec(CodecId::kBitpack), 1, 128, ~std::uint64_t{0} - 254, full_block(8, 0, 0xff)), 128),
        DecodeError);
    EXPECT_NO_THROW(
        decode_frame(forge(codec(CodecId::kBitpack), 1, 128, ~std::uint64_t{0} - 255, full_block(8, 0, 0xff)), 128));
    EXPECT_THROW(decode_frame(forge(codec(CodecId::kBitpack), 1, 128, 2, full_block(1, ~std::uint64_t{0} - 1, 0)), 128),
                 DecodeError);
    // A sorted set's partial last block, fused with the prefix sum too: after a full
    // block, and alone (continuing from the base), carried past 2^64.
    ByteBuffer tail_block;
    tail_block.put_u8(54);
    tail_block.put_varint((std::uint64_t{1} << 54) - 1);
    std::fill_n(tail_block.extend(codec_detail::packed_bytes(100, 54)), codec_detail::packed_bytes(100, 54), 0xff);
    const std::vector<std::uint8_t> tail(tail_block.data(), tail_block.data() + tail_block.size());
    std::vector<std::uint8_t> block_and_tail = full_block(0, 0, 0);
    block_and_tail.insert(block_and_tail.end(), tail.begin(), tail.end());
    EXPECT_THROW(decode_frame(forge(codec(CodecId::kBitpack), 0, 228, near_top, block_and_tail), 228), DecodeError);
    EXPECT_NO_THROW(decode_frame(forge(codec(CodecId::kBitpack), 0, 228, 0, block_and_tail), 228));
    EXPECT_THROW(decode_frame(forge(codec(CodecId::kBitpack), 0, 100, near_top, tail), 100), DecodeError);
    EXPECT_NO_THROW(decode_frame(forge(codec(CodecId::kBitpack), 0, 100, 1, tail), 100));
  }
  // rice (u8 k, low bits, unary high parts): parameter above 64, stop bits missing, bits
  // after the last stop bit, bytes after the last block, a high part that carries a value
  // past 64 bits, ids that overflow.
  EXPECT_EQ(decode_frame(forge(codec(CodecId::kRice), 1, 2, 0, {1, 0b10, 0b0110}), 10),
            (std::vector<std::uint64_t>{2, 1}));
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kRice), 1, 2, 0, {65, 0b11}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kRice), 1, 2, 0, {1, 0b10, 0b0100}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kRice), 1, 2, 0, {1, 0b10, 0b1110}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kRice), 1, 2, 0, {1, 0b10, 0b0110, 0}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kRice), 1, 1, 0, {0, 0, 0}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kRice), 1, 1, 0, {0}), 10), DecodeError);
  {
    // k = 60, low bits 0, then a high part of 15 (the value 15 * 2^60 fits) or of 16
    // (2^64 does not).
    const auto wide = [](const std::vector<std::uint8_t>& unary) {
      ByteBuffer b;
      b.put_u8(60);
      b.put_u64(0);
      for (const std::uint8_t byte : unary) b.put_u8(byte);
      return std::vector<std::uint8_t>(b.data(), b.data() + b.size());
    };
    EXPECT_EQ(decode_frame(forge(codec(CodecId::kRice), 1, 1, 0, wide({0, 0x80})), 10),
              std::vector<std::uint64_t>{std::uint64_t{15} << 60});
    EXPECT_THROW(decode_frame(forge(codec(CodecId::kRice), 1, 1, 0, wide({0, 0, 1})), 10), DecodeError);
  }
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kRice), 0, 2, ~std::uint64_t{0}, {0, 0b11}), 10), DecodeError);
  // streamvbyte: control bytes announce more data than is present.
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kStreamVByte), 0, 4, 0, {0xff, 1, 2, 3}), 10), DecodeError);
  // roaring: garbage bitmap, ranges out of order, more ids than declared.
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kRoaring), 0, 1, 0, {0, 5, 1, 2, 3, 4, 5}), 10), DecodeError);
  {
    ByteBuffer two;
    const std::vector<std::uint64_t> ids = {1, 2, 3};
    encode_frame(CodecId::kRoaring, ids, IdOrder::kSortedSet, two);
    const FrameHeader h = read_frame_header(two.bytes(), 3);
    const std::vector<std::uint8_t> payload(two.data() + h.header_bytes, two.data() + two.size());
    EXPECT_THROW(decode_frame(forge(codec(CodecId::kRoaring), 0, 2, 0, payload), 10), DecodeError);
    EXPECT_THROW(decode_frame(forge(codec(CodecId::kRoaring), 1, 3, 0, payload), 10), DecodeError);
    std::vector<std::uint8_t> twice = payload;
    twice.insert(twice.end(), payload.begin(), payload.end());
    twice[payload.size()] = 0;  // a second range with the same high bits
    EXPECT_THROW(decode_frame(forge(codec(CodecId::kRoaring), 0, 6, 0, twice), 10), DecodeError);
  }
  // zstd: not a frame, wrong declared size.
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kZstd), 0, 1, 0, {1, 2, 3, 4, 5, 6, 7, 8, 9}), 10), DecodeError);
  {
    ByteBuffer z;
    const std::vector<std::uint64_t> ids = {1, 2, 3};
    encode_frame(CodecId::kZstd, ids, IdOrder::kSortedSet, z);
    const FrameHeader h = read_frame_header(z.bytes(), 3);
    const std::vector<std::uint8_t> payload(z.data() + h.header_bytes, z.data() + z.size());
    EXPECT_THROW(decode_frame(forge(codec(CodecId::kZstd), 0, 2, 1, payload), 10), DecodeError);
  }
  // bitmap: too few words for the span, bits past the span, wrong popcount, overflow.
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kBitmap), 0, 1, 0, {65, 1, 0, 0, 0, 0, 0, 0, 0}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kBitmap), 0, 1, 0, {3, 8, 0, 0, 0, 0, 0, 0, 0}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kBitmap), 0, 2, 0, {3, 1, 0, 0, 0, 0, 0, 0, 0}), 10), DecodeError);
  EXPECT_THROW(decode_frame(forge(codec(CodecId::kBitmap), 0, 1, ~std::uint64_t{0}, {3, 4, 0, 0, 0, 0, 0, 0, 0}), 10),
               DecodeError);
  // Bytes after the frame.
  ByteBuffer ok;
  encode_frame(CodecId::kVarint, std::vector<std::uint64_t>{1, 2}, IdOrder::kSortedSet, ok);
  ok.put_u8(0);
  EXPECT_THROW(decode_frame(ok.bytes(), 10), DecodeError);
}

}  // namespace
}  // namespace zbfs

namespace zbfs {
namespace {

// bitpack decodes a sorted set's full blocks with a kernel per width that also sums the
// gaps (on 256-bit vectors where the build targets AVX2), and the rest of each frame, a
// sequence's blocks included, with the plain unpackers: every width, a base of 0 (whose
// first block takes the general path) and not, and sets that end at 2^64 - 1.
TEST(Codec, BitpackDecodesEveryBlockWidth) {
  std::mt19937_64 rng(23);
  const auto below = [&rng](unsigned bits) { return bits == 0 ? 0 : rng() >> (64 - bits); };
  for (unsigned b = 0; b <= 54; ++b) {  // 3.5 blocks of gaps below 2^b + 1 stay below 2^64
    const std::uint64_t span = std::uint64_t{448} << b;
    for (const std::uint64_t start : {std::uint64_t{0}, std::uint64_t{12345}, ~std::uint64_t{0} - span}) {
      std::vector<std::uint64_t> ids{start};
      for (std::size_t i = 1; i < 448; ++i) ids.push_back(ids.back() + 1 + below(b));
      ByteBuffer frame;
      ASSERT_EQ(encode_frame(CodecId::kBitpack, ids, IdOrder::kSortedSet, frame), CodecId::kBitpack);
      EXPECT_EQ(decode_frame(frame.bytes(), ids.size()), ids) << "gaps of " << b << " bits from " << start;
    }
  }
  for (unsigned b = 0; b <= 64; ++b) {
    std::vector<std::uint64_t> values(300);
    for (auto& v : values) v = (b == 64 ? 0 : std::uint64_t{7} << b) | below(b);
    ByteBuffer frame;
    encode_frame(CodecId::kBitpack, values, IdOrder::kSequence, frame);
    EXPECT_EQ(decode_frame(frame.bytes(), values.size()), values) << "values of " << b << " bits";
  }
}

// The fused kernels in use (on 256-bit vectors where the build targets AVX2, one of them
// checksumming too) and the portable ones against a plain prefix sum, at every width,
// wrapping as unsigned sums do.
TEST(Codec, GapKernelsMatchAPlainPrefixSumAtEveryWidth) {
  using namespace codec_detail;
  std::mt19937_64 rng(29);
  for (unsigned b = 0; b <= 64; ++b) {
    std::array<std::uint64_t, kBlock> values{};
    for (auto& v : values) v = b == 0 ? 0 : rng() >> (64 - b);
    std::vector<std::uint8_t> packed(16 * std::size_t{b} + 1);
    if (b > 0) kResidualPackers[b](values.data(), 0, packed.data());
    const std::uint64_t step = rng() % 1000;
    const std::uint64_t last = rng();
    std::array<std::uint64_t, kBlock> expected{};
    std::uint64_t x = last;
    for (std::size_t k = 0; k < kBlock; ++k) expected[k] = x += values[k] + step;
    std::array<std::uint64_t, kBlock> in_use{};
    std::array<std::uint64_t, kBlock> in_pairs{};
    EXPECT_EQ(kGapUnpackers[b](packed.data(), step, last, in_use.data()), x) << b;
    EXPECT_EQ(kGapUnpackersInPairs[b](packed.data(), step, last, in_pairs.data()), x) << b;
    EXPECT_EQ(in_use, expected) << b;
    EXPECT_EQ(in_pairs, expected) << b;
#if defined(ZBFS_WIDE_GAP_KERNEL)
    // The packer and the gap kernel that also continue a CRC register over the packed
    // words.
    if (b > 0) {
      std::vector<std::uint8_t> repacked(packed.size());
      const auto seed = static_cast<std::uint32_t>(rng());
      const std::uint32_t register_after = kChecksummedResidualPackers[b](values.data(), 0, repacked.data(), ~seed);
      EXPECT_EQ(repacked, packed) << b;
      EXPECT_EQ(register_after, ~crc32c({packed.data(), 16 * std::size_t{b}}, seed)) << b;
    }
    const auto crc = static_cast<std::uint32_t>(rng());
    const std::span<const std::uint8_t> words(packed.data(), 16 * std::size_t{b});
    std::array<std::uint64_t, kBlock> checksummed{};
    const GapBlockEnd end = kChecksummedGapUnpackers[b](packed.data(), step, last, checksummed.data(), ~crc);
    EXPECT_EQ(end.last, x) << b;
    EXPECT_EQ(end.crc, ~crc32c(words, crc)) << b;
    EXPECT_EQ(checksummed, expected) << b;
#endif
  }
}

// Partial blocks (a message's last ids, and short messages) are a plain little-endian bit
// stream: value k's bit j is the stream's bit k * b + j. Both packers (kernels per width
// up to 56 bits, in groups of eight values and then one at a time; a byte at a time
// above) must write exactly that, ignoring bits above b, and the unpackers (the plain one
// and the one fused with a sorted set's prefix sum) read it back without reading past it
// (the packed input is exactly its size). Every length below a block: every group count
// and remainder.
TEST(Codec, PartialBlocksPackTheLittleEndianBitStreamAtEveryWidth) {
  using namespace codec_detail;
  std::mt19937_64 rng(31);
  for (unsigned b = 1; b <= 64; ++b) {
    for (std::size_t n = 1; n < kBlock; ++n) {
      const std::uint64_t reference = rng() % 1000;
      std::vector<std::uint64_t> values(n);
      for (auto& v : values) v = reference + rng();  // bits above b too, which must not show
      std::vector<std::uint8_t> expected(packed_bytes(n, b), 0);
      for (std::size_t k = 0; k < n; ++k) {
        for (unsigned j = 0; j < b; ++j) {
          const std::size_t bit = k * b + j;
          if ((((values[k] - reference) >> j) & 1) != 0)
            expected[bit / 8] |= static_cast<std::uint8_t>(1u << (bit % 8));
        }
      }
      std::vector<std::uint8_t> packed(packed_bytes(n, b) + 1, 0xA5);  // the byte after must stay
      pack_stream(values.data(), n, b, reference, packed.data());
      EXPECT_EQ(packed.back(), 0xA5) << b << " bits, " << n << " values";
      packed.pop_back();
      EXPECT_EQ(packed, expected) << b << " bits, " << n << " values";
      std::vector<std::uint64_t> unpacked(n);
      unpack_stream(packed.data(), n, b, reference, unpacked.data());
      for (std::size_t k = 0; k < n; ++k) {
        ASSERT_EQ(unpacked[k], ((values[k] - reference) & mask_of(b)) + reference) << b << " bits, value " << k;
      }
      if (b > kWidestStreamKernel) continue;
      const std::uint64_t step = 1 + rng() % 3;
      std::uint64_t last = rng() >> 8;
      const std::uint64_t start = last;
      std::vector<std::uint64_t> ids(n);
      std::vector<std::uint64_t> expected_ids(n);
      for (std::size_t k = 0; k < n; ++k) expected_ids[k] = last += ((values[k] - reference) & mask_of(b)) + step;
      EXPECT_EQ(kGapStreamUnpackers[b](packed.data(), n, step, start, ids.data()), last) << b << " bits, " << n;
      ASSERT_EQ(ids, expected_ids) << b << " bits, " << n << " values";
    }
  }
}

// Rice decodes a sorted set's full blocks after the first from the stop bits' positions
// (fused with the prefix sum), and everything else by taking the high parts apart: both
// must give the same ids, at every parameter, near the top of the id range and for
// unary streams the fast path does not take.
TEST(Codec, RiceFullBlocksDecodeLikeTheGeneralPath) {
  std::mt19937_64 rng(17);
  for (unsigned s = 0; s <= 54; ++s) {  // 448 gaps below 2^(s+1) each stay below 2^64
    for (const std::uint64_t start : {std::uint64_t{0}, ~std::uint64_t{0} - (std::uint64_t{448} << (s + 1))}) {
      std::vector<std::uint64_t> ids;  // 3.5 blocks with gaps of mean about 2^s
      std::uint64_t x = start;
      for (std::size_t i = 0; i < 448; ++i) {
        ids.push_back(x);
        x += 1 + (rng() >> (63 - s));
      }
      ByteBuffer b;
      encode_frame(CodecId::kRice, ids, IdOrder::kSortedSet, b);
      EXPECT_EQ(decode_frame(b.bytes(), ids.size()), ids) << "mean gap 2^" << s << " from " << start;
    }
  }
  const auto codec = static_cast<std::uint8_t>(CodecId::kRice);
  const auto block = [](std::uint8_t k, std::uint8_t low_fill, const std::vector<std::uint8_t>& unary) {
    std::vector<std::uint8_t> b(1 + 16 * std::size_t{k}, low_fill);
    b[0] = k;
    b.insert(b.end(), unary.begin(), unary.end());
    return b;
  };
  const auto concat = [](std::vector<std::uint8_t> a, const std::vector<std::uint8_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::vector<std::uint8_t> all_stops(16, 0xff);             // 128 high parts of 0
  const std::vector<std::uint8_t> first = block(0, 0, all_stops);  // ids base .. base + 127
  // A first high part of 8 * 4100 (an encoder never writes it): positions past 16 bits,
  // read by the general path.
  std::vector<std::uint8_t> long_run(4100 + 16, 0);
  std::fill(long_run.begin() + 4100, long_run.end(), 0xff);
  std::vector<std::uint64_t> expected(256);
  for (std::uint64_t i = 0; i < 256; ++i) expected[i] = i < 128 ? i : i + 8 * 4100;
  EXPECT_EQ(decode_frame(forge(codec, 0, 256, 0, concat(first, block(0, 0, long_run))), 256), expected);
  // Fast-path blocks: stop bits missing, a stop bit after the 128th, low bits missing.
  std::vector<std::uint8_t> short_unary(15, 0xff);
  EXPECT_THROW(decode_frame(forge(codec, 0, 256, 0, concat(first, block(0, 0, short_unary))), 256), DecodeError);
  std::vector<std::uint8_t> extra(17, 0xff);  // 7 stop bits, then 120, then 2 in the last byte
  extra.front() = 0xfe;
  extra.back() = 0b11;
  EXPECT_THROW(decode_frame(forge(codec, 0, 256, 0, concat(first, block(0, 0, extra))), 256), DecodeError);
  extra.back() = 0b01;
  EXPECT_NO_THROW(decode_frame(forge(codec, 0, 256, 0, concat(first, block(0, 0, extra))), 256));
  EXPECT_THROW(decode_frame(forge(codec, 0, 256, 0, concat(first, {3, 0})), 256), DecodeError);
  // The widest fast-path parameter with every low bit set: 128 * 2^46 past the first
  // block, past 2^64 from near the top, and exactly as the general path from 0.
  const std::vector<std::uint8_t> wide = concat(first, block(46, 0xff, all_stops));
  EXPECT_THROW(decode_frame(forge(codec, 0, 256, ~std::uint64_t{0} - (std::uint64_t{1} << 50), wide), 256),
               DecodeError);
  const std::vector<std::uint64_t> decoded = decode_frame(forge(codec, 0, 256, 0, wide), 256);
  for (std::uint64_t i = 128; i < 256; ++i) ASSERT_EQ(decoded[i], 127 + (i - 127) * (std::uint64_t{1} << 46)) << i;
}

TEST(CodecCost, EstimatesFollowThePerIdFiguresByHand) {
  const CodecCostModel model = CodecCostModel::uniform({4, 1e-9, 2e-9}, 0.5e-9, 3e-9);
  MessageShape ids;
  ids.count = 1000;
  ids.spread_bits = 3;
  const CodecEstimate e = model.estimate(CodecId::kBitpack, ids);
  EXPECT_DOUBLE_EQ(e.bytes, 1000 * 4 / 8.0 + 14);
  EXPECT_DOUBLE_EQ(e.encode_s, 1e-6);
  EXPECT_DOUBLE_EQ(e.decode_s, 2e-6);
  const LinkCost link{1e-6, 1e8};
  EXPECT_DOUBLE_EQ(e.total_s(link), 1e-6 + 1e-6 + 514 / 1e8 + 2e-6);
  // An unsorted set pays the sort, except with none, which auto sends unframed: the ids
  // as they are, no work at either end.
  ids.needs_sort = true;
  EXPECT_DOUBLE_EQ(model.estimate(CodecId::kBitpack, ids).encode_s, 1e-6 + 3e-6);
  const CodecEstimate unframed = model.estimate(CodecId::kNone, ids);
  EXPECT_DOUBLE_EQ(unframed.bytes, 8000);
  EXPECT_DOUBLE_EQ(unframed.encode_s + unframed.decode_s, 0);
  // A bitmap: its words as they are (unframed), or its set bits extracted (scan per
  // word) and coded.
  MessageShape bitmap;
  bitmap.bitmap_words = 100;
  bitmap.count = 640;
  bitmap.spread_bits = 3.3219280948873622;
  EXPECT_DOUBLE_EQ(model.estimate(CodecId::kBitmap, bitmap).bytes, 800);
  EXPECT_DOUBLE_EQ(model.estimate(CodecId::kBitmap, bitmap).encode_s, 0);
  EXPECT_DOUBLE_EQ(model.estimate(CodecId::kVarint, bitmap).encode_s, 640 * 1e-9 + 100 * 0.5e-9);
  // A bitmap's shape counts what a list codec carries: its zero bits once they are fewer.
  std::vector<std::uint64_t> words(10, ~std::uint64_t{0});
  words[3] = 0b101;
  EXPECT_EQ(MessageShape::of_bitmap(words).count, 62u);
  EXPECT_DOUBLE_EQ(MessageShape::of_bitmap(words).spread_bits, std::log2(640.0 / 62));
  words.assign(10, 0b101);
  EXPECT_EQ(MessageShape::of_bitmap(words).count, 20u);
  // Roaring and bitmap cannot carry sequences.
  MessageShape sequence;
  sequence.count = 10;
  sequence.order = IdOrder::kSequence;
  EXPECT_TRUE(std::isinf(model.estimate(CodecId::kRoaring, sequence).total_s(link)));
}

TEST(CodecCost, AutoCompressesOnSlowLinksAndNotOnFastOnes) {
  const CodecCostModel model = CodecCostModel::calibrate();
  for (const CodecId codec : {CodecId::kNone, CodecId::kBitpack, CodecId::kVarint}) {
    const CodecPoint& dense = model.point(codec, IdOrder::kSortedSet, 1);
    EXPECT_GT(dense.encode_s_per_id, 0.0) << to_string(codec);
    EXPECT_GT(dense.decode_s_per_id, 0.0) << to_string(codec);
  }
  EXPECT_NEAR(model.point(CodecId::kNone, IdOrder::kSortedSet, 4).bits_per_id, 64, 0.1);
  EXPECT_LT(model.point(CodecId::kBitpack, IdOrder::kSortedSet, 1).bits_per_id, 6);
  const std::vector<std::uint64_t> dense = random_set(20000, 80000, 5);
  const MessageShape shape = MessageShape::of_ids(dense, IdOrder::kSortedSet);
  EXPECT_NEAR(shape.spread_bits, 2, 0.01);
  const LinkCost gigabit{50e-6, 117.5e6};
  const CodecId slow = model.choose(shape, gigabit);
  EXPECT_NE(slow, CodecId::kNone);
  EXPECT_LT(model.estimate(slow, shape).bytes * 8, model.estimate(CodecId::kNone, shape).bytes);
  // On any link the choice is the codec of least predicted time; on a link faster than
  // any codec that is the one of least CPU time.
  const LinkCost instant{0, 1e15};
  const std::vector<std::uint64_t> sparse = random_set(2000, std::uint64_t{1} << 40, 6);
  const MessageShape sparse_shape = MessageShape::of_ids(sparse, IdOrder::kSortedSet);
  for (const LinkCost& link : {gigabit, instant, LinkCost{1e-6, 3e9}}) {
    for (const MessageShape& s : {shape, sparse_shape}) {
      const double chosen = model.estimate(model.choose(s, link), s).total_s(link);
      for (const CodecId codec : kAllCodecs) EXPECT_LE(chosen, model.estimate(codec, s).total_s(link));
    }
  }
  // Bitmap messages: dense ones stay bitmaps on fast links.
  std::vector<std::uint64_t> words(1000, 0x5555555555555555ULL);
  EXPECT_EQ(model.choose(MessageShape::of_bitmap(words), instant), CodecId::kBitmap);
}

}  // namespace
}  // namespace zbfs

namespace zbfs {
namespace {

// auto corrects its predicted codec times by what encoding costs in the run: here the
// model predicts a microsecond per id at each end, far more than varint takes, so after a
// millisecond of predicted work the scale drops to its floor (0.5), and a link on which
// compression did not pay at the calibrated figures now gets compressed messages.
TEST(MessageCodecAuto, LearnsWhatEncodingCostsInTheRun) {
  auto model = std::make_shared<const CodecCostModel>(CodecCostModel::uniform({4, 1e-6, 1e-6}, 1e-9));
  MessageCodec codec(*parse_codec_choice("auto"), model);
  // Pays iff 7.5 bytes per id saved cost more than 2 us * scale: below 3.75 MB/s at scale
  // 1, below 7.5 MB/s at scale 0.5.
  const LinkCost slow{1e-6, 1e6};
  const LinkCost middling{1e-6, 5e6};
  std::vector<std::uint64_t> ids;
  for (std::uint64_t v = 0; v < 200; ++v) ids.push_back(v * 1000);  // too sparse for a bitmap to pay
  ByteBuffer out;
  EXPECT_EQ(codec.cpu_scale(), 1.0);
  EXPECT_FALSE(codec.encode_ids(ids, IdsAre::kSet, &middling, out).framed);
  EXPECT_TRUE(out.empty());
  for (int k = 0; k < 10; ++k) {
    const MessageCodec::Encoding how = codec.encode_ids(ids, IdsAre::kSet, &slow, out);
    EXPECT_TRUE(how.framed);
    EXPECT_EQ(how.codec, CodecId::kVarint);  // the first among equals
  }
  EXPECT_EQ(codec.cpu_scale(), 0.5);
  out.clear();
  EXPECT_TRUE(codec.encode_ids(ids, IdsAre::kSet, &middling, out).framed);
  EXPECT_EQ(decode_frame(out.bytes(), ids.size()), ids);
  // A fixed codec frames whatever it is given, and learns nothing.
  MessageCodec fixed(*parse_codec_choice("bitpack"), nullptr);
  out.clear();
  EXPECT_TRUE(fixed.encode_ids(ids, IdsAre::kSet, &middling, out).framed);
  EXPECT_EQ(fixed.cpu_scale(), 1.0);
}

}  // namespace
}  // namespace zbfs
