// Bit packing kernels shared by the block codecs (bitpack, pfor) and rice: 128 values of
// b bits in two interleaved lanes (value i in lane i % 2, each lane a stream of 64-bit
// words: 64 values of b bits fill exactly b words, whatever b), so that one vector
// instruction packs or unpacks a value of each lane. The kernels are generated per bit
// width with every shift known at compile time. Short blocks use a plain little-endian
// bit stream instead. Internal to the codec folder.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

// The sorted-set kernels (bitpack's and rice's fused decoders, the encoders' gap pass)
// run on 256-bit vectors with AVX2, except on cores that split them in two halves (AMD
// Zen 1), where the 128-bit kernels issue fewer micro-ops.
#if defined(__AVX2__) && !defined(__znver1__)
#include <immintrin.h>
#define ZBFS_WIDE_GAP_KERNEL 1
#endif

namespace zbfs::codec_detail {
// The kernels differ with the target, so their names do too: a translation unit built
// without AVX2 (a test, a consumer) must not share the library's instantiations at link
// time, where the linker would keep one definition of each template for both.
#if defined(ZBFS_WIDE_GAP_KERNEL)
inline namespace wide_kernels {
#else
inline namespace portable_kernels {
#endif

inline constexpr std::size_t kBlock = 128;
inline constexpr std::size_t kLanes = 2;  // 64 values of b bits fill exactly b words per lane

// Both lanes at once in one 128-bit vector (GCC/Clang vector extensions: SSE2 on x86,
// NEON on ARM); the auto-vectoriser does not find this on its own.
using Lanes = std::uint64_t __attribute__((vector_size(16)));

// Packed words are addressed as bytes: the kernels read from received buffers and write
// into send buffers in place, at any alignment.
template <typename Word = Lanes>
inline __attribute__((always_inline)) Word load_lanes(const void* at) {
  Word v;
  std::memcpy(&v, at, sizeof v);
  return v;
}
template <typename Word>
inline __attribute__((always_inline)) void store_lanes(void* at, Word v) {
  std::memcpy(at, &v, sizeof v);
}

inline constexpr std::uint64_t mask_of(unsigned b) { return b == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << b) - 1; }
template <unsigned B>
inline constexpr std::uint64_t kMask = mask_of(B);

// What a kernel packs: values minus the reference, masked to B bits when some may be
// wider (pfor's exceptions); values minus the reference that fit; residuals that fit as
// they are (a sorted set's gaps, reference 0); or the low B bits of residuals (rice).
enum class Source { kWideValues, kValues, kResiduals, kLowBits };

// Value J of each lane into its lane's current word (`word`, in a register), which is
// stored once it is full. With a plain 64-bit Word there is one lane: a bit stream.
template <unsigned B, Source S, unsigned J, typename Word = Lanes>
inline __attribute__((always_inline)) void pack_one(const std::uint64_t* __restrict__ in, Word offset, Word& word,
                                                    std::uint8_t* __restrict__ out) {
  constexpr unsigned lanes = sizeof(Word) / 8;
  constexpr unsigned bit = J * B;
  constexpr unsigned index = bit / 64;
  constexpr unsigned shift = bit % 64;
  Word v = load_lanes<Word>(in + J * lanes);
  if constexpr (S == Source::kWideValues || S == Source::kValues) v -= offset;
  // Wider values are masked, except the one whose high bits the shift drops anyway.
  if constexpr ((S == Source::kWideValues || S == Source::kLowBits) && shift + B != 64) v &= kMask<B>;
  if constexpr (shift == 0) {
    word = v;
  } else {
    word |= v << shift;
  }
  if constexpr (shift + B >= 64) {
    store_lanes(out + index * lanes * 8, word);
    if constexpr (shift + B > 64) word = v >> (64 - shift);
  }
}

// Value J of each lane as B bits (zero when B is 0).
template <unsigned B, unsigned J>
inline __attribute__((always_inline)) Lanes unpack_one(const std::uint8_t* __restrict__ in) {
  if constexpr (B == 0) {
    return Lanes{0, 0};
  } else {
    constexpr unsigned bit = J * B;
    constexpr unsigned word = bit / 64;
    constexpr unsigned shift = bit % 64;
    Lanes v = load_lanes(in + word * kLanes * 8) >> shift;
    if constexpr (shift + B > 64) v |= load_lanes(in + (word + 1) * kLanes * 8) << (64 - shift);
    return v & kMask<B>;
  }
}

// The kernels expand over every value index with a fold over an index sequence, in
// always-inlined helpers: a lambda there may be left out of line, which puts the running
// state in memory.

template <unsigned B, Source S, unsigned... J>
inline __attribute__((always_inline)) void pack_all(const std::uint64_t* in, Lanes offset, std::uint8_t* out,
                                                    std::integer_sequence<unsigned, J...>) {
  Lanes word = {0, 0};
  (pack_one<B, S, J>(in, offset, word, out), ...);
}

// 128 values minus `offset` (residuals: offset unused), of B bits (B > 0), into 16 B
// bytes.
template <unsigned B, Source S>
void pack_block(const std::uint64_t* in, std::uint64_t offset, std::uint8_t* out) {
  pack_all<B, S>(in, Lanes{offset, offset}, out, std::make_integer_sequence<unsigned, kBlock / kLanes>{});
}

#if defined(ZBFS_WIDE_GAP_KERNEL)
// The CRC register (not inverted) over the words value J completed: both lanes' word, 16
// bytes, once its last value is in. Read back from where pack_one just stored them.
template <unsigned B, unsigned J>
inline __attribute__((always_inline)) void checksum_completed(const std::uint8_t* out, std::uint64_t& crc) {
  constexpr unsigned bit = J * B;
  if constexpr (bit % 64 + B >= 64) {
    const std::uint8_t* word = out + bit / 64 * kLanes * 8;
    crc = _mm_crc32_u64(crc, load_lanes<std::uint64_t>(word));
    crc = _mm_crc32_u64(crc, load_lanes<std::uint64_t>(word + 8));
  }
}

template <unsigned B, Source S, unsigned... J>
inline __attribute__((always_inline)) std::uint32_t pack_all_checksummed(const std::uint64_t* in, Lanes offset,
                                                                         std::uint8_t* out, std::uint32_t crc,
                                                                         std::integer_sequence<unsigned, J...>) {
  Lanes word = {0, 0};
  std::uint64_t c = crc;
  ((pack_one<B, S, J>(in, offset, word, out), checksum_completed<B, J>(out, c)), ...);
  return static_cast<std::uint32_t>(c);
}

// pack_block that also continues a CRC register over the 16 B bytes it writes, as the
// checksummed gap kernel does on receipt: the register's chain runs beside the vector
// work.
template <unsigned B, Source S>
std::uint32_t pack_block_checksummed(const std::uint64_t* in, std::uint64_t offset, std::uint8_t* out,
                                     std::uint32_t crc) {
  return pack_all_checksummed<B, S>(in, Lanes{offset, offset}, out, crc,
                                    std::make_integer_sequence<unsigned, kBlock / kLanes>{});
}
#endif

template <unsigned B, unsigned... J>
inline __attribute__((always_inline)) void unpack_all(const std::uint8_t* in, Lanes reference, std::uint64_t* out,
                                                      std::integer_sequence<unsigned, J...>) {
  (store_lanes(out + J * kLanes, unpack_one<B, J>(in) + reference), ...);
}

// 128 values of B bits plus the reference (B = 0 too: every value is the reference).
template <unsigned B>
void unpack_block(const std::uint8_t* in, std::uint64_t reference, std::uint64_t* out) {
  unpack_all<B>(in, Lanes{reference, reference}, out, std::make_integer_sequence<unsigned, kBlock / kLanes>{});
}

// Two pairs of a sorted set's block: an in-register scan of each pair, the first pair's
// total added into the second, then the running total (the last id so far, in both
// lanes). From one quad to the next the only dependency is a shuffle and an add, so the
// scan's chain costs half a cycle per id rather than one.
template <unsigned B, unsigned Q>
inline __attribute__((always_inline)) void unpack_gap_quad(const std::uint8_t* in, Lanes pair_steps, Lanes& total,
                                                           std::uint64_t* out) {
  Lanes a = unpack_one<B, 2 * Q>(in);
  Lanes b = unpack_one<B, 2 * Q + 1>(in);
  a += __builtin_shufflevector(Lanes{0, 0}, a, 0, 2) + pair_steps;  // {v0 + step, v0 + v1 + 2 step}
  b += __builtin_shufflevector(Lanes{0, 0}, b, 0, 2) + pair_steps;
  b += __builtin_shufflevector(a, a, 1, 1);
  store_lanes(out + 2 * Q * kLanes, a + total);
  store_lanes(out + (2 * Q + 1) * kLanes, b + total);
  total += __builtin_shufflevector(b, b, 1, 1);
}

template <unsigned B, unsigned... Q>
inline __attribute__((always_inline)) std::uint64_t unpack_gap_all(const std::uint8_t* in, Lanes pair_steps,
                                                                   Lanes total, std::uint64_t* out,
                                                                   std::integer_sequence<unsigned, Q...>) {
  (unpack_gap_quad<B, Q>(in, pair_steps, total, out), ...);
  return total[0];
}

#if defined(ZBFS_WIDE_GAP_KERNEL)
// Values J and J + 1 of both lanes, ids 2J to 2J + 3 in order, in one 256-bit vector: the
// two lanes' words that hold them (one word broadcast to both halves, or two consecutive
// words, since B <= 64), shifted per half, and the high words of a value that straddles
// into the next word shifted in (a shift by 64 gives 0 for the half that does not).
template <unsigned B, unsigned J>
inline __attribute__((always_inline)) __m256i unpack_two(const std::uint8_t* __restrict__ in) {
  if constexpr (B == 0) {
    return _mm256_setzero_si256();
  } else {
    constexpr unsigned bit0 = J * B;
    constexpr unsigned bit1 = bit0 + B;
    constexpr unsigned w0 = bit0 / 64, s0 = bit0 % 64;
    constexpr unsigned w1 = bit1 / 64, s1 = bit1 % 64;
    const auto words = [in](unsigned first, unsigned second) {
      const std::uint8_t* at = in + std::size_t{first} * kLanes * 8;
      if (first == second) return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(at)));
      return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
    };
    __m256i v = words(w0, w1);
    if constexpr (s0 != 0 || s1 != 0) v = _mm256_srlv_epi64(v, _mm256_setr_epi64x(s0, s0, s1, s1));
    constexpr bool straddle0 = s0 + B > 64;
    constexpr bool straddle1 = s1 + B > 64;
    if constexpr (straddle0 || straddle1) {
      // A half that does not straddle reads the other half's word and shifts it out.
      constexpr unsigned h0 = straddle0 ? w0 + 1 : w1 + 1;
      constexpr unsigned h1 = straddle1 ? w1 + 1 : h0;
      constexpr long long up0 = straddle0 ? 64 - s0 : 64;
      constexpr long long up1 = straddle1 ? 64 - s1 : 64;
      v = _mm256_or_si256(v, _mm256_sllv_epi64(words(h0, h1), _mm256_setr_epi64x(up0, up0, up1, up1)));
    }
    if constexpr (B < 64) v = _mm256_and_si256(v, _mm256_set1_epi64x(static_cast<long long>(kMask<B>)));
    return v;
  }
}

