// The bitpack and bitmap codecs on the device backend's target (compression on the
// device): frames of ids that live in the target's memory are encoded there, so only the
// small form crosses PCIe, and decoded there from received frames. Wire-compatible with
// the CPU codecs byte for byte (codec/frame.hpp, block_codec.cpp, bitmap_codec.cpp): a
// frame either side writes, the other reads.
// - Encoding: every residual (a set's gap minus one, a sequence's value) is a function of
//   its index; one index per 128-value block finds the block's width and reference, a scan
//   of the blocks' sizes places them, and one index per packed 64-bit word (full blocks:
//   the two interleaved lanes) or byte (the last, partial block: a bit stream) writes the
//   payload. The payload comes to host memory, where the frame's header and its CRC-32C
//   are written (the checksum of the bytes where they land).
// - Decoding: the host checks the frame (header, checksum) and walks its block headers
//   (a byte or a few per 128 ids), the payload goes to the target, one index per value
//   unpacks it, and a set's gaps become ids by a scan; overflow past 2^64 is refused as
//   the CPU decoder refuses it. Frames of other codecs are decoded on the host and copied.
// Plain C++ interface; the implementation is device_codec.cu.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "zbfs/backend/execution_target.hpp"
#include "zbfs/codec/codec_id.hpp"
#include "zbfs/codec/frame.hpp"
#include "zbfs/core/byte_buffer.hpp"

namespace zbfs::cuda_backend {

class DeviceCodec {
 public:
  explicit DeviceCodec(ExecutionTarget target);
  ~DeviceCodec();
  DeviceCodec(const DeviceCodec&) = delete;
  DeviceCodec& operator=(const DeviceCodec&) = delete;

  // The codec works on a stream of its own: ids handed to encode must be complete (the
  // stream that wrote them synchronized), and what decode writes is complete when it
  // returns.
  // Appends one frame of ids[0, count) (target memory) to `out`: the bytes encode_frame
  // writes for `codec` (kBitpack or kBitmap; kBitmap falls back to kBitpack where the CPU
  // codec does). Returns the codec used. Sorted sets must be strictly increasing.
  // `also_in_target`: the frame is written there too (target memory, room for the
  // frame): the header copied in, a bitpack payload copied on the target from where it
  // was packed (a device wire's outgoing message).
  CodecId encode(CodecId codec, const std::uint64_t* ids, std::uint64_t count, IdOrder order, ByteBuffer& out,
                 std::uint8_t* also_in_target = nullptr);
  // Bytes a frame of `count` ids can take at most (room for also_in_target).
  static std::uint64_t max_frame_bytes(std::uint64_t count);
  // Appends the frame encode_bitmap_frame(kBitmap, words) writes, words in target memory.
  void encode_bitmap_words(const std::uint64_t* words, std::uint64_t count, ByteBuffer& out);
  // Decodes the frame `header` describes (read from `bytes`, host memory) into
  // out[0, header.count), target memory. Throws DecodeError as decode_frame_into does.
  // `in_target`: the same frame's bytes in target memory (a device wire's arrival): a
  // bitpack payload is then unpacked where it is instead of being copied in again (the
  // host copy still serves the header, checksum and block walk).
  void decode(std::span<const std::uint8_t> bytes, const FrameHeader& header, std::uint64_t* out,
              const std::uint8_t* in_target = nullptr);

  [[nodiscard]] HostDeviceTraffic traffic() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace zbfs::cuda_backend
