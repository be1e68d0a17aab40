#include <thrust/fill.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/scan.h>
#include <thrust/transform_reduce.h>

#include <cuda/std/bit>
#include <cuda/std/functional>
#include <string>
#include <vector>

#include "zbfs/backend/cuda/bitmap_kernels.cuh"
#include "zbfs/backend/cuda/device_codec.hpp"
#include "zbfs/backend/cuda/launch.cuh"

namespace zbfs::cuda_backend {
namespace {

constexpr std::uint64_t kBlock = 128;  // values per block (codec/bit_packing.hpp)

ZBFS_HD inline unsigned width_of(std::uint64_t v) { return static_cast<unsigned>(cuda::std::bit_width(v)); }
ZBFS_HD inline std::uint64_t low_mask(unsigned b) { return b >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << b) - 1; }
ZBFS_HD inline std::uint64_t varint_bytes(std::uint64_t v) {
  std::uint64_t bytes = 1;
  for (; v >= 0x80; v >>= 7) ++bytes;
  return bytes;
}
ZBFS_HD inline std::uint64_t packed_size(std::uint64_t n, unsigned b) {
  return n == kBlock ? 16 * std::uint64_t{b} : (n * b + 7) / 8;
}

// Residual i of a frame (codec/residuals.hpp): a sorted set's gap minus one (the first:
// its offset from the base), a sequence's value minus the base.
struct Residual {
  const std::uint64_t* ids;
  bool sorted;
  std::uint64_t base;
  ZBFS_HD std::uint64_t operator()(std::uint64_t i) const {
    if (!sorted) return ids[i] - base;
    return i == 0 ? ids[0] - base : ids[i] - ids[i - 1] - 1;
  }
};

// One index per block: its width and reference (a set's: 0, its residuals' OR bounding
// them; a sequence's: its minimum), and its size (u8 width, varint reference, packed).
struct BlockShape {
  Residual residual;
  std::uint64_t count;
  std::uint64_t* width;
  std::uint64_t* reference;
  std::uint64_t* size;
  ZBFS_HD void operator()(std::uint64_t k) const {
    const std::uint64_t first = k * kBlock;
    const std::uint64_t n = count - first < kBlock ? count - first : kBlock;
    std::uint64_t any = 0;
    std::uint64_t lowest = ~std::uint64_t{0};
    std::uint64_t highest = 0;
    for (std::uint64_t i = first; i < first + n; ++i) {
      const std::uint64_t r = residual(i);
      any |= r;
      lowest = r < lowest ? r : lowest;
      highest = r > highest ? r : highest;
    }
    const std::uint64_t ref = residual.sorted ? 0 : lowest;
    const unsigned b = residual.sorted ? width_of(any) : width_of(highest - lowest);
    width[k] = b;
    reference[k] = ref;
    size[k] = 1 + varint_bytes(ref) + (b == 0 ? 0 : packed_size(n, b));
  }
};

// One index per (block, slot of 128): the block's header (slot 0), then a full block's
// packed words (slot t < 2b: lane t % 2, word t / 2 of the lane's stream of b-bit values,
// value j of lane L being value 2j + L) or a partial block's bytes (slot t: bytes t,
// t + 128, ... of a little-endian bit stream).
struct WriteBlock {
  Residual residual;
  std::uint64_t count;
  const std::uint64_t* width;
  const std::uint64_t* reference;
  const std::uint64_t* offset;
  std::uint8_t* payload;
  ZBFS_HD void operator()(std::uint64_t i) const {
    const std::uint64_t k = i / kBlock;
    const std::uint64_t t = i % kBlock;
    const std::uint64_t first = k * kBlock;
    const std::uint64_t n = count - first < kBlock ? count - first : kBlock;
    const auto b = static_cast<unsigned>(width[k]);
    const std::uint64_t ref = reference[k];
    std::uint8_t* at = payload + offset[k];
    if (t == 0) {
      at[0] = static_cast<std::uint8_t>(b);
      std::uint64_t v = ref;
      std::uint64_t p = 1;
      for (; v >= 0x80; v >>= 7) at[p++] = static_cast<std::uint8_t>(v | 0x80);
      at[p] = static_cast<std::uint8_t>(v);
    }
    if (b == 0) return;
    std::uint8_t* packed = at + 1 + varint_bytes(ref);
    if (n == kBlock) {
      if (t >= 2 * b) return;
      const std::uint64_t lane = t % 2;
      const std::uint64_t start = (t / 2) * 64;  // the word's first bit in its lane
      std::uint64_t word = 0;
      for (std::uint64_t j = start / b; j < 64 && j * b < start + 64; ++j) {
        const std::uint64_t v = residual(first + 2 * j + lane) - ref;
        const std::uint64_t bit = j * b;
        word |= bit >= start ? v << (bit - start) : v >> (start - bit);
      }
      std::uint8_t* out = packed + (t / 2) * 16 + lane * 8;
      for (int byte = 0; byte < 8; ++byte) out[byte] = static_cast<std::uint8_t>(word >> (8 * byte));
      return;
    }
    const std::uint64_t mask = low_mask(b);
    for (std::uint64_t byte = t; byte < (n * b + 7) / 8; byte += kBlock) {
      const std::uint64_t start = byte * 8;
      std::uint64_t bits = 0;
      for (std::uint64_t j = start / b; j < n && j * b < start + 8; ++j) {
        const std::uint64_t v = (residual(first + j) - ref) & mask;
        const std::uint64_t bit = j * b;
        bits |= bit >= start ? v << (bit - start) : v >> (start - bit);
      }
      packed[byte] = static_cast<std::uint8_t>(bits);
    }
  }
};

// Decoding: value i of a frame's blocks (the block table gives each block's width,
// reference and packed bytes' place in the payload), plus its reference; a set's values
// become steps (value + 1 past the first) for the scan. `wrapped` is raised when a
// reference plus value passes 2^64 (a sequence's base is added later).
struct Unpack {
  const std::uint8_t* payload;
  const std::uint64_t* width;
  const std::uint64_t* reference;
  const std::uint64_t* data_at;
  std::uint64_t count;
  bool sorted;
  std::uint64_t* out;
  std::uint64_t* wrapped;
  ZBFS_HD std::uint64_t bits_at(const std::uint8_t* bytes, std::uint64_t bit, unsigned b, std::uint64_t limit) const {
    // b bits from bit `bit` of the little-endian stream `bytes` (limit bytes long).
    std::uint64_t v = 0;
    const std::uint64_t first = bit / 8;
    const std::uint64_t last = (bit + b - 1) / 8;
    for (std::uint64_t byte = first; byte <= last && byte < limit; ++byte) {
      const std::uint64_t shift = byte * 8;
      const std::uint64_t part = bytes[byte];
      v |= shift >= bit ? part << (shift - bit) : part >> (bit - shift);
    }
    return v & low_mask(b);
  }
  ZBFS_HD void operator()(std::uint64_t i) const {
    const std::uint64_t k = i / kBlock;
    const std::uint64_t j = i % kBlock;
    const std::uint64_t first = k * kBlock;
    const std::uint64_t n = count - first < kBlock ? count - first : kBlock;
    const auto b = static_cast<unsigned>(width[k]);
    const std::uint8_t* packed = payload + data_at[k];
    std::uint64_t v = 0;
    if (b > 0 && n == kBlock) {
      // Lane j % 2, value j / 2 of the lane: its bits in the lane's words (16 bytes apart).
      const std::uint64_t bit = (j / 2) * b;
      const std::uint8_t* lane = packed + (j % 2) * 8;
      for (std::uint64_t w = bit / 64; w <= (bit + b - 1) / 64; ++w) {
        std::uint64_t word = 0;
        for (int byte = 0; byte < 8; ++byte) word |= std::uint64_t{lane[w * 16 + byte]} << (8 * byte);
        const std::uint64_t shift = w * 64;
        v |= shift >= bit ? word << (shift - bit) : word >> (bit - shift);
      }
      v &= low_mask(b);
    } else if (b > 0) {
      v = bits_at(packed, j * b, b, (n * b + 7) / 8);
    }
    const std::uint64_t r = reference[k] + v;
    if (r < v) shared_word(*wrapped).store(1, cuda::std::memory_order_relaxed);
    out[i] = sorted && i > 0 ? r + 1 : r;
  }
};

// A sequence's ids: base + value, refusing a sum past 2^64.
struct AddBase {
  std::uint64_t base;
  std::uint64_t* out;
  std::uint64_t* wrapped;
  ZBFS_HD void operator()(std::uint64_t i) const {
    const std::uint64_t id = base + out[i];
    if (id < base) shared_word(*wrapped).store(1, cuda::std::memory_order_relaxed);
    out[i] = id;
  }
};

// A set's ids after the scan of its steps: base plus the running sum; each step's sum
// must grow (a step of 2^64 or a sum past 2^64 wraps to at most the id before).
struct CheckIncreasing {
  const std::uint64_t* ids;
  std::uint64_t* wrapped;
  ZBFS_HD void operator()(std::uint64_t i) const {
    if (ids[i + 1] <= ids[i]) shared_word(*wrapped).store(1, cuda::std::memory_order_relaxed);
  }
};

}  // namespace

