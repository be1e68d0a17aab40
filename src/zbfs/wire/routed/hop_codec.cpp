#include "zbfs/wire/routed/hop_codec.hpp"

#include <cstring>
#include <string>

#include "zbfs/codec/frame.hpp"
#include "zbfs/core/byte_buffer.hpp"

namespace zbfs {
namespace {

constexpr std::uint8_t kUnframed = 0;
constexpr std::uint8_t kFramed = 1;

void encode_section(std::span<const std::uint64_t> values, MessageCodec& codec, const LinkCost* link, ByteBuffer& out,
                    std::vector<CodecId>& frames) {
  const std::size_t tag_at = out.size();
  out.put_u8(kFramed);
  const MessageCodec::Encoding how = codec.encode_ids(values, IdsAre::kSequence, link, out);
  if (how.framed) {
    frames.push_back(how.codec);
    return;
  }
  out.data()[tag_at] = kUnframed;
  out.put_varint(values.size());
  out.append(values.data(), values.size_bytes());
}

// Appends the next section's values to `out`; it must hold exactly `expected` of them
// (any count up to max_items when expected is unknown: pass max_items).
void decode_section(ByteReader& in, std::uint64_t expected, bool exact, std::uint64_t max_items,
                    std::vector<std::uint64_t>& out) {
  const std::uint8_t tag = in.u8("hop section tag");
  std::uint64_t count = 0;
  if (tag == kUnframed) {
    count = in.varint("hop section count");
    if (count > max_items || count > in.remaining() / sizeof(std::uint64_t)) {
      throw DecodeError("hop section announces " + std::to_string(count) + " words");
    }
  } else if (tag == kFramed) {
    const std::span<const std::uint8_t> rest(in.here(), in.remaining());
    const FrameHeader header = read_frame_header(rest, max_items);
    count = header.count;
    if (exact && count != expected) throw DecodeError("hop section has the wrong number of values");
    const std::size_t at = out.size();
    out.resize(at + count);
    decode_frame_into(rest, header, out.data() + at);
    in.skip(header.frame_bytes(), "hop frame");
    return;
  } else {
    throw DecodeError("unknown hop section tag");
  }
  if (exact && count != expected) throw DecodeError("hop section has the wrong number of values");
  const std::size_t at = out.size();
  out.resize(at + count);
  std::memcpy(out.data() + at, in.take(count * sizeof(std::uint64_t), "hop section").data(),
              count * sizeof(std::uint64_t));
}

}  // namespace

HopEncoding encode_hop_message(std::span<const std::uint64_t> words, HopLayout layout, MessageCodec& codec,
                               const LinkCost* link) {
  HopEncoding encoded;
  ByteBuffer bytes;
  std::vector<std::uint64_t> column;
  const auto gather = [&](std::size_t first, std::size_t stride, std::size_t count) {
    column.resize(count);
    for (std::size_t i = 0; i < count; ++i) column[i] = words[first + i * stride];
    encode_section(column, codec, link, bytes, encoded.frames);
  };
  if (layout.kind == HopLayout::kItems) {
    // The sender built the message, so its layout holds (parse_message checks received ones).
    const std::size_t groups = words.empty() ? 0 : static_cast<std::size_t>(words[0]);
    const std::size_t header = 1 + 2 * groups;
    encode_section(words.first(header), codec, link, bytes, encoded.frames);
    std::size_t at = header;
    for (std::size_t g = 0; g < groups; ++g) {
      const auto count = static_cast<std::size_t>(words[2 + 2 * g]);
      gather(at, 2, count);
      at += 2 * count;
    }
    gather(header + 1, 2, (words.size() - header) / 2);
  } else {
    const std::size_t records = words.size() / layout.stride;
    for (std::size_t c = 0; c < layout.stride; ++c) gather(c, layout.stride, records);
  }
  encoded.words.resize(1 + (bytes.size() + 7) / 8, 0);
  encoded.words[0] = bytes.size();
  if (bytes.size() != 0) std::memcpy(encoded.words.data() + 1, bytes.data(), bytes.size());
  return encoded;
}

std::vector<std::uint64_t> decode_hop_message(std::span<const std::uint64_t> encoded, HopLayout layout,
                                              std::uint64_t max_items) {
  if (encoded.empty() || encoded[0] > (encoded.size() - 1) * sizeof(std::uint64_t) ||
      (encoded[0] + 7) / 8 != encoded.size() - 1) {
    throw DecodeError("hop message length does not match its words");
  }
  ByteReader in(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(encoded.data() + 1),
                                              static_cast<std::size_t>(encoded[0])));
  std::vector<std::uint64_t> words;
  if (layout.kind == HopLayout::kItems) {
    std::vector<std::uint64_t> header;
    decode_section(in, 0, false, max_items, header);
    if (header.empty() || header[0] > (header.size() - 1) / 2 || header.size() != 1 + 2 * header[0]) {
      throw DecodeError("hop message header is malformed");
    }
    std::uint64_t items = 0;
    for (std::uint64_t g = 0; g < header[0]; ++g) {
      const std::uint64_t count = header[2 + 2 * g];
      if (count > max_items - items) throw DecodeError("hop message announces too many items");
      items += count;
    }
    std::vector<std::uint64_t> keys;
    for (std::uint64_t g = 0; g < header[0]; ++g) decode_section(in, header[2 + 2 * g], true, max_items, keys);
    std::vector<std::uint64_t> values;
    decode_section(in, items, true, max_items, values);
    words = std::move(header);
    words.reserve(words.size() + 2 * items);
    for (std::uint64_t i = 0; i < items; ++i) words.insert(words.end(), {keys[i], values[i]});
  } else {
    if (layout.stride == 0) throw DecodeError("hop replies without columns");
    std::vector<std::vector<std::uint64_t>> columns(layout.stride);
    decode_section(in, 0, false, max_items, columns[0]);
    for (std::size_t c = 1; c < layout.stride; ++c) decode_section(in, columns[0].size(), true, max_items, columns[c]);
    words.reserve(layout.stride * columns[0].size());
    for (std::size_t i = 0; i < columns[0].size(); ++i) {
      for (const auto& column : columns) words.push_back(column[i]);
    }
  }
  if (in.remaining() != 0) throw DecodeError("bytes left after the hop message");
  return words;
}

}  // namespace zbfs
