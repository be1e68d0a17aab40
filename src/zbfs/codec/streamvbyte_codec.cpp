// streamvbyte: residuals as 32-bit integers through Debian's libstreamvbyte, in chunks
// of 4096 (control bytes, then data bytes, as the library writes them). A residual of
// 2^32 or more cannot be carried: the encoder says so and the frame falls back.
//
// The library's decoder trusts its input and its SIMD loads read up to 16 bytes past the
// data, so the decoder here first sums the lengths the control bytes announce, checks
// them against what is left, and decodes from a padded copy when the chunk ends closer
// than 16 bytes to the end of the payload.
#include <streamvbyte.h>

#include <array>
#include <cstring>
#include <vector>

#include "zbfs/codec/payload_codecs.hpp"
#include "zbfs/codec/residuals.hpp"

namespace zbfs::codec_detail {
namespace {

constexpr std::size_t kChunk = 4096;
constexpr std::size_t kOverread = 16;

// Data bytes the control bytes announce for n values.
std::size_t announced_data_bytes(const std::uint8_t* control, std::size_t n) {
  std::size_t total = 0;
  for (std::size_t k = 0; k < n; ++k) total += ((control[k / 4] >> (2 * (k % 4))) & 3u) + 1;
  return total;
}

}  // namespace

bool encode_streamvbyte(const PayloadInput& in, ByteBuffer& out) {
  std::array<std::uint64_t, kChunk> r;
  std::array<std::uint32_t, kChunk> narrow;
  const std::size_t n = in.ids.size();
  for (std::size_t begin = 0; begin < n; begin += kChunk) {
    const std::size_t count = std::min(kChunk, n - begin);
    compute_residuals(in.ids.data(), begin, count, in.order, in.base, r.data());
    std::uint64_t wide = 0;
    for (std::size_t k = 0; k < count; ++k) {
      wide |= r[k] >> 32;
      narrow[k] = static_cast<std::uint32_t>(r[k]);
    }
    if (wide != 0) return false;
    const auto length = static_cast<std::uint32_t>(count);
    std::uint8_t* at = out.extend(streamvbyte_max_compressedbytes(length));
    const std::size_t used = streamvbyte_encode(narrow.data(), length, at);
    out.shrink_to(out.size() - (streamvbyte_max_compressedbytes(length) - used));
  }
  return true;
}

void decode_streamvbyte(std::span<const std::uint8_t> payload, const PayloadOutput& out) {
  std::array<std::uint64_t, kChunk> r;
  std::array<std::uint32_t, kChunk> narrow;
  std::vector<std::uint8_t> padded;
  ByteReader reader(payload);
  IdRebuilder rebuild(out.order, out.base);
  for (std::uint64_t begin = 0; begin < out.count; begin += kChunk) {
    const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, out.count - begin));
    const std::size_t control_bytes = (count + 3) / 4;
    const std::uint8_t* chunk = reader.here();
    const std::span<const std::uint8_t> control = reader.take(control_bytes, "streamvbyte control bytes");
    const std::size_t data_bytes = announced_data_bytes(control.data(), count);
    reader.skip(data_bytes, "streamvbyte data");
    const std::size_t chunk_bytes = control_bytes + data_bytes;
    const std::uint8_t* source = chunk;
    if (reader.remaining() < kOverread) {
      padded.assign(chunk_bytes + kOverread, 0);
      std::memcpy(padded.data(), chunk, chunk_bytes);
      source = padded.data();
    }
    const std::size_t used = streamvbyte_decode(source, narrow.data(), static_cast<std::uint32_t>(count));
    if (used != chunk_bytes) throw DecodeError("streamvbyte chunk length mismatch");
    for (std::size_t k = 0; k < count; ++k) r[k] = narrow[k];
    rebuild.apply(r.data(), count, out.ids + begin, 32);
  }
  if (rebuild.failed()) throw DecodeError("ids overflow 64 bits");
  if (reader.remaining() != 0) throw DecodeError("bytes left after the last streamvbyte chunk");
}

}  // namespace zbfs::codec_detail
