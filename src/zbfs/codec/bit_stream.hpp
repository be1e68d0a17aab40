// Partial blocks' bit streams, beside the block kernels of bit_packing.hpp (whose value
// kernels they reuse with one 64-bit lane). Internal to the codec folder.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "zbfs/codec/bit_packing.hpp"

namespace zbfs::codec_detail {
// Named with the target, as bit_packing.hpp's kernels are.
#if defined(ZBFS_WIDE_GAP_KERNEL)
inline namespace wide_kernels {
#else
inline namespace portable_kernels {
#endif

inline std::size_t packed_bytes(std::size_t n, unsigned b) { return (n * b + 7) / 8; }

// Partial blocks (fewer than 128 values) are a plain little-endian bit stream. Up to 56
// bits wide they take kernels generated per width, like the blocks': eight values of B
// bits fill exactly B bytes, so within each group of eight every offset and shift is a
// constant, and a group does not wait for the one before it. The few values after the
// last group start on a byte boundary and go one at a time. The packer works in a padded
// copy, which absorbs the 64-bit stores that pass the stream's end; the unpacker reads in
// place, and its loads that would pass the end read a padded copy of the last 8 bytes.
inline constexpr unsigned kWidestStreamKernel = 56;
inline constexpr std::size_t kStreamGroup = 8;
using PaddedTail = std::array<std::uint8_t, (kBlock - 1) * kWidestStreamKernel / 8 + 16>;

// n values minus the reference, masked to b bits (b <= 56), one at a time from a byte
// boundary, into `out` with 8 bytes of room after packed_bytes(n, b).
inline void pack_stream_values(const std::uint64_t* v, std::size_t n, unsigned b, std::uint64_t reference,
                               std::uint8_t* out) {
  // Fewer than 8 bits wait in the accumulator, so one more value (b <= 56) still fits in
  // it, and each 64-bit store's whole bytes are final.
  const std::uint64_t mask = mask_of(b);
  std::uint64_t acc = 0;
  unsigned filled = 0;
  for (std::size_t k = 0; k < n; ++k) {
    acc |= ((v[k] - reference) & mask) << filled;
    filled += b;
    std::memcpy(out, &acc, 8);
    const unsigned whole = filled / 8;
    out += whole;
    acc >>= 8 * whole;
    filled -= 8 * whole;
  }
}

template <unsigned B, unsigned... J>
inline __attribute__((always_inline)) void pack_stream_group(const std::uint64_t* in, std::uint64_t reference,
                                                             std::uint8_t* out, std::integer_sequence<unsigned, J...>) {
  std::uint64_t word = 0;
  (pack_one<B, Source::kWideValues, J, std::uint64_t>(in, reference, word, out), ...);
  // The last, partial word (its bits past the group are zeros the next group overwrites).
  if constexpr (kStreamGroup * B % 64 != 0) store_lanes(out + kStreamGroup * B / 64 * 8, word);
}

template <unsigned B>
void pack_stream_kernel(const std::uint64_t* v, std::size_t n, std::uint64_t reference, std::uint8_t* out) {
  PaddedTail padded;
  const std::size_t groups = n / kStreamGroup;
  for (std::size_t g = 0; g < groups; ++g) {
    pack_stream_group<B>(v + g * kStreamGroup, reference, padded.data() + g * B,
                         std::make_integer_sequence<unsigned, kStreamGroup>{});
  }
  pack_stream_values(v + groups * kStreamGroup, n % kStreamGroup, B, reference, padded.data() + groups * B);
  std::memcpy(out, padded.data(), packed_bytes(n, B));
}

// Value J of a group of B-bit values, with one 64-bit load at its first byte (B + 7 bits
// fit).
template <unsigned B, unsigned J>
inline __attribute__((always_inline)) std::uint64_t stream_value(const std::uint8_t* group) {
  constexpr unsigned bit = J * B;
  return (load_lanes<std::uint64_t>(group + bit / 8) >> (bit % 8)) & kMask<B>;
}

// What an unpacked value becomes: plus the reference, or a sorted set's next id (the
// running id plus the value plus the step).
struct PlusReference {
  std::uint64_t reference;
  std::uint64_t* out;
  __attribute__((always_inline)) void operator()(std::uint64_t value) { *out++ = value + reference; }
};
struct RunningId {
  std::uint64_t step;
  std::uint64_t last;
  std::uint64_t* out;
  __attribute__((always_inline)) void operator()(std::uint64_t value) {
    last += value + step;
    *out++ = last;
  }
};

template <unsigned B, typename Emit, unsigned... J>
inline __attribute__((always_inline)) void unpack_stream_group(const std::uint8_t* group, Emit& emit,
                                                               std::integer_sequence<unsigned, J...>) {
  (emit(stream_value<B, J>(group)), ...);
}

// Emits the n values (n < 128) of the B-bit stream at `in`, B <= 56. Each value takes one
// 64-bit load at its first byte, in place while the load stays inside the stream; the
// values that start in the stream's last 8 bytes read a zero-padded copy of them.
template <unsigned B, typename Emit>
inline __attribute__((always_inline)) void unpack_stream_into(const std::uint8_t* in, std::size_t n, Emit& emit) {
  const std::size_t bytes = packed_bytes(n, B);
  const std::size_t groups = n / kStreamGroup;
  std::size_t g = 0;
  // A group's last load ends at byte (7 B) / 8 + 8 of it.
  for (; g < groups && g * B + 7 * B / 8 + 8 <= bytes; ++g) {
    unpack_stream_group<B>(in + g * B, emit, std::make_integer_sequence<unsigned, kStreamGroup>{});
  }
  const std::size_t last_from = bytes > 8 ? bytes - 8 : 0;
  std::array<std::uint8_t, 16> last{};
  std::memcpy(last.data(), in + last_from, bytes - last_from);
  for (std::size_t k = g * kStreamGroup, bit = g * B * 8; k < n; ++k, bit += B) {
    const std::size_t at = bit / 8;
    const std::uint8_t* word = at + 8 <= bytes ? in + at : last.data() + (at - last_from);
    emit((load_lanes<std::uint64_t>(word) >> (bit % 8)) & kMask<B>);
  }
}

template <unsigned B>
void unpack_stream_kernel(const std::uint8_t* in, std::size_t n, std::uint64_t reference, std::uint64_t* v) {
  PlusReference emit{reference, v};
  unpack_stream_into<B>(in, n, emit);
}

// A sorted set's partial block fused with its prefix sum, as unpack_gap_block: x[k] =
// x[k-1] + value + step from x[-1] = last; returns the last id.
template <unsigned B>
std::uint64_t unpack_gap_stream_kernel(const std::uint8_t* in, std::size_t n, std::uint64_t step, std::uint64_t last,
                                       std::uint64_t* out) {
  RunningId emit{step, last, out};
  unpack_stream_into<B>(in, n, emit);
  return emit.last;
}

using StreamPackKernel = void (*)(const std::uint64_t*, std::size_t, std::uint64_t, std::uint8_t*);
using StreamUnpackKernel = void (*)(const std::uint8_t*, std::size_t, std::uint64_t, std::uint64_t*);
using GapStreamUnpackKernel = std::uint64_t (*)(const std::uint8_t*, std::size_t, std::uint64_t, std::uint64_t,
                                                std::uint64_t*);

// Indexed by width, 1 to 56 (entry 0 unused).
template <unsigned... B>
constexpr std::array<StreamPackKernel, kWidestStreamKernel + 1> make_stream_packers(
    std::integer_sequence<unsigned, B...>) {
  return {nullptr, &pack_stream_kernel<B + 1>...};
}
template <unsigned... B>
constexpr std::array<StreamUnpackKernel, kWidestStreamKernel + 1> make_stream_unpackers(
    std::integer_sequence<unsigned, B...>) {
  return {nullptr, &unpack_stream_kernel<B + 1>...};
}
template <unsigned... B>
constexpr std::array<GapStreamUnpackKernel, kWidestStreamKernel + 1> make_gap_stream_unpackers(
    std::integer_sequence<unsigned, B...>) {
  return {nullptr, &unpack_gap_stream_kernel<B + 1>...};
}
inline constexpr auto kStreamPackers = make_stream_packers(std::make_integer_sequence<unsigned, kWidestStreamKernel>{});
inline constexpr auto kStreamUnpackers =
    make_stream_unpackers(std::make_integer_sequence<unsigned, kWidestStreamKernel>{});
inline constexpr auto kGapStreamUnpackers =
    make_gap_stream_unpackers(std::make_integer_sequence<unsigned, kWidestStreamKernel>{});

// n values minus the reference, masked to b bits, as a little-endian bit stream of
// packed_bytes(n, b) bytes.
inline void pack_stream(const std::uint64_t* v, std::size_t n, unsigned b, std::uint64_t reference, std::uint8_t* out) {
  if (b >= 1 && b <= kWidestStreamKernel && n < kBlock) {
    kStreamPackers[b](v, n, reference, out);
    return;
  }
  const std::uint64_t mask = mask_of(b);
  unsigned __int128 acc = 0;
  unsigned filled = 0;
  for (std::size_t k = 0; k < n; ++k) {
    acc |= static_cast<unsigned __int128>((v[k] - reference) & mask) << filled;
    filled += b;
    while (filled >= 8) {
      *out++ = static_cast<std::uint8_t>(acc);
      acc >>= 8;
      filled -= 8;
    }
  }
  if (filled > 0) *out = static_cast<std::uint8_t>(acc);
}

inline void unpack_stream(const std::uint8_t* in, std::size_t n, unsigned b, std::uint64_t reference,
                          std::uint64_t* v) {
  if (b >= 1 && b <= kWidestStreamKernel && n < kBlock) {
    kStreamUnpackers[b](in, n, reference, v);
    return;
  }
  const std::uint64_t mask = mask_of(b);
  unsigned __int128 acc = 0;
  unsigned filled = 0;
  for (std::size_t k = 0; k < n; ++k) {
    while (filled < b) {
      acc |= static_cast<unsigned __int128>(*in++) << filled;
      filled += 8;
    }
    v[k] = (static_cast<std::uint64_t>(acc) & mask) + reference;
    acc >>= b;
    filled -= b;
  }
}

}  // namespace wide_kernels or portable_kernels
}  // namespace zbfs::codec_detail