struct DeviceCodec::State {
  explicit State(ExecutionTarget target) : stream(target), flag(target, 1) {}

  template <class T>
  void reserve(DeviceArray<T>& array, std::uint64_t size) {
    if (array.size() < size) array = DeviceArray<T>(stream.target(), size + size / 4);
  }
  std::uint64_t read(const std::uint64_t* at) {
    std::uint64_t value = 0;
    copy_to_host(&value, at, 8);
    return value;
  }
  void copy_to_host(void* to, const void* from, std::uint64_t bytes) {
    copy_bytes(stream, to, from, bytes, cudaMemcpyDeviceToHost);
    traffic.to_host += bytes;
  }
  void copy_to_target(void* to, const void* from, std::uint64_t bytes) {
    copy_bytes(stream, to, from, bytes, cudaMemcpyHostToDevice);
    traffic.to_device += bytes;
  }
  std::uint64_t exclusive_scan(std::uint64_t* s, std::uint64_t count) {
    return scan_counts(stream, s, count, traffic.to_host);
  }
  void clear_flag() {
    on_policy(stream, [&](auto policy) { thrust::fill(policy, flag.data(), flag.data() + 1, std::uint64_t{0}); });
  }

  Stream stream;
  DeviceArray<std::uint64_t> flag;
  DeviceArray<std::uint64_t> width;
  DeviceArray<std::uint64_t> reference;
  DeviceArray<std::uint64_t> offset;  // blocks + 1: sizes, then their scan
  DeviceArray<std::uint64_t> words;
  DeviceArray<std::uint8_t> payload;
  HostDeviceTraffic traffic;
};

