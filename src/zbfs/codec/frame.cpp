#include "zbfs/codec/frame.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstring>
#include <optional>

#include "zbfs/codec/checksum.hpp"
#include "zbfs/codec/payload_codecs.hpp"
#include "zbfs/codec/residuals.hpp"
#include "zbfs/codec/sorted_set.hpp"

namespace zbfs {
namespace {

using codec_detail::PayloadInput;
using codec_detail::PayloadOutput;

constexpr std::uint8_t kSequenceFlag = 1;
constexpr std::uint8_t kComplementFlag = 2;

// The codec that will actually encode this input.
CodecId resolve(CodecId codec, std::span<const std::uint64_t> ids, IdOrder order) {
  if ((codec == CodecId::kRoaring || codec == CodecId::kBitmap) && order == IdOrder::kSequence) {
    return CodecId::kBitpack;
  }
  if (codec == CodecId::kBitmap && !ids.empty()) {
    // A bitmap larger than the ids themselves does not pay (and a sparse set over a wide
    // range would not even fit in memory).
    const std::uint64_t span_bits = ids.back() - ids.front();
    if (span_bits / 64 > ids.size() + 8) return CodecId::kBitpack;
  }
  return codec;
}

// The frame's base: residuals are taken from it. Block codecs give each block of a
// sequence its own reference, so they skip the pass over the ids a minimum would cost.
std::uint64_t base_of(CodecId codec, std::span<const std::uint64_t> ids, IdOrder order) {
  if (ids.empty()) return 0;
  if (order == IdOrder::kSortedSet) return ids.front();
  if (codec == CodecId::kBitpack || codec == CodecId::kPfor) return 0;
  return codec_detail::range_of_ids(ids.data(), ids.size()).lowest;
}

// Writes the header up to the payload length; returns where the length and checksum go.
std::size_t begin_frame(CodecId codec, IdOrder order, std::uint64_t count, std::uint64_t base, ByteBuffer& out,
                        bool complement = false) {
  out.put_u8(static_cast<std::uint8_t>(codec));
  out.put_u8(static_cast<std::uint8_t>((order == IdOrder::kSequence ? kSequenceFlag : 0) |
                                       (complement ? kComplementFlag : 0)));
  out.put_varint(count);
  out.put_varint(base);
  const std::size_t slot = out.size();
  out.extend(8);  // payload bytes (u32) and checksum (u32), filled in by end_frame
  return slot;
}

// Fills in the payload length and the checksum, from the payload's CRC-32C where the
// encoder took it on the way.
void end_frame(std::size_t frame_start, std::size_t slot, ByteBuffer& out,
               std::optional<std::uint32_t> payload_crc = std::nullopt) {
  const std::size_t payload = out.size() - slot - 8;
  if (payload > UINT32_MAX) throw Error(ExitCode::kFailure, "frame payload above 4 GiB; use more ranks");
  const auto payload32 = static_cast<std::uint32_t>(payload);
  std::memcpy(out.data() + slot, &payload32, 4);
  if (!payload_crc) payload_crc = crc32c({out.data() + slot + 8, payload});
  const std::uint32_t crc = crc32c({out.data() + frame_start, slot + 4 - frame_start}, *payload_crc);
  std::memcpy(out.data() + slot + 4, &crc, 4);
}

// The frame's payload, not yet verified.
std::span<const std::uint8_t> payload_of(std::span<const std::uint8_t> bytes, const FrameHeader& header) {
  if (header.frame_bytes() > bytes.size()) throw DecodeError("frame longer than its buffer");
  return bytes.subspan(header.header_bytes, header.payload_bytes);
}

// The frame's payload, once its checksum is verified.
std::span<const std::uint8_t> verified_payload(std::span<const std::uint8_t> bytes, const FrameHeader& header) {
  const std::span<const std::uint8_t> payload = payload_of(bytes, header);
  if (frame_checksum(bytes.first(header.header_bytes - 4), payload) != header.checksum) {
    throw DecodeError("frame checksum mismatch");
  }
  return payload;
}

// Appends the payload; returns its CRC-32C where the encoder took it on the way.
std::optional<std::uint32_t> encode_payload(CodecId codec, const PayloadInput& in, ByteBuffer& out) {
  switch (codec) {
    case CodecId::kNone: codec_detail::encode_none(in, out); break;
    case CodecId::kVarint: codec_detail::encode_varint(in, out); break;
    case CodecId::kBitpack: return codec_detail::encode_blocks(in, false, out);
    case CodecId::kPfor: return codec_detail::encode_blocks(in, true, out);
    case CodecId::kStreamVByte: break;  // handled by the caller (it may fall back)
    case CodecId::kRoaring: codec_detail::encode_roaring(in, out); break;
    case CodecId::kZstd: codec_detail::encode_zstd(in, out); break;
    case CodecId::kBitmap: codec_detail::encode_bitmap(in, out); break;
    case CodecId::kRice: codec_detail::encode_rice(in, out); break;
  }
  return std::nullopt;
}

CodecId encode_ids_frame(CodecId codec, std::span<const std::uint64_t> ids, IdOrder order, bool complement,
                         ByteBuffer& out) {
  codec = resolve(codec, ids, order);
  const PayloadInput in{ids, order, base_of(codec, ids, order)};
  const std::size_t start = out.size();
  std::size_t slot = begin_frame(codec, order, ids.size(), in.base, out, complement);
  if (codec == CodecId::kStreamVByte && !codec_detail::encode_streamvbyte(in, out)) {
    // A residual of 2^32 or more: start the frame again as bitpack.
    out.shrink_to(start);
    codec = CodecId::kBitpack;
    slot = begin_frame(codec, order, ids.size(), in.base, out, complement);
  }
  const std::optional<std::uint32_t> payload_crc =
      codec != CodecId::kStreamVByte ? encode_payload(codec, in, out) : std::nullopt;
  end_frame(start, slot, out, payload_crc);
  return codec;
}

}  // namespace

CodecId encode_frame(CodecId codec, std::span<const std::uint64_t> ids, IdOrder order, ByteBuffer& out) {
  return encode_ids_frame(codec, ids, order, false, out);
}

CodecId encode_bitmap_frame(CodecId codec, std::span<const std::uint64_t> words, ByteBuffer& out) {
  if (codec == CodecId::kBitmap) {
    const std::size_t start = out.size();
    const std::size_t slot = begin_frame(codec, IdOrder::kSortedSet, count_set_bits(words), 0, out);
    codec_detail::encode_bitmap_words(words, out);
    end_frame(start, slot, out);
    return codec;
  }
  // More than half full, the zero bits are the shorter list (and code to fewer bits:
  // the same entropy spread over fewer ids).
  const bool complement = count_set_bits(words) > words.size() * 32;
  std::vector<std::uint64_t> positions;
  if (complement) {
    append_clear_bits(words, positions);
  } else {
    append_set_bits(words, 0, positions);
  }
  return encode_ids_frame(codec, positions, IdOrder::kSortedSet, complement, out);
}

FrameHeader read_frame_header(std::span<const std::uint8_t> bytes, std::uint64_t max_count) {
  ByteReader reader(bytes);
  FrameHeader h;
  const std::uint8_t codec = reader.u8("frame codec");
  const std::optional<CodecId> known = codec_from_wire(codec);
  if (!known) throw DecodeError("unknown codec " + std::to_string(codec));
  h.codec = *known;
  const std::uint8_t flags = reader.u8("frame flags");
  if ((flags & ~(kSequenceFlag | kComplementFlag)) != 0) throw DecodeError("unknown frame flags");
  h.order = (flags & kSequenceFlag) != 0 ? IdOrder::kSequence : IdOrder::kSortedSet;
  h.complement = (flags & kComplementFlag) != 0;
  if (h.complement && h.order == IdOrder::kSequence) throw DecodeError("complement flag on a sequence");
  h.count = reader.varint("frame count");
  if (h.count > max_count) {
    throw DecodeError("frame of " + std::to_string(h.count) + " ids where at most " + std::to_string(max_count) +
                      " can arrive");
  }
  h.base = reader.varint("frame base");
  h.payload_bytes = reader.u32("frame payload length");
  h.checksum = reader.u32("frame checksum");
  h.header_bytes = reader.position();
  if (h.payload_bytes > reader.remaining()) {
    throw DecodeError("frame payload of " + std::to_string(h.payload_bytes) + " bytes, " +
                      std::to_string(reader.remaining()) + " present");
  }
  return h;
}

void decode_frame_into(std::span<const std::uint8_t> bytes, const FrameHeader& header, std::uint64_t* out) {
  if (header.complement) throw DecodeError("a bitmap's zero positions where ids were expected");
  const PayloadOutput o{out, header.count, header.order, header.base};
  switch (header.codec) {
    case CodecId::kNone: codec_detail::decode_none(verified_payload(bytes, header), o); return;
    case CodecId::kVarint: codec_detail::decode_varint(verified_payload(bytes, header), o); return;
    case CodecId::kBitpack:
    case CodecId::kPfor: {
      // These take the payload's checksum on the way; a corrupted frame is reported as
      // such, whatever the decoder tripped on first.
      const std::span<const std::uint8_t> payload = payload_of(bytes, header);
      const std::span<const std::uint8_t> before_checksum = bytes.first(header.header_bytes - 4);
      std::uint32_t payload_crc = 0;
      try {
        payload_crc = codec_detail::decode_blocks(payload, header.codec == CodecId::kPfor, o);
      } catch (const DecodeError&) {
        if (frame_checksum(before_checksum, payload) != header.checksum) throw DecodeError("frame checksum mismatch");
        throw;
      }
      if (crc32c(before_checksum, payload_crc) != header.checksum) throw DecodeError("frame checksum mismatch");
      return;
    }
    case CodecId::kStreamVByte: codec_detail::decode_streamvbyte(verified_payload(bytes, header), o); return;
    case CodecId::kRoaring: codec_detail::decode_roaring(verified_payload(bytes, header), o); return;
    case CodecId::kZstd: codec_detail::decode_zstd(verified_payload(bytes, header), o); return;
    case CodecId::kBitmap: codec_detail::decode_bitmap(verified_payload(bytes, header), o); return;
    case CodecId::kRice: codec_detail::decode_rice(verified_payload(bytes, header), o); return;
  }
}

std::uint32_t frame_checksum(std::span<const std::uint8_t> header_before_checksum,
                             std::span<const std::uint8_t> payload) {
  // The payload comes first, so that an encoder can take its CRC on the way, before it
  // knows the payload's length (which the header holds).
  return crc32c(header_before_checksum, crc32c(payload));
}

std::vector<std::uint64_t> decode_frame(std::span<const std::uint8_t> bytes, std::uint64_t max_count) {
  const FrameHeader header = read_frame_header(bytes, max_count);
  if (header.frame_bytes() != bytes.size()) throw DecodeError("bytes left after the frame");
  std::vector<std::uint64_t> ids(static_cast<std::size_t>(header.count));
  decode_frame_into(bytes, header, ids.data());
  return ids;
}

void decode_bitmap_frame(std::span<const std::uint8_t> bytes, std::span<std::uint64_t> words) {
  const std::uint64_t positions = words.size() * 64;
  const FrameHeader header = read_frame_header(bytes, positions);
  if (header.frame_bytes() != bytes.size()) throw DecodeError("bytes left after the frame");
  if (header.order != IdOrder::kSortedSet) throw DecodeError("bitmap frame of a sequence");
  if (header.codec == CodecId::kBitmap && header.base == 0) {
    if (header.complement) throw DecodeError("bitmap words with the complement flag");
    const std::span<const std::uint8_t> payload = verified_payload(bytes, header);
    std::fill(words.begin(), words.end(), 0);
    if (codec_detail::decode_bitmap_words(payload, words) != header.count) {
      throw DecodeError("bitmap holds a different number of ids than declared");
    }
    return;
  }
  std::vector<std::uint64_t> ids(static_cast<std::size_t>(header.count));
  FrameHeader listed = header;
  listed.complement = false;  // the positions themselves are a plain sorted set
  decode_frame_into(bytes, listed, ids.data());
  if (!ids.empty() && ids.back() >= positions) throw DecodeError("bitmap position past the receiving bitmap");
  // The listed positions flip bits of an empty (or, for a complement, a full) bitmap.
  std::fill(words.begin(), words.end(), header.complement ? ~std::uint64_t{0} : 0);
  for (const std::uint64_t p : ids) words[p / 64] ^= std::uint64_t{1} << (p % 64);
}

}  // namespace zbfs
