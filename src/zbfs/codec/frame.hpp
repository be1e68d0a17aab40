// Frames: the self-describing unit every codec writes. A frame holds one sequence of
// 64-bit ids, encoded by one codec, behind a small header:
//
//   u8 codec | u8 flags (bit 0: sequence, else sorted set; bit 1: the set lists a
//   bitmap's zero bits) | varint count | varint base | u32 payload bytes | u32 CRC-32C
//   of the header bytes before it and the payload | payload
//
// Codecs work on the native 64-bit ids (on residuals, see residuals.hpp); none converts
// them to 32 bits first. A codec that cannot carry a given sequence (roaring and bitmap
// hold sets only; streamvbyte needs residuals below 2^32; a bitmap of a sparse set would
// outgrow the list) falls back to bitpack, and the frame names the codec actually used.
// Decoders check every header field, bound every read and write, verify the checksum,
// and throw DecodeError on anything malformed. Nothing here is collective.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/codec/codec_id.hpp"
#include "zbfs/core/byte_buffer.hpp"

namespace zbfs {

enum class IdOrder : std::uint8_t {
  kSortedSet = 0,  // strictly increasing; decoded frames are guaranteed strictly increasing
  kSequence = 1,   // any values, order kept
};

struct FrameHeader {
  CodecId codec = CodecId::kNone;
  IdOrder order = IdOrder::kSortedSet;
  std::uint64_t count = 0;
  std::uint64_t base = 0;
  // A bitmap frame of the positions of its zero bits (a bitmap more than half full lists
  // fewer positions so); only decode_bitmap_frame accepts it.
  bool complement = false;
  std::size_t header_bytes = 0;   // up to and including the checksum
  std::size_t payload_bytes = 0;  // after the header
  std::uint32_t checksum = 0;
  [[nodiscard]] std::size_t frame_bytes() const { return header_bytes + payload_bytes; }
};

// The largest header a frame can have.
constexpr std::size_t kMaxFrameHeaderBytes = 2 + 3 * 10 + 4;

// Appends one frame of `ids` to `out`; returns the codec used (see fallbacks above).
// Sorted-set input must be strictly increasing.
CodecId encode_frame(CodecId codec, std::span<const std::uint64_t> ids, IdOrder order, ByteBuffer& out);

// The frame of the set bits of `words` (bit b of word w is position 64w + b) as a sorted
// set of positions, or of its zero bits' positions when more than half the bits are set.
// With kBitmap the words are copied as they are, with no extraction.
CodecId encode_bitmap_frame(CodecId codec, std::span<const std::uint64_t> words, ByteBuffer& out);

// Parses the header of the frame at the start of `bytes`; checks its fields and that the
// payload is present, and refuses counts above max_count (the caller's bound on what it
// can receive, checked before anything is allocated). Does not check the checksum.
FrameHeader read_frame_header(std::span<const std::uint8_t> bytes, std::uint64_t max_count);

// Decodes the frame `header` describes (as read from the same bytes) into out[0, count),
// verifying the checksum first. A complement frame is refused (it holds no ids).
void decode_frame_into(std::span<const std::uint8_t> bytes, const FrameHeader& header, std::uint64_t* out);

// The checksum of a frame with this header (the bytes before the checksum) and payload;
// for tools and tests that build frames by hand.
std::uint32_t frame_checksum(std::span<const std::uint8_t> header_before_checksum,
                             std::span<const std::uint8_t> payload);

// Decodes a whole buffer that must hold exactly one frame.
std::vector<std::uint64_t> decode_frame(std::span<const std::uint8_t> bytes, std::uint64_t max_count);

// Decodes a frame of positions into `words` (cleared first); every position must be
// below 64 * words.size().
void decode_bitmap_frame(std::span<const std::uint8_t> bytes, std::span<std::uint64_t> words);

}  // namespace zbfs
