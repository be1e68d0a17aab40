// The payload half of each codec (frame.cpp writes and checks the header around it).
// Encoders append the payload for ids[0, n) to `out` and return false when they cannot
// carry this input (the frame then falls back); decoders read exactly `payload`, write
// exactly out[0, count) and throw DecodeError otherwise. Internal to the codec folder.
#pragma once

#include <cstdint>
#include <span>

#include "zbfs/codec/frame.hpp"

namespace zbfs::codec_detail {

struct PayloadInput {
  std::span<const std::uint64_t> ids;
  IdOrder order;
  std::uint64_t base;
};

struct PayloadOutput {
  std::uint64_t* ids;
  std::uint64_t count;
  IdOrder order;
  std::uint64_t base;
};

void encode_none(const PayloadInput& in, ByteBuffer& out);
void decode_none(std::span<const std::uint8_t> payload, const PayloadOutput& out);

void encode_varint(const PayloadInput& in, ByteBuffer& out);
void decode_varint(std::span<const std::uint8_t> payload, const PayloadOutput& out);

// bitpack (with_exceptions = false) and pfor (true) share the block format. Both return
// the payload's CRC-32C, which they take on the way (the frame's checksum continues it
// over the header): the decoder in strides behind itself, so that the crc32 instructions
// overlap the unpacking, and both in the fused kernels of a sorted set's blocks. The
// decoder's result is only to be trusted once that checksum matches (frame.cpp reports a
// mismatch before any error the decoder threw).
std::uint32_t encode_blocks(const PayloadInput& in, bool with_exceptions, ByteBuffer& out);
std::uint32_t decode_blocks(std::span<const std::uint8_t> payload, bool with_exceptions, const PayloadOutput& out);

// Golomb-Rice in blocks of 128 (rice_codec.cpp, with bitpack's kernels).
void encode_rice(const PayloadInput& in, ByteBuffer& out);
void decode_rice(std::span<const std::uint8_t> payload, const PayloadOutput& out);

bool encode_streamvbyte(const PayloadInput& in, ByteBuffer& out);
void decode_streamvbyte(std::span<const std::uint8_t> payload, const PayloadOutput& out);

void encode_roaring(const PayloadInput& in, ByteBuffer& out);  // sorted sets only
void decode_roaring(std::span<const std::uint8_t> payload, const PayloadOutput& out);

void encode_zstd(const PayloadInput& in, ByteBuffer& out);
void decode_zstd(std::span<const std::uint8_t> payload, const PayloadOutput& out);

// Sorted sets only, base = first id; words over [base, last].
void encode_bitmap(const PayloadInput& in, ByteBuffer& out);
// Bitmap payload straight from words (positions 64w + b, base 0).
void encode_bitmap_words(std::span<const std::uint64_t> words, ByteBuffer& out);
void decode_bitmap(std::span<const std::uint8_t> payload, const PayloadOutput& out);
// When base is 0 and the span fits: OR the payload's words into `words` directly.
// Returns the number of set bits (the caller checks it against the header).
std::uint64_t decode_bitmap_words(std::span<const std::uint8_t> payload, std::span<std::uint64_t> words);

}  // namespace zbfs::codec_detail
