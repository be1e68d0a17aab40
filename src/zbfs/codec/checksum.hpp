// CRC-32C (Castagnoli), the checksum of every frame: catches corrupted and truncated
// buffers before a decoder trusts them. Uses the SSE4.2 crc32 instruction when the build
// targets it and a table otherwise; both give the same values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace zbfs {

// CRC-32C of `bytes`, continuing from `crc` (0 to start).
std::uint32_t crc32c(std::span<const std::uint8_t> bytes, std::uint32_t crc = 0);

// Lengths that are multiples of this are checksummed entirely on crc32c's fastest path
// (three interleaved streams where the crc32 instruction exists; shorter inputs run
// three streams too where carry-less multiplication joins them).
inline constexpr std::size_t kCrc32cStrideBytes = 768;

// The table version alone (tests compare it with the one in use).
std::uint32_t crc32c_portable(std::span<const std::uint8_t> bytes, std::uint32_t crc = 0);

}  // namespace zbfs