// Four consecutive ids with the step added, scanned: {v0, v0+v1, v0+v1+v2, v0+..+v3}.
inline __attribute__((always_inline)) __m256i scan_four(__m256i v) {
  v = _mm256_add_epi64(v, _mm256_slli_si256(v, 8));  // within each half
  // The low half's total, into both elements of the high half.
  const __m256i low_total = _mm256_permute2x128_si256(_mm256_shuffle_epi32(v, 0xEE), v, 0x08);
  return _mm256_add_epi64(v, low_total);
}

// Eight ids: both quads scanned apart, then each plus the running total (the last id so
// far, in every element), which then takes the quad's total: the chain from one quad to
// the next is one add. (Adding the first quad's total into the second's scan instead,
// with one add of the octet's total to the running one, ran slower.)
template <unsigned B, unsigned O>
inline __attribute__((always_inline)) void unpack_gap_octet(const std::uint8_t* in, __m256i step, __m256i& total,
                                                            std::uint64_t* out) {
  const __m256i a = scan_four(_mm256_add_epi64(unpack_two<B, 4 * O>(in), step));
  const __m256i b = scan_four(_mm256_add_epi64(unpack_two<B, 4 * O + 2>(in), step));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * O), _mm256_add_epi64(a, total));
  total = _mm256_add_epi64(total, _mm256_permute4x64_epi64(a, 0xFF));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * O + 4), _mm256_add_epi64(b, total));
  total = _mm256_add_epi64(total, _mm256_permute4x64_epi64(b, 0xFF));
}

