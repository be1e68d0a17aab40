// roaring: sorted sets as CRoaring bitmaps (Debian's libroaring), one per range of 2^32
// ids, since CRoaring's bitmaps hold 32-bit values:
//
//   per range: varint (high 32 bits - previous range's) | varint bytes | portable bitmap
//
// Bitmaps are run-optimised before serialising. The decoder deserialises with CRoaring's
// bounded reader and then walks the values itself, bounding the count and checking the
// order, so it never trusts the cardinalities stored in the containers.
#include <roaring/roaring.h>

#include <array>
#include <memory>

#include "zbfs/codec/payload_codecs.hpp"

namespace zbfs::codec_detail {
namespace {

struct RoaringFree {
  void operator()(roaring_bitmap_t* bitmap) const { roaring_bitmap_free(bitmap); }
};
using RoaringBitmap = std::unique_ptr<roaring_bitmap_t, RoaringFree>;

struct Walk {
  std::uint64_t high;
  std::uint64_t* out;
  std::uint64_t written;
  std::uint64_t limit;
  std::int64_t last;  // the previous low part, -1 before the first
  bool ok;
};

bool visit(std::uint32_t low, void* context) {
  auto& walk = *static_cast<Walk*>(context);
  if (walk.written >= walk.limit || static_cast<std::int64_t>(low) <= walk.last) {
    walk.ok = false;
    return false;
  }
  walk.out[walk.written++] = walk.high | low;
  walk.last = low;
  return true;
}

}  // namespace

void encode_roaring(const PayloadInput& in, ByteBuffer& out) {
  constexpr std::size_t kBatch = 4096;
  std::array<std::uint32_t, kBatch> low;
  const std::span<const std::uint64_t> ids = in.ids;
  std::uint64_t previous_high = 0;
  for (std::size_t begin = 0; begin < ids.size();) {
    const std::uint64_t high = ids[begin] >> 32;
    RoaringBitmap bitmap(roaring_bitmap_create());
    if (!bitmap) throw Error(ExitCode::kFailure, "roaring: out of memory");
    std::size_t end = begin;
    while (end < ids.size() && (ids[end] >> 32) == high) {
      std::size_t batch = 0;
      while (batch < kBatch && end < ids.size() && (ids[end] >> 32) == high) {
        low[batch++] = static_cast<std::uint32_t>(ids[end++]);
      }
      roaring_bitmap_add_many(bitmap.get(), batch, low.data());
    }
    roaring_bitmap_run_optimize(bitmap.get());
    const std::size_t bytes = roaring_bitmap_portable_size_in_bytes(bitmap.get());
    out.put_varint(high - previous_high);
    out.put_varint(bytes);
    roaring_bitmap_portable_serialize(bitmap.get(), reinterpret_cast<char*>(out.extend(bytes)));
    previous_high = high;
    begin = end;
  }
}

void decode_roaring(std::span<const std::uint8_t> payload, const PayloadOutput& out) {
  if (out.order != IdOrder::kSortedSet) throw DecodeError("roaring frame of a sequence");
  ByteReader reader(payload);
  std::uint64_t written = 0;
  std::uint64_t high = 0;
  bool first = true;
  while (reader.remaining() > 0) {
    const std::uint64_t step = reader.varint("roaring range");
    if ((!first && step == 0) || step > (std::uint64_t{0xffffffff} - high)) {
      throw DecodeError("roaring ranges out of order");
    }
    high += step;
    first = false;
    const std::uint64_t bytes = reader.varint("roaring size");
    const std::span<const std::uint8_t> serialized = reader.take(bytes, "roaring bitmap");
    const char* data = reinterpret_cast<const char*>(serialized.data());
    if (roaring_bitmap_portable_deserialize_size(data, serialized.size()) != serialized.size()) {
      throw DecodeError("roaring bitmap size mismatch");
    }
    RoaringBitmap bitmap(roaring_bitmap_portable_deserialize_safe(data, serialized.size()));
    if (!bitmap) throw DecodeError("roaring bitmap does not deserialise");
    Walk walk{high << 32, out.ids + written, 0, out.count - written, -1, true};
    roaring_iterate(bitmap.get(), visit, &walk);
    if (!walk.ok) throw DecodeError("roaring bitmap holds more ids than declared, or out of order");
    if (walk.written == 0) throw DecodeError("empty roaring range");
    written += walk.written;
  }
  if (written != out.count) throw DecodeError("roaring frame holds fewer ids than declared");
}

}  // namespace zbfs::codec_detail