DeviceCodec::DeviceCodec(ExecutionTarget target) : state_(std::make_unique<State>(target)) {}
DeviceCodec::~DeviceCodec() = default;

HostDeviceTraffic DeviceCodec::traffic() const { return state_->traffic; }

namespace {

// The frame's header up to its payload length (codec/frame.cpp's begin_frame); returns
// where the length and checksum go.
std::size_t begin_frame(CodecId codec, IdOrder order, std::uint64_t count, std::uint64_t base, ByteBuffer& out) {
  out.put_u8(static_cast<std::uint8_t>(codec));
  out.put_u8(order == IdOrder::kSequence ? 1 : 0);
  out.put_varint(count);
  out.put_varint(base);
  const std::size_t slot = out.size();
  out.extend(8);
  return slot;
}

void end_frame(std::size_t start, std::size_t slot, ByteBuffer& out) {
  const std::size_t payload = out.size() - slot - 8;
  if (payload > UINT32_MAX) throw Error(ExitCode::kFailure, "frame payload above 4 GiB; use more ranks");
  const auto payload32 = static_cast<std::uint32_t>(payload);
  std::memcpy(out.data() + slot, &payload32, 4);
  const std::uint32_t crc = frame_checksum({out.data() + start, slot + 4 - start}, {out.data() + slot + 8, payload});
  std::memcpy(out.data() + slot + 4, &crc, 4);
}

}  // namespace

std::uint64_t DeviceCodec::max_frame_bytes(std::uint64_t count) {
  // The header (two bytes, two varints, length and checksum), then per 128 ids a width
  // byte, a varint reference and at most 64 bits an id; or a bitmap no longer than that.
  return 32 + 8 * count + 11 * (count / kBlock + 1);
}

