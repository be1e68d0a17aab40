// Compression on the device (backend/cuda/device_codec.hpp): bitpack and bitmap frames
// encoded on the device backend's target must be the CPU codecs' frames byte for byte,
// and frames from the CPU must decode there to the same ids, with the same refusals of
// damaged or overflowing frames. Runs through the host launcher everywhere and on the GPU
// too where one is visible (scripts/gpu-check). Built only with the CUDA backend.
#include "zbfs/backend/cuda/device_codec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/cuda/target_buffer.hpp"
#include "zbfs/codec/frame.hpp"

namespace zbfs {
namespace {

using cuda_backend::DeviceCodec;

// The targets to test: the host launcher always, the GPU too where one is visible.
std::vector<ExecutionTarget> targets() {
  std::vector<ExecutionTarget> all{ExecutionTarget::kHost};
  if (cuda_device_visible()) all.push_back(ExecutionTarget::kDevice);
  return all;
}

// ids copied to the target's memory.
class TargetIds {
 public:
  TargetIds(ExecutionTarget target, const std::vector<std::uint64_t>& ids) : buffer_(target, ids.size() * 8 + 8) {
    buffer_.upload(ids.data(), ids.size() * 8);
  }
  [[nodiscard]] std::uint64_t* data() const { return static_cast<std::uint64_t*>(buffer_.data()); }
  [[nodiscard]] std::vector<std::uint64_t> read(std::size_t n) const {
    std::vector<std::uint64_t> ids(n);
    buffer_.download(ids.data(), n * 8);
    return ids;
  }

 private:
  cuda_backend::TargetBuffer buffer_;
};

std::vector<std::uint64_t> sorted_set(std::mt19937_64& rng, std::size_t n, std::uint64_t base, std::uint64_t max_gap) {
  std::vector<std::uint64_t> ids;
  std::uint64_t x = base;
  std::uniform_int_distribution<std::uint64_t> gap(0, max_gap);
  for (std::size_t i = 0; i < n; ++i) {
    ids.push_back(x);
    const std::uint64_t step = 1 + gap(rng);
    if (x > std::numeric_limits<std::uint64_t>::max() - step) break;
    x += step;
  }
  return ids;
}

void expect_same_frame(ExecutionTarget target, DeviceCodec& codec, CodecId which, const std::vector<std::uint64_t>& ids,
                       IdOrder order, const std::string& what) {
  SCOPED_TRACE(what + ", " + std::to_string(ids.size()) + " ids, " + std::string(to_string(which)));
  ByteBuffer cpu;
  const CodecId cpu_used = encode_frame(which, ids, order, cpu);
  ByteBuffer device;
  const TargetIds on_target(target, ids);
  const CodecId device_used = codec.encode(which, on_target.data(), ids.size(), order, device);
  EXPECT_EQ(device_used, cpu_used);
  ASSERT_EQ(std::vector<std::uint8_t>(device.bytes().begin(), device.bytes().end()),
            std::vector<std::uint8_t>(cpu.bytes().begin(), cpu.bytes().end()));
  // Written in target memory too, as a device wire sends it: the same bytes.
  ASSERT_LE(cpu.size(), DeviceCodec::max_frame_bytes(ids.size()));
  cuda_backend::TargetBuffer sent(target, DeviceCodec::max_frame_bytes(ids.size()));
  ByteBuffer again;
  codec.encode(which, on_target.data(), ids.size(), order, again, static_cast<std::uint8_t*>(sent.data()));
  std::vector<std::uint8_t> in_target(cpu.size());
  sent.download(in_target.data(), in_target.size());
  ASSERT_EQ(in_target, std::vector<std::uint8_t>(cpu.bytes().begin(), cpu.bytes().end()));
  const TargetIds decoded(target, std::vector<std::uint64_t>(ids.size(), 7));
  codec.decode(cpu.bytes(), read_frame_header(cpu.bytes(), ids.size()), decoded.data());
  EXPECT_EQ(decoded.read(ids.size()), ids);
  // The same frame where a device wire leaves it, in target memory at an odd address:
  // its payload is unpacked there.
  cuda_backend::TargetBuffer arrived(target, cpu.size() + 1);
  std::vector<std::uint8_t> shifted(cpu.size() + 1, 0);
  std::copy(cpu.bytes().begin(), cpu.bytes().end(), shifted.begin() + 1);
  arrived.upload(shifted.data(), shifted.size());
  const TargetIds in_place(target, std::vector<std::uint64_t>(ids.size(), 7));
  codec.decode(cpu.bytes(), read_frame_header(cpu.bytes(), ids.size()), in_place.data(),
               static_cast<const std::uint8_t*>(arrived.data()) + 1);
  EXPECT_EQ(in_place.read(ids.size()), ids);
}

class DeviceCodecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_backend_built()) GTEST_SKIP() << "built without CUDA";
  }
};

