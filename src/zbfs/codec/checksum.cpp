#include "zbfs/codec/checksum.hpp"

#include <array>
#include <cstring>

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

namespace zbfs {
namespace {

constexpr std::uint32_t kReflectedPolynomial = 0x82F63B78u;

constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) != 0 ? (c >> 1) ^ kReflectedPolynomial : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<std::uint32_t, 256> kTable = make_table();

#if defined(__SSE4_2__)
// The crc32 instruction has a latency of about three cycles and a throughput of one, so
// one stream uses a third of it. Long inputs run three streams over three consecutive
// chunks of kChunk bytes and join them: the CRC register is linear, so the register after
// chunks A then B is shift(register after A) XOR (register of B from zero), where shift
// advances a register over kChunk zero bytes. That shift is linear in the register's 32
// bits and is tabulated per byte of it; the result is exactly CRC-32C.
constexpr std::size_t kChunk = 256;
static_assert(3 * kChunk == kCrc32cStrideBytes);

using ShiftTables = std::array<std::array<std::uint32_t, 256>, 4>;

constexpr ShiftTables make_shift_tables() {
  std::array<std::uint32_t, 32> bit_image{};  // shift of each single-bit register
  for (unsigned bit = 0; bit < 32; ++bit) {
    std::uint32_t c = std::uint32_t{1} << bit;
    for (std::size_t k = 0; k < kChunk; ++k) c = kTable[c & 0xffu] ^ (c >> 8);
    bit_image[bit] = c;
  }
  ShiftTables tables{};
  for (unsigned byte = 0; byte < 4; ++byte) {
    for (unsigned value = 0; value < 256; ++value) {
      std::uint32_t image = 0;
      for (unsigned b = 0; b < 8; ++b) {
        if ((value >> b & 1u) != 0) image ^= bit_image[byte * 8 + b];
      }
      tables[byte][value] = image;
    }
  }
  return tables;
}
constexpr ShiftTables kShift = make_shift_tables();

std::uint32_t shift_over_chunk(std::uint32_t c) {
  return kShift[0][c & 0xffu] ^ kShift[1][(c >> 8) & 0xffu] ^ kShift[2][(c >> 16) & 0xffu] ^ kShift[3][c >> 24];
}

std::uint64_t load_u64(const std::uint8_t* p) {
  std::uint64_t word = 0;
  std::memcpy(&word, p, 8);
  return word;
}
#endif

}  // namespace

std::uint32_t crc32c_portable(std::span<const std::uint8_t> bytes, std::uint32_t crc) {
  crc = ~crc;
  for (const std::uint8_t b : bytes) crc = kTable[(crc ^ b) & 0xffu] ^ (crc >> 8);
  return ~crc;
}

std::uint32_t crc32c(std::span<const std::uint8_t> bytes, std::uint32_t crc) {
#if defined(__SSE4_2__)
  std::uint64_t c = ~crc;
  const std::uint8_t* p = bytes.data();
  std::size_t n = bytes.size();
  for (; n >= 3 * kChunk; n -= 3 * kChunk, p += 3 * kChunk) {
    std::uint64_t b = 0;
    std::uint64_t d = 0;
    for (std::size_t k = 0; k < kChunk; k += 8) {
      c = _mm_crc32_u64(c, load_u64(p + k));
      b = _mm_crc32_u64(b, load_u64(p + kChunk + k));
      d = _mm_crc32_u64(d, load_u64(p + 2 * kChunk + k));
    }
    c = shift_over_chunk(shift_over_chunk(static_cast<std::uint32_t>(c)) ^ static_cast<std::uint32_t>(b)) ^
        static_cast<std::uint32_t>(d);
  }
  for (; n >= 8; n -= 8, p += 8) c = _mm_crc32_u64(c, load_u64(p));
  auto c32 = static_cast<std::uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = _mm_crc32_u8(c32, *p);
  return ~c32;
#else
  return crc32c_portable(bytes, crc);
#endif
}

}  // namespace zbfs