CodecId DeviceCodec::encode(CodecId codec, const std::uint64_t* ids, std::uint64_t count, IdOrder order,
                            ByteBuffer& out, std::uint8_t* also_in_target) {
  if (codec != CodecId::kBitpack && codec != CodecId::kBitmap) {
    throw Error(ExitCode::kFailure,
                "the device encodes bitpack and bitmap frames only, not " + std::string(to_string(codec)));
  }
  State& s = *state_;
  const bool sorted = order == IdOrder::kSortedSet;
  const std::uint64_t first = count == 0 ? 0 : s.read(ids);
  const std::uint64_t last = count == 0 ? 0 : s.read(ids + count - 1);
  // The CPU's fallbacks (frame.cpp's resolve): a bitmap holds sets, and only dense ones.
  if (codec == CodecId::kBitmap && (!sorted || (count > 0 && (last - first) / 64 > count + 8))) {
    codec = CodecId::kBitpack;
  }
  const std::uint64_t base = sorted ? first : 0;
  const std::size_t start = out.size();
  const std::size_t slot = begin_frame(codec, order, count, base, out);
  if (codec == CodecId::kBitmap) {
    const std::uint64_t span = count == 0 ? 0 : last - base + 1;
    const std::uint64_t words = span / 64 + (span % 64 != 0 ? 1 : 0);
    out.put_varint(span);
    s.reserve(s.words, words);
    std::uint64_t* w = s.words.data();
    on_policy(s.stream, [&](auto policy) { thrust::fill(policy, w, w + words, std::uint64_t{0}); });
    for_each_index(s.stream, count, SetListedBits<std::uint64_t>{ids, base, w});
    s.copy_to_host(out.extend(static_cast<std::size_t>(words * 8)), w, words * 8);
    end_frame(start, slot, out);
    if (also_in_target != nullptr) s.copy_to_target(also_in_target, out.data() + start, out.size() - start);
    return codec;
  }
  const std::uint64_t blocks = (count + kBlock - 1) / kBlock;
  s.reserve(s.width, blocks);
  s.reserve(s.reference, blocks);
  s.reserve(s.offset, blocks + 1);
  const Residual residual{ids, sorted, base};
  for_each_index(s.stream, blocks, BlockShape{residual, count, s.width.data(), s.reference.data(), s.offset.data()});
  const std::uint64_t bytes = s.exclusive_scan(s.offset.data(), blocks);
  s.reserve(s.payload, bytes);
  for_each_index(s.stream, blocks * kBlock,
                 WriteBlock{residual, count, s.width.data(), s.reference.data(), s.offset.data(), s.payload.data()});
  s.copy_to_host(out.extend(static_cast<std::size_t>(bytes)), s.payload.data(), bytes);
  end_frame(start, slot, out);
  if (also_in_target != nullptr) {
    // The checksum needed the payload on the host; the payload itself stays on the target.
    const std::uint64_t header = out.size() - start - bytes;
    s.copy_to_target(also_in_target, out.data() + start, header);
    copy_bytes(s.stream, also_in_target + header, s.payload.data(), bytes, cudaMemcpyDeviceToDevice);
    s.stream.synchronize();
  }
  return codec;
}

void DeviceCodec::encode_bitmap_words(const std::uint64_t* words, std::uint64_t count, ByteBuffer& out) {
  State& s = *state_;
  const std::uint64_t set = on_policy(s.stream, [&](auto policy) {
    return thrust::transform_reduce(policy, thrust::counting_iterator<std::uint64_t>(0),
                                    thrust::counting_iterator<std::uint64_t>(count), WordPopulation{words},
                                    std::uint64_t{0}, cuda::std::plus<std::uint64_t>());
  });
  const std::size_t start = out.size();
  const std::size_t slot = begin_frame(CodecId::kBitmap, IdOrder::kSortedSet, set, 0, out);
  out.put_varint(count * 64);
  s.copy_to_host(out.extend(static_cast<std::size_t>(count * 8)), words, count * 8);
  end_frame(start, slot, out);
}

