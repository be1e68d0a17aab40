// CRC-32C (Castagnoli), the checksum of every frame: catches corrupted and truncated
// buffers before a decoder trusts them. Uses the SSE4.2 crc32 instruction when the build
// targets it and a table otherwise; both give the same values.
#pragma once

#include <cstdint>
#include <span>

namespace zbfs {

// CRC-32C of `bytes`, continuing from `crc` (0 to start).
std::uint32_t crc32c(std::span<const std::uint8_t> bytes, std::uint32_t crc = 0);

// The table version alone (tests compare it with the one in use).
std::uint32_t crc32c_portable(std::span<const std::uint8_t> bytes, std::uint32_t crc = 0);

}  // namespace zbfs
