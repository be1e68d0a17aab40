// libFuzzer target for one codec (ZBFS_FUZZ_CODEC, its wire number). Each input is used
// twice: as a hostile frame of this codec, with a valid checksum so that the payload
// decoder itself is exercised (it must throw DecodeError or decode, never crash), and as
// a list of ids that must round-trip through the codec both as a set and as a sequence.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "zbfs/codec/frame.hpp"

namespace {

using zbfs::ByteBuffer;
using zbfs::CodecId;
using zbfs::DecodeError;
using zbfs::IdOrder;

constexpr auto kCodec = static_cast<CodecId>(ZBFS_FUZZ_CODEC);

void decode_hostile(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return;
  ByteBuffer frame;
  frame.put_u8(static_cast<std::uint8_t>(kCodec));
  frame.put_u8(data[0] & 3u);  // sequence and complement flags
  frame.put_varint(static_cast<std::uint64_t>(data[1]) | (static_cast<std::uint64_t>(data[2]) << 8));
  frame.put_varint(data[3] < 128 ? data[3] : ~std::uint64_t{0} - data[3]);
  frame.put_u32(static_cast<std::uint32_t>(size - 4));
  const std::uint32_t crc = zbfs::frame_checksum(frame.bytes(), {data + 4, size - 4});
  frame.put_u32(crc);
  frame.append(data + 4, size - 4);
  try {
    const std::vector<std::uint64_t> ids = zbfs::decode_frame(frame.bytes(), 1u << 16);
    if ((data[0] & 3u) == 0) {
      for (std::size_t k = 1; k < ids.size(); ++k) {
        if (ids[k - 1] >= ids[k]) std::abort();  // a decoded set must be strictly increasing
      }
    }
  } catch (const DecodeError&) {
  }
  std::vector<std::uint64_t> words(8);
  try {
    zbfs::decode_bitmap_frame(frame.bytes(), words);
  } catch (const DecodeError&) {
  }
}

void round_trip(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint64_t> ids(size / 8);
  if (!ids.empty()) std::memcpy(ids.data(), data, ids.size() * 8);
  for (const IdOrder order : {IdOrder::kSequence, IdOrder::kSortedSet}) {
    if (order == IdOrder::kSortedSet) {
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    }
    ByteBuffer frame;
    zbfs::encode_frame(kCodec, ids, order, frame);
    if (zbfs::decode_frame(frame.bytes(), ids.size()) != ids) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  decode_hostile(data, size);
  round_trip(data, size);
  return 0;
}