template <unsigned B, unsigned... O>
inline __attribute__((always_inline)) std::uint64_t unpack_gap_octets(const std::uint8_t* in, std::uint64_t step,
                                                                      std::uint64_t last, std::uint64_t* out,
                                                                      std::integer_sequence<unsigned, O...>) {
  const __m256i steps = _mm256_set1_epi64x(static_cast<long long>(step));
  __m256i total = _mm256_set1_epi64x(static_cast<long long>(last));
  (unpack_gap_octet<B, O>(in, steps, total, out), ...);
  return static_cast<std::uint64_t>(_mm256_extract_epi64(total, 0));
}
#endif

// A sorted set's block fused with its prefix sum: x[k] = x[k-1] + value + step, from
// x[-1] = last. Returns the block's last id (the caller checks it for wrap-around).
// Two ids at a time in 128-bit registers, the portable kernel.
template <unsigned B>
std::uint64_t unpack_gap_block_in_pairs(const std::uint8_t* in, std::uint64_t step, std::uint64_t last,
                                        std::uint64_t* out) {
  return unpack_gap_all<B>(in, Lanes{step, 2 * step}, Lanes{last, last}, out,
                           std::make_integer_sequence<unsigned, kBlock / (2 * kLanes)>{});
}

// The same, four ids at a time in 256-bit registers where the core runs them at full
// width (see ZBFS_WIDE_GAP_KERNEL): on an AMD Zen 3 core, 2.95 G ids/s in L1 against 2.6
// for the pairs.
template <unsigned B>
std::uint64_t unpack_gap_block(const std::uint8_t* in, std::uint64_t step, std::uint64_t last, std::uint64_t* out) {
#if defined(ZBFS_WIDE_GAP_KERNEL)
  return unpack_gap_octets<B>(in, step, last, out, std::make_integer_sequence<unsigned, kBlock / 8>{});
#else
  return unpack_gap_block_in_pairs<B>(in, step, last, out);
#endif
}

