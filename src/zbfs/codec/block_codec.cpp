// bitpack and pfor: frame-of-reference bit packing of residuals in blocks of 128.
//
// A full block holds 128 residuals minus the block's minimum (its reference), each in b
// bits. They are packed in two interleaved lanes (value i in lane i % 2, each lane a
// stream of 64-bit words: 64 values of b bits fill exactly b words, whatever b), so that
// one vector instruction packs or unpacks a value of each lane; the kernels are
// generated per bit width with every shift known at compile time. The last, partial block is packed as a plain bit
// stream instead, so a short message costs its bits and not a whole block.
//
//   bitpack block: u8 b | varint reference | packed values
//   pfor block:    u8 b | u8 exceptions e | varint reference | packed low b bits
//                  | e positions (u8, increasing) | e varint high parts (value >> b)
//
// pfor picks, per block, the width that minimises the block's size when the values
// wider than it are stored as exceptions.
#include <array>
#include <cstring>
#include <utility>

#include "zbfs/codec/payload_codecs.hpp"
#include "zbfs/codec/residuals.hpp"

namespace zbfs::codec_detail {
namespace {

constexpr std::size_t kBlock = 128;
constexpr std::size_t kLanes = 2;  // 64 values of b bits fill exactly b words per lane

// Both lanes at once in one 128-bit vector (GCC/Clang vector extensions: SSE2 on x86,
// NEON on ARM); the auto-vectoriser does not find this on its own.
using Lanes = std::uint64_t __attribute__((vector_size(16)));

inline __attribute__((always_inline)) Lanes load_lanes(const std::uint64_t* at) {
  Lanes v;
  std::memcpy(&v, at, sizeof v);
  return v;
}
inline __attribute__((always_inline)) void store_lanes(std::uint64_t* at, Lanes v) { std::memcpy(at, &v, sizeof v); }

// Value J of each lane: (in - reference) masked to B bits, into its lane's words.
template <unsigned B, unsigned J>
inline __attribute__((always_inline)) void pack_one(const std::uint64_t* __restrict__ in, Lanes reference,
                                                    std::uint64_t* __restrict__ out) {
  constexpr unsigned bit = J * B;
  constexpr unsigned word = bit / 64;
  constexpr unsigned shift = bit % 64;
  constexpr std::uint64_t mask = B == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << B) - 1;
  const Lanes v = (load_lanes(in + J * kLanes) - reference) & mask;
  if constexpr (shift == 0) {
    store_lanes(out + word * kLanes, v);
  } else {
    store_lanes(out + word * kLanes, load_lanes(out + word * kLanes) | (v << shift));
  }
  if constexpr (shift + B > 64) store_lanes(out + (word + 1) * kLanes, v >> (64 - shift));
}

template <unsigned B, unsigned J>
inline __attribute__((always_inline)) void unpack_one(const std::uint64_t* __restrict__ in, Lanes reference,
                                                      std::uint64_t* __restrict__ out) {
  constexpr unsigned bit = J * B;
  constexpr unsigned word = bit / 64;
  constexpr unsigned shift = bit % 64;
  constexpr std::uint64_t mask = B == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << B) - 1;
  Lanes v = load_lanes(in + word * kLanes) >> shift;
  if constexpr (shift + B > 64) v |= load_lanes(in + (word + 1) * kLanes) << (64 - shift);
  store_lanes(out + J * kLanes, (v & mask) + reference);
}

// 128 values, minus the reference, of B bits (B > 0) into 2B words.
template <unsigned B>
void pack_block(const std::uint64_t* in, std::uint64_t reference, std::uint64_t* out) {
  const Lanes ref = {reference, reference};
  [&]<unsigned... J>(std::integer_sequence<unsigned, J...>) { (pack_one<B, J>(in, ref, out), ...); }
  (std::make_integer_sequence<unsigned, kBlock / kLanes>{});
}

// B = 0 too: every value is the reference.
template <unsigned B>
void unpack_block(const std::uint64_t* in, std::uint64_t reference, std::uint64_t* out) {
  if constexpr (B == 0) {
    for (std::size_t k = 0; k < kBlock; ++k) out[k] = reference;
  } else {
    const Lanes ref = {reference, reference};
    [&]<unsigned... J>(std::integer_sequence<unsigned, J...>) { (unpack_one<B, J>(in, ref, out), ...); }
    (std::make_integer_sequence<unsigned, kBlock / kLanes>{});
  }
}

using PackKernel = void (*)(const std::uint64_t*, std::uint64_t, std::uint64_t*);

