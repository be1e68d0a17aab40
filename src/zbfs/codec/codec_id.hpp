// The codecs a frame can carry, their names on the command line, and the --codec choice
// (one codec for every exchange, or `auto`: chosen per message by the cost model).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace zbfs {

// The numbers are the wire format's codec field: never renumber.
enum class CodecId : std::uint8_t {
  kNone = 0,         // 64-bit ids as they are
  kVarint = 1,       // residuals as LEB128
  kBitpack = 2,      // frame-of-reference bit packing in blocks of 128
  kPfor = 3,         // bit packing with patched exceptions
  kStreamVByte = 4,  // libstreamvbyte on 32-bit residuals
  kRoaring = 5,      // CRoaring bitmaps, one per 2^32 id range
  kZstd = 6,         // zstd over the residuals
  kBitmap = 7,       // one bit per id of the [first, last] range
  kRice = 8,         // Golomb-Rice: low bits packed, high parts in unary
};
constexpr std::size_t kCodecCount = 9;

constexpr std::array<CodecId, kCodecCount> kAllCodecs = {CodecId::kNone, CodecId::kVarint,      CodecId::kBitpack,
                                                         CodecId::kPfor, CodecId::kStreamVByte, CodecId::kRoaring,
                                                         CodecId::kZstd, CodecId::kBitmap,      CodecId::kRice};

constexpr std::string_view to_string(CodecId codec) {
  switch (codec) {
    case CodecId::kNone: return "none";
    case CodecId::kVarint: return "varint";
    case CodecId::kBitpack: return "bitpack";
    case CodecId::kPfor: return "pfor";
    case CodecId::kStreamVByte: return "streamvbyte";
    case CodecId::kRoaring: return "roaring";
    case CodecId::kZstd: return "zstd";
    case CodecId::kBitmap: return "bitmap";
    case CodecId::kRice: return "rice";
  }
  return "unknown";
}

constexpr std::optional<CodecId> codec_from_wire(std::uint8_t value) {
  if (value >= kCodecCount) return std::nullopt;
  return static_cast<CodecId>(value);
}

// --codec: a fixed codec, or nullopt meaning auto.
struct CodecChoice {
  std::optional<CodecId> fixed;  // nullopt: auto
  [[nodiscard]] bool is_auto() const { return !fixed.has_value(); }
  [[nodiscard]] std::string_view name() const { return fixed ? to_string(*fixed) : "auto"; }
};

constexpr std::optional<CodecChoice> parse_codec_choice(std::string_view text) {
  if (text == "auto") return CodecChoice{};
  for (const CodecId codec : kAllCodecs) {
    if (to_string(codec) == text) return CodecChoice{codec};
  }
  return std::nullopt;
}

}  // namespace zbfs