void DeviceCodec::decode(std::span<const std::uint8_t> bytes, const FrameHeader& header, std::uint64_t* out,
                         const std::uint8_t* in_target) {
  State& s = *state_;
  if (header.codec != CodecId::kBitpack && header.codec != CodecId::kBitmap) {
    // Decoded where the frame is, then copied.
    std::vector<std::uint64_t> ids(static_cast<std::size_t>(header.count));
    decode_frame_into(bytes, header, ids.data());
    s.copy_to_target(out, ids.data(), header.count * 8);
    return;
  }
  if (header.complement) throw DecodeError("a bitmap's zero positions where ids were expected");
  if (header.frame_bytes() > bytes.size()) throw DecodeError("frame longer than its buffer");
  const std::span<const std::uint8_t> payload = bytes.subspan(header.header_bytes, header.payload_bytes);
  if (frame_checksum(bytes.first(header.header_bytes - 4), payload) != header.checksum) {
    throw DecodeError("frame checksum mismatch");
  }
  const bool sorted = header.order == IdOrder::kSortedSet;
  const std::uint64_t count = header.count;
  ByteReader reader(payload);
  if (header.codec == CodecId::kBitmap) {
    if (!sorted) throw DecodeError("bitmap frame of a sequence");
    const std::uint64_t span = reader.varint("bitmap span");
    const std::uint64_t words = span / 64 + (span % 64 != 0 ? 1 : 0);
    if (words > reader.remaining() / 8) throw DecodeError("bitmap shorter than its span");
    const std::span<const std::uint8_t> raw = reader.take(static_cast<std::size_t>(words * 8), "bitmap words");
    if (reader.remaining() != 0) throw DecodeError("bytes left after the bitmap");
    if (span % 64 != 0) {
      std::uint64_t tail = 0;
      std::memcpy(&tail, raw.data() + raw.size() - 8, 8);
      if ((tail >> (span % 64)) != 0) throw DecodeError("bitmap bits set past its span");
    }
    if (span != 0 && span - 1 > ~std::uint64_t{0} - header.base) throw DecodeError("bitmap span overflows 64 bits");
    s.reserve(s.words, words);
    s.reserve(s.offset, words + 1);
    s.copy_to_target(s.words.data(), raw.data(), words * 8);
    for_each_index(s.stream, words, StorePopulation{s.words.data(), s.offset.data()});
    if (s.exclusive_scan(s.offset.data(), words) != count) {
      throw DecodeError("bitmap holds a different number of ids than declared");
    }
    for_each_index(s.stream, words, WritePositions<std::uint64_t>{s.words.data(), s.offset.data(), header.base, out});
    s.stream.synchronize();
    return;
  }
  // bitpack: the block headers, walked here (codec/block_codec.cpp's layout).
  const std::uint64_t blocks = (count + kBlock - 1) / kBlock;
  std::vector<std::uint64_t> width(blocks);
  std::vector<std::uint64_t> reference(blocks);
  std::vector<std::uint64_t> data_at(blocks);
  for (std::uint64_t k = 0; k < blocks; ++k) {
    const std::uint64_t n = count - k * kBlock < kBlock ? count - k * kBlock : kBlock;
    width[k] = reader.u8("block width");
    if (width[k] > 64) throw DecodeError("block width " + std::to_string(width[k]) + " above 64");
    reference[k] = reader.varint("block reference");
    data_at[k] = reader.position();
    if (width[k] > 0)
      reader.take(static_cast<std::size_t>(packed_size(n, static_cast<unsigned>(width[k]))), "packed values");
  }
  if (reader.remaining() != 0) throw DecodeError("bytes left after the last block");
  s.reserve(s.width, blocks);
  s.reserve(s.reference, blocks);
  s.reserve(s.offset, blocks + 1);
  s.copy_to_target(s.width.data(), width.data(), blocks * 8);
  s.copy_to_target(s.reference.data(), reference.data(), blocks * 8);
  s.copy_to_target(s.offset.data(), data_at.data(), blocks * 8);
  // The payload is read a byte at a time, so it may sit unaligned where it arrived.
  const std::uint8_t* packed = in_target != nullptr ? in_target + header.header_bytes : nullptr;
  if (packed == nullptr) {
    s.reserve(s.payload, payload.size());
    s.copy_to_target(s.payload.data(), payload.data(), payload.size());
    packed = s.payload.data();
  }
  s.clear_flag();
  for_each_index(
      s.stream, count,
      Unpack{packed, s.width.data(), s.reference.data(), s.offset.data(), count, sorted, out, s.flag.data()});
  if (sorted) {
    if (count > 0) {
      on_policy(s.stream, [&](auto policy) { thrust::inclusive_scan(policy, out, out + count, out); });
      // The first id: base plus the first residual; the rest follow by their steps.
      if (s.read(out) > ~std::uint64_t{0} - header.base) throw DecodeError("id past 2^64 - 1");
      for_each_index(s.stream, count, AddBase{header.base, out, s.flag.data()});
      for_each_index(s.stream, count - 1, CheckIncreasing{out, s.flag.data()});
    }
  } else {
    for_each_index(s.stream, count, AddBase{header.base, out, s.flag.data()});
  }
  if (s.read(s.flag.data()) != 0) throw DecodeError("id past 2^64 - 1");
}

}  // namespace zbfs::cuda_backend