// A fused kernel's result where it also continues a CRC-32C register (the one the crc32
// instruction works on, not inverted) over the block's packed bytes.
struct GapBlockEnd {
  std::uint64_t last;  // the block's last id
  std::uint32_t crc;   // the CRC register after the packed bytes
};

#if defined(ZBFS_WIDE_GAP_KERNEL)
// The wide kernel that also takes the CRC: the register's chain (three cycles a word, 2B
// words) runs on the scalar ports while the vector work takes longer, so the checksum
// costs next to nothing, where a pass of its own behind the blocks would read the words
// again.

// The CRC register over octet O's share of the block's 2B packed words.
template <unsigned B, unsigned O>
inline __attribute__((always_inline)) void checksum_share(const std::uint8_t* in, std::uint64_t& crc) {
  for (unsigned w = O * B / 8; w < (O + 1) * B / 8; ++w)
    crc = _mm_crc32_u64(crc, load_lanes<std::uint64_t>(in + 8 * w));
}

template <unsigned B, unsigned... O>
inline __attribute__((always_inline)) GapBlockEnd unpack_gap_octets_checksummed(const std::uint8_t* in,
                                                                                std::uint64_t step, std::uint64_t last,
                                                                                std::uint64_t* out, std::uint32_t crc,
                                                                                std::integer_sequence<unsigned, O...>) {
  const __m256i steps = _mm256_set1_epi64x(static_cast<long long>(step));
  __m256i total = _mm256_set1_epi64x(static_cast<long long>(last));
  std::uint64_t c = crc;
  ((checksum_share<B, O>(in, c), unpack_gap_octet<B, O>(in, steps, total, out)), ...);
  return {static_cast<std::uint64_t>(_mm256_extract_epi64(total, 0)), static_cast<std::uint32_t>(c)};
}