template <unsigned... B>
constexpr std::array<PackKernel, 65> make_packers(std::integer_sequence<unsigned, B...>) {
  return {nullptr, &pack_block<B + 1>...};
}
template <unsigned... B>
constexpr std::array<PackKernel, 65> make_unpackers(std::integer_sequence<unsigned, B...>) {
  return {&unpack_block<B>...};
}
constexpr std::array<PackKernel, 65> kPackers = make_packers(std::make_integer_sequence<unsigned, 64>{});
constexpr std::array<PackKernel, 65> kUnpackers = make_unpackers(std::make_integer_sequence<unsigned, 65>{});

std::size_t packed_bytes(std::size_t n, unsigned b) { return (n * b + 7) / 8; }

// n < 128 values minus the reference, masked to b bits, as a little-endian bit stream of
// packed_bytes(n, b) bytes.
void pack_stream(const std::uint64_t* v, std::size_t n, unsigned b, std::uint64_t reference, std::uint8_t* out) {
  const std::uint64_t mask = b == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << b) - 1;
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

void unpack_stream(const std::uint8_t* in, std::size_t n, unsigned b, std::uint64_t reference, std::uint64_t* v) {
  const std::uint64_t mask = b == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << b) - 1;
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

struct Range {
  std::uint64_t lowest;
  std::uint64_t highest;
};

// Sorted sets' residuals are gaps: their OR bounds them, and a reference would rarely
// pay for the unsigned min/max that SSE/AVX2 lack. Sequences need a true frame of
// reference. Four accumulators each break the loop-carried dependency.
Range range_of(const std::uint64_t* r, std::size_t n, IdOrder order) {
  std::uint64_t low[4] = {~std::uint64_t{0}, ~std::uint64_t{0}, ~std::uint64_t{0}, ~std::uint64_t{0}};
  std::uint64_t high[4] = {0, 0, 0, 0};
  std::size_t k = 0;
  if (order == IdOrder::kSortedSet) {
    for (; k + 4 <= n; k += 4) {
      for (std::size_t j = 0; j < 4; ++j) high[j] |= r[k + j];
    }
    for (; k < n; ++k) high[0] |= r[k];
    return {0, high[0] | high[1] | high[2] | high[3]};
  }
  for (; k + 4 <= n; k += 4) {
    for (std::size_t j = 0; j < 4; ++j) {
      low[j] = r[k + j] < low[j] ? r[k + j] : low[j];
      high[j] = r[k + j] > high[j] ? r[k + j] : high[j];
    }
  }
  for (; k < n; ++k) {
    low[0] = r[k] < low[0] ? r[k] : low[0];
    high[0] = r[k] > high[0] ? r[k] : high[0];
  }
  return {std::min(std::min(low[0], low[1]), std::min(low[2], low[3])),
          std::max(std::max(high[0], high[1]), std::max(high[2], high[3]))};
}

// Bytes of a varint of a value `bits` wide.
std::size_t varint_bytes_for_width(unsigned bits) { return bits == 0 ? 1 : (bits + 6) / 7; }

// pfor's width: the b minimising packed bits plus exceptions (a position byte and a
// varint of the high part each).
unsigned choose_exception_width(const std::uint64_t* r, std::size_t n, std::uint64_t reference, unsigned widest) {
  std::array<std::uint32_t, 65> at_width{};
  for (std::size_t k = 0; k < n; ++k) ++at_width[bit_width_of(r[k] - reference)];
  unsigned best = widest;
  std::size_t best_bits = n * widest;
  std::size_t wider = 0;  // values wider than b
  for (unsigned b = widest; b-- > 0;) {
    wider += at_width[b + 1];
    const std::size_t bits = n * b + wider * 8 * (1 + varint_bytes_for_width(widest - b));
    if (bits < best_bits) {
      best_bits = bits;
      best = b;
    }
  }
  return best;
}

