// bitmap: a sorted set as one bit per id of [base, last], base being the first id:
//
//   varint span (last - base + 1, 0 for an empty set) | ceil(span / 64) little-endian words
//
// Bits past the span must be zero and the bits set must number the declared count.
#include <bit>
#include <cstring>

#include "zbfs/codec/payload_codecs.hpp"
#include "zbfs/codec/sorted_set.hpp"

namespace zbfs::codec_detail {
namespace {

std::uint64_t words_for(std::uint64_t span) { return span / 64 + (span % 64 != 0 ? 1 : 0); }

std::span<const std::uint8_t> read_words(ByteReader& reader, std::uint64_t& span) {
  span = reader.varint("bitmap span");
  const std::uint64_t words = words_for(span);
  if (words > reader.remaining() / 8) throw DecodeError("bitmap shorter than its span");
  const std::span<const std::uint8_t> bytes = reader.take(static_cast<std::size_t>(words * 8), "bitmap words");
  if (reader.remaining() != 0) throw DecodeError("bytes left after the bitmap");
  if (span % 64 != 0) {
    std::uint64_t last = 0;
    std::memcpy(&last, bytes.data() + bytes.size() - 8, 8);
    if ((last >> (span % 64)) != 0) throw DecodeError("bitmap bits set past its span");
  }
  return bytes;
}

}  // namespace

void encode_bitmap(const PayloadInput& in, ByteBuffer& out) {
  if (in.ids.empty()) {
    out.put_varint(0);
    return;
  }
  const std::uint64_t span = in.ids.back() - in.base + 1;
  const std::uint64_t words = words_for(span);
  out.put_varint(span);
  // The buffer may be unaligned: words are stored through memcpy.
  std::uint8_t* at = out.extend(static_cast<std::size_t>(words * 8));
  std::uint64_t word = 0;
  std::uint64_t current = 0;
  for (const std::uint64_t id : in.ids) {
    const std::uint64_t offset = id - in.base;
    const std::uint64_t w = offset / 64;
    while (current < w) {
      std::memcpy(at + 8 * current++, &word, 8);
      word = 0;
    }
    word |= std::uint64_t{1} << (offset % 64);
  }
  std::memcpy(at + 8 * current, &word, 8);
}

void encode_bitmap_words(std::span<const std::uint64_t> words, ByteBuffer& out) {
  out.put_varint(words.size() * 64);
  out.append(words.data(), words.size_bytes());
}

void decode_bitmap(std::span<const std::uint8_t> payload, const PayloadOutput& out) {
  if (out.order != IdOrder::kSortedSet) throw DecodeError("bitmap frame of a sequence");
  ByteReader reader(payload);
  std::uint64_t span = 0;
  const std::span<const std::uint8_t> bytes = read_words(reader, span);
  if (span != 0 && span - 1 > ~std::uint64_t{0} - out.base) throw DecodeError("bitmap span overflows 64 bits");
  std::uint64_t written = 0;
  for (std::size_t w = 0; w < bytes.size() / 8; ++w) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, bytes.data() + w * 8, 8);
    if (static_cast<std::uint64_t>(std::popcount(bits)) > out.count - written) {
      throw DecodeError("bitmap holds more ids than declared");
    }
    for (; bits != 0; bits &= bits - 1) {
      out.ids[written++] = out.base + w * 64 + static_cast<std::uint64_t>(std::countr_zero(bits));
    }
  }
  if (written != out.count) throw DecodeError("bitmap holds fewer ids than declared");
}

std::uint64_t decode_bitmap_words(std::span<const std::uint8_t> payload, std::span<std::uint64_t> words) {
  ByteReader reader(payload);
  std::uint64_t span = 0;
  const std::span<const std::uint8_t> bytes = read_words(reader, span);
  if (bytes.size() / 8 > words.size()) throw DecodeError("bitmap longer than the receiving bitmap");
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return count_set_bits(words.first(bytes.size() / 8));
}

}  // namespace zbfs::codec_detail