template <unsigned B>
GapBlockEnd unpack_gap_block_checksummed(const std::uint8_t* in, std::uint64_t step, std::uint64_t last,
                                         std::uint64_t* out, std::uint32_t crc) {
  return unpack_gap_octets_checksummed<B>(in, step, last, out, crc, std::make_integer_sequence<unsigned, kBlock / 8>{});
}
#endif

// A sorted set's full block x[0, 128), after the id `before` (x[-1], or base - 1 for a
// set's first block, whose first gap is then 0): its residuals (gaps minus one) into r,
// with their OR, which bounds their width, and their sum (wrapping; exact while the OR
// is below 2^56), in one pass with two accumulators of each.
struct BlockGaps {
  std::uint64_t any;
  std::uint64_t sum;
};
inline BlockGaps gaps_of_block(const std::uint64_t* x, std::uint64_t before, std::uint64_t* r) {
#if defined(ZBFS_WIDE_GAP_KERNEL)
  const __m256i ones = _mm256_set1_epi64x(1);
  __m256i any[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
  __m256i sum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
  const auto load = [x](std::size_t at) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + at)); };
  // {before, x0, x1, x2}: the ids before the first four.
  const __m256i first_before = _mm256_blend_epi32(_mm256_permute4x64_epi64(load(0), 0x90),
                                                  _mm256_set1_epi64x(static_cast<long long>(before)), 0x03);
  for (std::size_t k = 0; k < kBlock; k += 8) {
    const __m256i g0 = _mm256_sub_epi64(_mm256_sub_epi64(load(k), k == 0 ? first_before : load(k - 1)), ones);
    const __m256i g1 = _mm256_sub_epi64(_mm256_sub_epi64(load(k + 4), load(k + 3)), ones);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(r + k), g0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(r + k + 4), g1);
    any[0] = _mm256_or_si256(any[0], g0);
    any[1] = _mm256_or_si256(any[1], g1);
    sum[0] = _mm256_add_epi64(sum[0], g0);
    sum[1] = _mm256_add_epi64(sum[1], g1);
  }
  const __m256i a4 = _mm256_or_si256(any[0], any[1]);
  const __m256i t4 = _mm256_add_epi64(sum[0], sum[1]);
  const __m128i a = _mm_or_si128(_mm256_castsi256_si128(a4), _mm256_extracti128_si256(a4, 1));
  const __m128i t = _mm_add_epi64(_mm256_castsi256_si128(t4), _mm256_extracti128_si256(t4, 1));
  return {static_cast<std::uint64_t>(_mm_cvtsi128_si64(a) | _mm_extract_epi64(a, 1)),
          // Unsigned, so that the sum wraps: added as long long, a hostile set overflowed (UB).
          static_cast<std::uint64_t>(_mm_cvtsi128_si64(t)) + static_cast<std::uint64_t>(_mm_extract_epi64(t, 1))};
#else
  const Lanes ones = {1, 1};
  Lanes any[2] = {{0, 0}, {0, 0}};
  Lanes sum[2] = {{0, 0}, {0, 0}};
  for (std::size_t k = 0; k < kBlock; k += 4) {
    const Lanes g0 = load_lanes(x + k) - (k == 0 ? Lanes{before, x[0]} : load_lanes(x + k - 1)) - ones;
    const Lanes g1 = load_lanes(x + k + 2) - load_lanes(x + k + 1) - ones;
    store_lanes(r + k, g0);
    store_lanes(r + k + 2, g1);
    any[0] |= g0;
    any[1] |= g1;
    sum[0] += g0;
    sum[1] += g1;
  }
  const Lanes a = any[0] | any[1];
  const Lanes t = sum[0] + sum[1];
  return {a[0] | a[1], t[0] + t[1]};
