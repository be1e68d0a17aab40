// none (ids as they are, 8 bytes each) and varint (residuals as LEB128).
#include <cstring>

#include "zbfs/codec/payload_codecs.hpp"
#include "zbfs/codec/residuals.hpp"

namespace zbfs::codec_detail {

void encode_none(const PayloadInput& in, ByteBuffer& out) { out.append(in.ids.data(), in.ids.size_bytes()); }

void decode_none(std::span<const std::uint8_t> payload, const PayloadOutput& out) {
  if (payload.size() / 8 != out.count || payload.size() % 8 != 0) {
    throw DecodeError("none payload of " + std::to_string(payload.size()) + " bytes for " + std::to_string(out.count) +
                      " ids");
  }
  if (!payload.empty()) std::memcpy(out.ids, payload.data(), payload.size());
  if (out.order == IdOrder::kSortedSet) {
    bool ordered = true;
    for (std::uint64_t k = 1; k < out.count; ++k) ordered &= out.ids[k - 1] < out.ids[k];
    if (!ordered) throw DecodeError("sorted-set frame is not strictly increasing");
  }
}

void encode_varint(const PayloadInput& in, ByteBuffer& out) {
  constexpr std::size_t kChunk = 256;
  std::uint64_t r[kChunk];
  const std::size_t n = in.ids.size();
  for (std::size_t begin = 0; begin < n; begin += kChunk) {
    const std::size_t count = std::min(kChunk, n - begin);
    compute_residuals(in.ids.data(), begin, count, in.order, in.base, r);
    std::uint8_t* at = out.extend(count * 10);
    std::size_t used = 0;
    for (std::size_t k = 0; k < count; ++k) used += ByteBuffer::write_varint(at + used, r[k]);
    out.shrink_to(out.size() - (count * 10 - used));
  }
}

void decode_varint(std::span<const std::uint8_t> payload, const PayloadOutput& out) {
  constexpr std::size_t kChunk = 256;
  std::uint64_t r[kChunk];
  ByteReader reader(payload);
  IdRebuilder rebuild(out.order, out.base);
  for (std::uint64_t begin = 0; begin < out.count; begin += kChunk) {
    const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, out.count - begin));
    std::size_t k = 0;
    // Fast path while a whole chunk's worst case is in bounds; checked reads after.
    if (reader.remaining() >= count * 10) {
      const std::uint8_t* p = reader.here();
      const std::uint8_t* start = p;
      for (; k < count; ++k) {
        std::uint64_t v = *p & 0x7fu;
        int shift = 7;
        while ((*p++ & 0x80u) != 0) {
          if (shift > 63 || (shift == 63 && (*p & 0x7eu) != 0)) throw DecodeError("varint overflows 64 bits");
          v |= static_cast<std::uint64_t>(*p & 0x7fu) << shift;
          shift += 7;
        }
        r[k] = v;
      }
      reader.skip(static_cast<std::size_t>(p - start), "varints");
    }
    for (; k < count; ++k) r[k] = reader.varint("varint residual");
    rebuild.apply(r, count, out.ids + begin);
  }
  if (rebuild.failed()) throw DecodeError("ids overflow 64 bits");
  if (reader.remaining() != 0) throw DecodeError("bytes left after the last varint");
}

}  // namespace zbfs::codec_detail
