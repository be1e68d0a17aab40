// How a device search's id lists cross between host and device memory: as they are, as
// bitpack frames the device encodes and decodes (device_codec.hpp), or, under --codec auto,
// whichever the target's own calibration prices lower for each list. Plain C++ (the
// calibration itself runs in distributed_steps.cu).
#pragma once

#include <bit>
#include <cstdint>
#include <string_view>

namespace zbfs::cuda_backend {

enum class IdTransfer { kRaw, kFrames, kPriced };

inline std::string_view to_string(IdTransfer transfer) {
  switch (transfer) {
    case IdTransfer::kRaw: return "raw";
    case IdTransfer::kFrames: return "frames";
    case IdTransfer::kPriced: return "priced";
  }
  return "unknown";
}

// The target's costs, measured once (alpha-beta fits of two sizes each).
struct PcieCosts {
  double copy_latency_s = 0;    // a small copy through the pinned staging buffer
  double copy_bytes_per_s = 0;  // a large one's rate
  double frame_latency_s = 0;   // a frame's fixed cost beyond its copy (launches, small reads)
  double frame_s_per_id = 0;    // encoding and decoding per id, beyond the frame's copy
};

// bitpack's size for `count` sorted ids spread over `span` positions: gaps of about
// span / count, a block's width a bit above the mean gap's, a header per 128 ids.
inline std::uint64_t estimated_frame_bytes(std::uint64_t count, std::uint64_t span) {
  if (count == 0) return 16;
  const std::uint64_t mean_gap = span / count;
  const auto width = static_cast<std::uint64_t>(std::bit_width(mean_gap)) + 1;
  return 16 + count * width / 8 + 2 * (count / 128 + 1);
}

// Whether `count` ids over `span` positions cross faster as a frame than as 8 bytes each.
inline bool frames_pay(const PcieCosts& c, std::uint64_t count, std::uint64_t span) {
  if (c.copy_bytes_per_s <= 0) return false;
  const auto n = static_cast<double>(count);
  const double raw = c.copy_latency_s + 8 * n / c.copy_bytes_per_s;
  const double framed = c.copy_latency_s + c.frame_latency_s + n * c.frame_s_per_id +
                        static_cast<double>(estimated_frame_bytes(count, span)) / c.copy_bytes_per_s;
  return framed < raw;
}

}  // namespace zbfs::cuda_backend