#endif
}

using PackKernel = void (*)(const std::uint64_t*, std::uint64_t, std::uint8_t*);
using UnpackKernel = void (*)(const std::uint8_t*, std::uint64_t, std::uint64_t*);
using GapUnpackKernel = std::uint64_t (*)(const std::uint8_t*, std::uint64_t, std::uint64_t, std::uint64_t*);

template <Source S, unsigned... B>
constexpr std::array<PackKernel, 65> make_packers(std::integer_sequence<unsigned, B...>) {
  return {nullptr, &pack_block<B + 1, S>...};
}
template <unsigned... B>
constexpr std::array<UnpackKernel, 65> make_unpackers(std::integer_sequence<unsigned, B...>) {
  return {&unpack_block<B>...};
}
template <bool kInPairs, unsigned... B>
constexpr std::array<GapUnpackKernel, 65> make_gap_unpackers(std::integer_sequence<unsigned, B...>) {
  if constexpr (kInPairs) {
    return {&unpack_gap_block_in_pairs<B>...};
  } else {
    return {&unpack_gap_block<B>...};
  }
}
inline constexpr std::array<PackKernel, 65> kWidePackers =
    make_packers<Source::kWideValues>(std::make_integer_sequence<unsigned, 64>{});
inline constexpr std::array<PackKernel, 65> kPackers =
    make_packers<Source::kValues>(std::make_integer_sequence<unsigned, 64>{});
inline constexpr std::array<PackKernel, 65> kLowBitPackers =
    make_packers<Source::kLowBits>(std::make_integer_sequence<unsigned, 64>{});
inline constexpr std::array<PackKernel, 65> kResidualPackers =
    make_packers<Source::kResiduals>(std::make_integer_sequence<unsigned, 64>{});
inline constexpr std::array<UnpackKernel, 65> kUnpackers = make_unpackers(std::make_integer_sequence<unsigned, 65>{});
inline constexpr std::array<GapUnpackKernel, 65> kGapUnpackers =
    make_gap_unpackers<false>(std::make_integer_sequence<unsigned, 65>{});
#if defined(ZBFS_WIDE_GAP_KERNEL)
using ChecksummedPackKernel = std::uint32_t (*)(const std::uint64_t*, std::uint64_t, std::uint8_t*, std::uint32_t);
template <unsigned... B>
constexpr std::array<ChecksummedPackKernel, 65> make_checksummed_residual_packers(
    std::integer_sequence<unsigned, B...>) {
  return {nullptr, &pack_block_checksummed<B + 1, Source::kResiduals>...};
}
inline constexpr std::array<ChecksummedPackKernel, 65> kChecksummedResidualPackers =
    make_checksummed_residual_packers(std::make_integer_sequence<unsigned, 64>{});

using ChecksummedGapUnpackKernel = GapBlockEnd (*)(const std::uint8_t*, std::uint64_t, std::uint64_t, std::uint64_t*,
                                                   std::uint32_t);
template <unsigned... B>
constexpr std::array<ChecksummedGapUnpackKernel, 65> make_checksummed_gap_unpackers(
    std::integer_sequence<unsigned, B...>) {
  return {&unpack_gap_block_checksummed<B>...};
}
inline constexpr std::array<ChecksummedGapUnpackKernel, 65> kChecksummedGapUnpackers =
    make_checksummed_gap_unpackers(std::make_integer_sequence<unsigned, 65>{});
#endif
// The portable kernels, which tests compare with those in use.
inline constexpr std::array<GapUnpackKernel, 65> kGapUnpackersInPairs =
    make_gap_unpackers<true>(std::make_integer_sequence<unsigned, 65>{});

}  // namespace wide_kernels or portable_kernels
}  // namespace zbfs::codec_detail