TEST_F(DeviceCodecTest, SortedSetsMatchTheCpuCodecsByteForByte) {
  std::mt19937_64 rng(36);
  for (const ExecutionTarget target : targets()) {
    DeviceCodec codec(target);
    for (const std::size_t n : {0, 1, 2, 127, 128, 129, 255, 256, 300, 1000, 4097}) {
      for (const std::uint64_t max_gap :
           {std::uint64_t{0}, std::uint64_t{3}, std::uint64_t{200}, std::uint64_t{1} << 20, std::uint64_t{1} << 40}) {
        for (const std::uint64_t base : {std::uint64_t{0}, std::uint64_t{12345}, std::uint64_t{1} << 62}) {
          const std::vector<std::uint64_t> ids = sorted_set(rng, n, base, max_gap);
          const std::string what = "gaps to " + std::to_string(max_gap) + " from " + std::to_string(base);
          expect_same_frame(target, codec, CodecId::kBitpack, ids, IdOrder::kSortedSet, what);
          expect_same_frame(target, codec, CodecId::kBitmap, ids, IdOrder::kSortedSet, what);
        }
      }
    }
    // A set reaching the top of the id range, and one with a single huge gap.
    std::vector<std::uint64_t> top{0, 1, 2, std::numeric_limits<std::uint64_t>::max() - 1,
                                   std::numeric_limits<std::uint64_t>::max()};
    expect_same_frame(target, codec, CodecId::kBitpack, top, IdOrder::kSortedSet, "top of the range");
    std::vector<std::uint64_t> dense = sorted_set(rng, 200, 5, 0);
    dense.push_back(std::uint64_t{1} << 63);
    expect_same_frame(target, codec, CodecId::kBitpack, dense, IdOrder::kSortedSet, "a huge last gap");
    expect_same_frame(target, codec, CodecId::kBitmap, dense, IdOrder::kSortedSet, "a huge last gap");
  }
}

TEST_F(DeviceCodecTest, SequencesMatchTheCpuCodecByteForByte) {
  std::mt19937_64 rng(37);
  for (const ExecutionTarget target : targets()) {
    DeviceCodec codec(target);
    for (const std::size_t n : {0, 1, 5, 128, 129, 640, 3001}) {
      for (const std::uint64_t range : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1000}, std::uint64_t{1} << 33,
                                        std::numeric_limits<std::uint64_t>::max()}) {
        std::uniform_int_distribution<std::uint64_t> value(0, range);
        const std::uint64_t offset = range == std::numeric_limits<std::uint64_t>::max() ? 0 : 77777;
        std::vector<std::uint64_t> ids(n);
        for (std::uint64_t& id : ids) id = offset + value(rng);
        const std::string what = "values in a range of " + std::to_string(range);
        expect_same_frame(target, codec, CodecId::kBitpack, ids, IdOrder::kSequence, what);
        // A bitmap cannot hold a sequence: both fall back to bitpack.
        expect_same_frame(target, codec, CodecId::kBitmap, ids, IdOrder::kSequence, what);
      }
    }
  }
}

TEST_F(DeviceCodecTest, BitmapWordsMatchTheCpuFrame) {
  std::mt19937_64 rng(38);
  for (const ExecutionTarget target : targets()) {
    DeviceCodec codec(target);
    for (const std::size_t words : {0, 1, 3, 64, 1000}) {
      std::vector<std::uint64_t> bits(words);
      for (std::uint64_t& w : bits) w = rng() & rng();
      ByteBuffer cpu;
      encode_bitmap_frame(CodecId::kBitmap, bits, cpu);
      ByteBuffer device;
      const TargetIds on_target(target, bits);
      codec.encode_bitmap_words(on_target.data(), bits.size(), device);
      EXPECT_EQ(std::vector<std::uint8_t>(device.bytes().begin(), device.bytes().end()),
                std::vector<std::uint8_t>(cpu.bytes().begin(), cpu.bytes().end()))
          << words << " words";
    }
  }
}

TEST_F(DeviceCodecTest, DamagedAndOverflowingFramesAreRefused) {
  std::mt19937_64 rng(39);
  DeviceCodec codec(ExecutionTarget::kHost);
  const std::vector<std::uint64_t> ids = sorted_set(rng, 500, 10, 50);
  for (const CodecId which : {CodecId::kBitpack, CodecId::kBitmap}) {
    ByteBuffer frame;
    encode_frame(which, ids, IdOrder::kSortedSet, frame);
    const FrameHeader header = read_frame_header(frame.bytes(), ids.size());
    std::vector<std::uint64_t> out(ids.size());
    for (const std::size_t at : {header.header_bytes, header.header_bytes + 1, frame.size() - 1}) {
      std::vector<std::uint8_t> bad(frame.bytes().begin(), frame.bytes().end());
      bad[at] ^= 0x10;
      EXPECT_THROW(codec.decode(bad, header, out.data()), DecodeError) << to_string(which) << " byte " << at;
    }
  }
  // A valid frame whose second id passes 2^64 - 1: base 2^64 - 2, residuals 0 and 5
  // (one 3-bit stream block). The CPU decoder refuses it, and so must the device's.
  ByteBuffer frame;
  frame.put_u8(static_cast<std::uint8_t>(CodecId::kBitpack));
  frame.put_u8(0);
  frame.put_varint(2);
  frame.put_varint(std::numeric_limits<std::uint64_t>::max() - 1);
  const std::size_t header_end = frame.size();
  const std::uint8_t payload[] = {3, 0, 5 << 3};
  frame.put_u32(sizeof payload);
  frame.put_u32(frame_checksum(frame.bytes().first(header_end + 4), payload));
  frame.append(payload, sizeof payload);
  const FrameHeader header = read_frame_header(frame.bytes(), 2);
  std::vector<std::uint64_t> out(2);
  EXPECT_THROW(decode_frame_into(frame.bytes(), header, out.data()), DecodeError);
  EXPECT_THROW(codec.decode(frame.bytes(), header, out.data()), DecodeError);
}

}  // namespace
}  // namespace zbfs
