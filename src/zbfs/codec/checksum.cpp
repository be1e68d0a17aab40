#include "zbfs/codec/checksum.hpp"

#include <array>
#include <cstring>
#include <utility>

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif
#if defined(__SSE4_2__) && defined(__PCLMUL__)
#include <wmmintrin.h>
#define ZBFS_CRC_CLMUL_JOIN 1
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

// The registers of three consecutive chunks of `length` bytes (a multiple of 8) from p,
// the first continuing from c, the others from zero.
struct ThreeStreams {
  std::uint64_t c, b, d;
};
ThreeStreams three_streams(std::uint64_t c, const std::uint8_t* p, std::size_t length) {
  std::uint64_t b = 0;
  std::uint64_t d = 0;
  for (std::size_t k = 0; k < length; k += 8) {
    c = _mm_crc32_u64(c, load_u64(p + k));
    b = _mm_crc32_u64(b, load_u64(p + length + k));
    d = _mm_crc32_u64(d, load_u64(p + 2 * length + k));
  }
  return {c, b, d};
}
#endif

#if defined(ZBFS_CRC_CLMUL_JOIN)
// Inputs shorter than a stride (most frames: a few hundred bytes) also run three streams,
// over three chunks of whatever length fits, joined by carry-less multiplication: in the
// reflected domain clmul(a, k) is a * k * x and crc32(0, v) is v * x^32 mod P, so
// crc32(0, clmul(c, x^(8L - 33) mod P)) advances c over L zero bytes, for any L. One
// stream alone is bound by the crc32 instruction's latency (55 ns for 440 bytes on Zen 3
// against 35 with three).
constexpr std::size_t kShortStreamWords = kChunk / 8 * 2;  // a join covers 2 chunks under kChunk

// x^n mod P in the reflected domain (x^0 is the top bit).
constexpr std::uint32_t x_power(std::size_t n) {
  std::uint32_t v = 0x80000000u;
  for (std::size_t i = 0; i < n; ++i) v = (v & 1u) != 0 ? (v >> 1) ^ kReflectedPolynomial : v >> 1;
  return v;
}
template <std::size_t... I>
constexpr std::array<std::uint32_t, sizeof...(I)> make_join_constants(std::index_sequence<I...>) {
  return {x_power(64 * (I + 1) - 33)...};
}
// kJoin[w - 1] advances a register over w words of 8 zero bytes.
constexpr auto kJoin = make_join_constants(std::make_index_sequence<kShortStreamWords>{});
static_assert((kCrc32cStrideBytes - 1) / 24 * 2 <= kShortStreamWords);

std::uint64_t clmul(std::uint64_t register_value, std::uint32_t constant) {
  const __m128i product = _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<long long>(register_value)),
                                               _mm_cvtsi32_si128(static_cast<int>(constant)), 0);
  return static_cast<std::uint64_t>(_mm_cvtsi128_si64(product));
}

// Below this many bytes the join costs more than it saves.
constexpr std::size_t kShortStreamsFrom = 72;
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
    const ThreeStreams s = three_streams(c, p, kChunk);
    c = shift_over_chunk(shift_over_chunk(static_cast<std::uint32_t>(s.c)) ^ static_cast<std::uint32_t>(s.b)) ^
        static_cast<std::uint32_t>(s.d);
  }
#if defined(ZBFS_CRC_CLMUL_JOIN)
  if (n >= kShortStreamsFrom) {
    const std::size_t words = n / 24;  // per stream, below kChunk / 8
    const std::size_t length = words * 8;
    const ThreeStreams s = three_streams(c, p, length);
    // c advanced over the two chunks after it, b over one: both joins at once.
    c = _mm_crc32_u64(0, clmul(s.c, kJoin[2 * words - 1]) ^ clmul(s.b, kJoin[words - 1])) ^ s.d;
    p += 3 * length;
    n -= 3 * length;
  }
#endif
  for (; n >= 8; n -= 8, p += 8) c = _mm_crc32_u64(c, load_u64(p));
  auto c32 = static_cast<std::uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = _mm_crc32_u8(c32, *p);
  return ~c32;
#else
  return crc32c_portable(bytes, crc);
#endif
}

}  // namespace zbfs