// Appends one block of n residuals.
void encode_block(const std::uint64_t* r, std::size_t n, IdOrder order, bool with_exceptions, ByteBuffer& out) {
  const Range range = range_of(r, n, order);
  const std::uint64_t reference = range.lowest;
  const unsigned widest = bit_width_of(range.highest - reference);
  const unsigned b = with_exceptions ? choose_exception_width(r, n, reference, widest) : widest;
  out.put_u8(static_cast<std::uint8_t>(b));
  std::size_t exceptions_at = 0;
  if (with_exceptions) {
    exceptions_at = out.size();
    out.put_u8(0);
  }
  out.put_varint(reference);
  if (b > 0) {
    if (n == kBlock) {
      alignas(64) std::array<std::uint64_t, 2 * 64> packed;
      kPackers[b](r, reference, packed.data());
      out.append(packed.data(), 16 * std::size_t{b});
    } else {
      pack_stream(r, n, b, reference, out.extend(packed_bytes(n, b)));
    }
  }
  if (b < widest) {
    std::size_t exceptions = 0;
    std::array<std::uint64_t, kBlock> highs;
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t high = (r[k] - reference) >> b;
      if (high != 0) {
        out.put_u8(static_cast<std::uint8_t>(k));
        highs[exceptions++] = high;
      }
    }
    for (std::size_t e = 0; e < exceptions; ++e) out.put_varint(highs[e]);
    out.data()[exceptions_at] = static_cast<std::uint8_t>(exceptions);
  }
}

// Reads one block of n residuals into r; returns a bound on their bit width.
unsigned decode_block(ByteReader& reader, std::size_t n, bool with_exceptions, std::uint64_t* r) {
  const unsigned b = reader.u8("block width");
  if (b > 64) throw DecodeError("block width " + std::to_string(b) + " above 64");
  const std::size_t exceptions = with_exceptions ? reader.u8("exception count") : 0;
  if (exceptions > n) throw DecodeError("more exceptions than values in a block");
  const std::uint64_t reference = reader.varint("block reference");
  // Packed values plus the reference can pass 2^64 only near the top of the range; then
  // each is checked (a wrapped sum is below the reference). Exceptions are checked below.
  const std::uint64_t room = ~std::uint64_t{0} - reference;
  const bool may_wrap = b == 64 ? reference != 0 : (std::uint64_t{1} << b) - 1 > room;
  if (n == kBlock) {
    alignas(64) std::array<std::uint64_t, 2 * 64> packed;
    if (b > 0) std::memcpy(packed.data(), reader.take(16 * std::size_t{b}, "packed block").data(), 16 * std::size_t{b});
    kUnpackers[b](packed.data(), reference, r);
  } else if (b == 0) {
    std::fill(r, r + n, reference);
  } else {
    unpack_stream(reader.take(packed_bytes(n, b), "packed tail").data(), n, b, reference, r);
  }
  if (may_wrap) {
    for (std::size_t k = 0; k < n; ++k) {
      if (r[k] < reference) throw DecodeError("block reference overflows 64 bits");
    }
  }
  if (exceptions > 0) {
    if (b == 64) throw DecodeError("exceptions in a 64-bit block");
    const std::span<const std::uint8_t> positions = reader.take(exceptions, "exception positions");
    for (std::size_t e = 0; e < exceptions; ++e) {
      const std::size_t at = positions[e];
      if (at >= n || (e > 0 && at <= positions[e - 1])) throw DecodeError("exception position out of order");
      const std::uint64_t high = reader.varint("exception value");
      if (high == 0 || bit_width_of(high) > 64 - b) throw DecodeError("exception value out of range");
      const std::uint64_t added = high << b;
      if (added > ~std::uint64_t{0} - r[at]) throw DecodeError("exception overflows 64 bits");
      r[at] += added;
    }
    return 64;
  }
  return may_wrap ? 64 : bit_width_of(reference + (b == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << b) - 1));
}

}  // namespace

void encode_blocks(const PayloadInput& in, bool with_exceptions, ByteBuffer& out) {
  alignas(64) std::array<std::uint64_t, kBlock> r;
  const std::size_t n = in.ids.size();
  // Worst case per block: header, reference and 64-bit values (plus exceptions' bytes).
  out.reserve(out.size() + n * 9 + 32);
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t count = std::min(kBlock, n - begin);
    compute_residuals(in.ids.data(), begin, count, in.order, in.base, r.data());
    encode_block(r.data(), count, in.order, with_exceptions, out);
  }
}

void decode_blocks(std::span<const std::uint8_t> payload, bool with_exceptions, const PayloadOutput& out) {
  ByteReader reader(payload);
  IdRebuilder rebuild(out.order, out.base);
  alignas(64) std::array<std::uint64_t, kBlock> r;
  for (std::uint64_t begin = 0; begin < out.count; begin += kBlock) {
    const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, out.count - begin));
    const unsigned widest = decode_block(reader, count, with_exceptions, r.data());
    rebuild.apply(r.data(), count, out.ids + begin, widest);
  }
  if (rebuild.failed()) throw DecodeError("ids overflow 64 bits");
  if (reader.remaining() != 0) throw DecodeError("bytes left after the last block");
}

}  // namespace zbfs::codec_detail
