// bitpack and pfor: frame-of-reference bit packing of residuals in blocks of 128.
//
// A full block holds 128 residuals minus the block's minimum (its reference), each in b
// bits. They are packed in two interleaved lanes (value i in lane i % 2, each lane a
// stream of 64-bit words: 64 values of b bits fill exactly b words, whatever b), so that
// one vector instruction packs or unpacks a value of each lane; the kernels are
// generated per bit width with every shift known at compile time. The last, partial
// block is packed as a plain bit stream instead, so a short message costs its bits and
// not a whole block.
//
// Full bitpack blocks take a fast path at both ends: a set's gaps are computed in the
// pass that finds their width and packed straight into the send buffer, and on receipt
// the unpack kernel does the prefix sum too and writes the ids in place (pfor blocks
// without exceptions as well). Partial blocks, the first block of a set and pfor's
// encoder go through a residual buffer.
//
//   bitpack block: u8 b | varint reference | packed values
//   pfor block:    u8 b | u8 exceptions e | varint reference | packed low b bits
//                  | e positions (u8, increasing) | e varint high parts (value >> b)
//
// pfor picks, per block, the width that minimises the block's size when the values
// wider than it are stored as exceptions.
#include <array>
#include <bit>
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

// Packed words are addressed as bytes: the kernels read from received buffers and write
// into send buffers in place, at any alignment.
inline __attribute__((always_inline)) Lanes load_lanes(const void* at) {
  Lanes v;
  std::memcpy(&v, at, sizeof v);
  return v;
}
inline __attribute__((always_inline)) void store_lanes(void* at, Lanes v) { std::memcpy(at, &v, sizeof v); }

constexpr std::uint64_t mask_of(unsigned b) { return b == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << b) - 1; }
template <unsigned B>
constexpr std::uint64_t kMask = mask_of(B);

// What a kernel packs: values minus the reference, masked to B bits when some may be
// wider (pfor's exceptions); values minus the reference that fit; or residuals that fit
// as they are (a sorted set's gaps, reference 0).
enum class Source { kWideValues, kValues, kResiduals };

// Value J of each lane into its lane's current word (`word`, in a register), which is
// stored once it is full.
template <unsigned B, Source S, unsigned J>
inline __attribute__((always_inline)) void pack_one(const std::uint64_t* __restrict__ in, Lanes offset, Lanes& word,
                                                    std::uint8_t* __restrict__ out) {
  constexpr unsigned bit = J * B;
  constexpr unsigned index = bit / 64;
  constexpr unsigned shift = bit % 64;
  Lanes v = load_lanes(in + J * kLanes);
  if constexpr (S != Source::kResiduals) v -= offset;
  if constexpr (S == Source::kWideValues) v &= kMask<B>;
  if constexpr (shift == 0) {
    word = v;
  } else {
    word |= v << shift;
  }
  if constexpr (shift + B >= 64) {
    store_lanes(out + index * kLanes * 8, word);
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

// One pair of a sorted set's block: an in-register scan of the pair, then the running
// total (the last id so far, in both lanes), whose only dependency from one pair to the
// next is one vector add.
template <unsigned B, unsigned J>
inline __attribute__((always_inline)) void unpack_gap_pair(const std::uint8_t* in, Lanes pair_steps, Lanes& total,
                                                           std::uint64_t* out) {
  Lanes t = unpack_one<B, J>(in);
  t += __builtin_shufflevector(Lanes{0, 0}, t, 0, 2) + pair_steps;  // {v0 + step, v0 + v1 + 2 step}
  store_lanes(out + J * kLanes, t + total);
  total += __builtin_shufflevector(t, t, 1, 1);
}

template <unsigned B, unsigned... J>
inline __attribute__((always_inline)) std::uint64_t unpack_gap_all(const std::uint8_t* in, Lanes pair_steps,
                                                                   Lanes total, std::uint64_t* out,
                                                                   std::integer_sequence<unsigned, J...>) {
  (unpack_gap_pair<B, J>(in, pair_steps, total, out), ...);
  return total[0];
}

// A sorted set's block fused with its prefix sum: x[k] = x[k-1] + value + step, from
// x[-1] = last, two ids at a time in 128-bit registers (cross-half shuffles of 256-bit
// ones cost several micro-ops on some x86 cores). Returns the block's last id (the
// caller checks it for wrap-around).
template <unsigned B>
std::uint64_t unpack_gap_block(const std::uint8_t* in, std::uint64_t step, std::uint64_t last, std::uint64_t* out) {
  return unpack_gap_all<B>(in, Lanes{step, 2 * step}, Lanes{last, last}, out,
                           std::make_integer_sequence<unsigned, kBlock / kLanes>{});
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
template <unsigned... B>
constexpr std::array<GapUnpackKernel, 65> make_gap_unpackers(std::integer_sequence<unsigned, B...>) {
  return {&unpack_gap_block<B>...};
}
constexpr std::array<PackKernel, 65> kWidePackers =
    make_packers<Source::kWideValues>(std::make_integer_sequence<unsigned, 64>{});
constexpr std::array<PackKernel, 65> kPackers =
    make_packers<Source::kValues>(std::make_integer_sequence<unsigned, 64>{});
constexpr std::array<PackKernel, 65> kResidualPackers =
    make_packers<Source::kResiduals>(std::make_integer_sequence<unsigned, 64>{});
constexpr std::array<UnpackKernel, 65> kUnpackers = make_unpackers(std::make_integer_sequence<unsigned, 65>{});
constexpr std::array<GapUnpackKernel, 65> kGapUnpackers =
    make_gap_unpackers(std::make_integer_sequence<unsigned, 65>{});

std::size_t packed_bytes(std::size_t n, unsigned b) { return (n * b + 7) / 8; }

// n < 128 values minus the reference, masked to b bits, as a little-endian bit stream of
// packed_bytes(n, b) bytes.
void pack_stream(const std::uint64_t* v, std::size_t n, unsigned b, std::uint64_t reference, std::uint8_t* out) {
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

void unpack_stream(const std::uint8_t* in, std::size_t n, unsigned b, std::uint64_t reference, std::uint64_t* v) {
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

// Sorted sets' residuals are gaps: their OR bounds them, and a reference would rarely
// pay for a minimum. Sequences need a true frame of reference.
IdRange range_of(const std::uint64_t* r, std::size_t n, IdOrder order) {
  if (order == IdOrder::kSequence) return range_of_ids(r, n);
  std::uint64_t high[4] = {0, 0, 0, 0};
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    for (std::size_t j = 0; j < 4; ++j) high[j] |= r[k + j];
  }
  for (; k < n; ++k) high[0] |= r[k];
  return {0, high[0] | high[1] | high[2] | high[3]};
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
  const IdRange range = range_of(r, n, order);
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
      kWidePackers[b](r, reference, out.extend(16 * std::size_t{b}));
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

// A full bitpack block straight from the ids: a sorted set's gaps in one pass that also
// finds their width (the block after the first, so that x[-1] exists), or a sequence's
// values packed against their minimum. Writes the same bytes as encode_block.
void encode_full_block(const std::uint64_t* x, IdOrder order, std::uint64_t base, ByteBuffer& out) {
  if (order == IdOrder::kSortedSet) {
    const Lanes ones = {1, 1};
    Lanes even = {0, 0};
    Lanes odd = {0, 0};
    alignas(64) std::array<std::uint64_t, kBlock> gaps;
    for (std::size_t k = 0; k < kBlock; k += 4) {
      const Lanes g0 = load_lanes(x + k) - load_lanes(x + k - 1) - ones;
      const Lanes g1 = load_lanes(x + k + 2) - load_lanes(x + k + 1) - ones;
      store_lanes(gaps.data() + k, g0);
      store_lanes(gaps.data() + k + 2, g1);
      even |= g0;
      odd |= g1;
    }
    const Lanes widest = even | odd;
    const unsigned b = bit_width_of(widest[0] | widest[1]);
    out.put_u8(static_cast<std::uint8_t>(b));
    out.put_varint(0);
    if (b > 0) kResidualPackers[b](gaps.data(), 0, out.extend(16 * std::size_t{b}));
    return;
  }
  const IdRange range = range_of_ids(x, kBlock);
  const unsigned b = bit_width_of(range.highest - range.lowest);
  out.put_u8(static_cast<std::uint8_t>(b));
  out.put_varint(range.lowest - base);
  if (b > 0) kPackers[b](x, range.lowest, out.extend(16 * std::size_t{b}));
}

struct BlockHeader {
  unsigned b;
  std::size_t exceptions;
  std::uint64_t reference;
  // Packed values plus the reference can pass 2^64 (only near the top of the range).
  bool may_wrap;
};

BlockHeader read_block_header(ByteReader& reader, std::size_t n, bool with_exceptions) {
  BlockHeader h{};
  h.b = reader.u8("block width");
  if (h.b > 64) throw DecodeError("block width " + std::to_string(h.b) + " above 64");
  h.exceptions = with_exceptions ? reader.u8("exception count") : 0;
  if (h.exceptions > n) throw DecodeError("more exceptions than values in a block");
  h.reference = reader.varint("block reference");
  h.may_wrap = mask_of(h.b) > ~std::uint64_t{0} - h.reference;
  return h;
}

// Reads the rest of a block of n residuals into r; returns a bound on their bit width.
unsigned decode_block_values(ByteReader& reader, const BlockHeader& h, std::size_t n, std::uint64_t* r) {
  const unsigned b = h.b;
  const std::uint64_t reference = h.reference;
  if (n == kBlock) {
    kUnpackers[b](reader.take(16 * std::size_t{b}, "packed block").data(), reference, r);
  } else if (b == 0) {
    std::fill(r, r + n, reference);
  } else {
    unpack_stream(reader.take(packed_bytes(n, b), "packed tail").data(), n, b, reference, r);
  }
  // A wrapped sum is below the reference. Exceptions are checked below.
  if (h.may_wrap) {
    for (std::size_t k = 0; k < n; ++k) {
      if (r[k] < reference) throw DecodeError("block reference overflows 64 bits");
    }
  }
  if (h.exceptions > 0) {
    if (b == 64) throw DecodeError("exceptions in a 64-bit block");
    const std::span<const std::uint8_t> positions = reader.take(h.exceptions, "exception positions");
    for (std::size_t e = 0; e < h.exceptions; ++e) {
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
  return h.may_wrap ? 64 : bit_width_of(reference + mask_of(b));
}

// Decodes a full block without exceptions straight into ids when no id can overflow on
// the way: a sorted set's block after the first (values below 2^55, so the block's sum
// stays below 2^62 and a wrap shows as an end below the start), or a sequence's block
// whose largest id fits. Returns false, having read nothing, when the general path must
// handle it.
bool decode_full_block(ByteReader& reader, const BlockHeader& h, IdRebuilder& rebuild, const PayloadOutput& out,
                       std::uint64_t* ids) {
  if (h.exceptions != 0) return false;
  if (out.order == IdOrder::kSortedSet) {
    constexpr unsigned kWidest = 54;  // values (packed + reference + 1) below 2^55
    if (!rebuild.started() || h.b > kWidest || h.reference >= std::uint64_t{1} << kWidest) return false;
    const std::uint8_t* packed = reader.take(16 * std::size_t{h.b}, "packed block").data();
    const std::uint64_t start = rebuild.last();
    const std::uint64_t end = kGapUnpackers[h.b](packed, h.reference + 1, start, ids);
    rebuild.continue_from(end, end < start);
    return true;
  }
  const std::uint64_t lowest = out.base + h.reference;
  if (lowest < out.base || mask_of(h.b) > ~std::uint64_t{0} - lowest) return false;
  kUnpackers[h.b](reader.take(16 * std::size_t{h.b}, "packed block").data(), lowest, ids);
  return true;
}

// Golomb-Rice: a block's residuals split at bit k, the low k bits packed as bitpack
// packs them, the high parts (r >> k) in unary. For the geometric gaps of a random set
// (what frontiers are) the best k costs within a few hundredths of a bit of the gaps'
// entropy, where bit packing pays for the block's largest gap on every value.

struct RiceChoice {
  unsigned k;
  std::uint64_t unary_bits;  // one stop bit per value plus the high parts
};

// The k minimising the block's bits, among the three around log2 of the mean residual
// (for geometric values the best k is near log2(mean * ln 2)). Never below log2(mean) - 1,
// so the high parts sum to less than 4n: the unary stream stays short whatever the data.
RiceChoice choose_rice_parameter(const std::uint64_t* r, std::size_t n) {
  // The sum in one plain pass when no value reaches 2^56 (n <= 128: no overflow), else
  // in two halves, neither of which can overflow.
  std::uint64_t sum = 0;
  std::uint64_t any = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sum += r[i];
    any |= r[i];
  }
  unsigned __int128 total = sum;
  if (bit_width_of(any) > 56) {
    std::uint64_t high = 0;
    std::uint64_t low = 0;
    for (std::size_t i = 0; i < n; ++i) {
      high += r[i] >> 32;
      low += r[i] & 0xffffffffu;
    }
    total = (static_cast<unsigned __int128>(high) << 32) + low;
  }
  const auto mean = static_cast<std::uint64_t>(total / n);  // at most the largest value
  const unsigned log_mean = mean == 0 ? 0 : bit_width_of(mean) - 1;
  // The three candidates' high parts in one pass (a shift by 64 is 0, not undefined).
  const unsigned k0 = log_mean == 0 ? 0 : log_mean - 1;
  const unsigned k1 = std::min(k0 + 1, 63u);
  const unsigned k2 = std::min(k0 + 2, 63u);
  std::uint64_t highs[3] = {0, 0, 0};
  for (std::size_t i = 0; i < n; ++i) {
    highs[0] += r[i] >> k0;
    highs[1] += r[i] >> k1;
    highs[2] += r[i] >> k2;
  }
  RiceChoice best{64, n};  // every value in its low bits: always valid, rarely best
  const unsigned ks[3] = {k0, k1, k2};
  for (int c = 0; c < 3; ++c) {
    const std::uint64_t bits = n * std::uint64_t{ks[c]} + n + highs[c];
    if (bits < best.k * std::uint64_t{n} + best.unary_bits) best = {ks[c], n + highs[c]};
  }
  return best;
}

//   rice block: u8 k | packed low k bits (as bitpack's values) | unary: per value,
//               (r >> k) zero bits then a one (the stop bit), from bit 0 of the first byte
//               up, ending with the byte of the last stop bit (zeros above it). The
//               stream's length is where its n-th stop bit is: no length field.
void encode_rice_block(const std::uint64_t* r, std::size_t n, ByteBuffer& out) {
  const RiceChoice c = choose_rice_parameter(r, n);
  const std::size_t unary_bytes = (c.unary_bits + 7) / 8;  // at least one: n > 0
  out.put_u8(static_cast<std::uint8_t>(c.k));
  if (c.k > 0) {
    if (n == kBlock) {
      kWidePackers[c.k](r, 0, out.extend(16 * std::size_t{c.k}));
    } else {
      pack_stream(r, n, c.k, 0, out.extend(packed_bytes(n, c.k)));
    }
  }
  // Whole words into a zeroed, rounded-up area (the padding is given back after), without
  // branches: the current word is stored after every value and starts again from zero
  // when a stop bit lands in a later word (words skipped by a long run stay zero).
  const std::size_t start = out.size();
  const std::size_t words = (unary_bytes + 7) / 8;
  std::uint8_t* unary = out.extend(words * 8);
  std::memset(unary, 0, words * 8);
  if (c.k < 64) {
    std::uint64_t word = 0;
    std::uint64_t word_index = 0;
    std::uint64_t stop = ~std::uint64_t{0};  // the last stop bit, one before bit 0
    for (std::size_t i = 0; i < n; ++i) {
      stop += (r[i] >> c.k) + 1;
      const std::uint64_t at = stop / 64;
      word = at == word_index ? word : 0;
      word_index = at;
      word |= std::uint64_t{1} << (stop % 64);
      std::memcpy(unary + 8 * at, &word, 8);
    }
  } else {
    std::memset(unary, 0xff, n / 8);  // every high part 0: n stop bits in a row
    if (n % 8 != 0) unary[n / 8] = static_cast<std::uint8_t>((1u << (n % 8)) - 1);
  }
  out.shrink_to(start + unary_bytes);
}

// Reads n high parts from the unary stream at the start of `unary` into h. Returns the
// bytes the stream took (up to the byte with the n-th stop bit, whose higher bits must
// be zero) and sets `widest` to the widest residual's width. (High parts go to their
// own array: adding them into the unpacked values in place would load 8 bytes from the
// middle of 16-byte vector stores, which stalls store forwarding.)
std::size_t read_rice_high_parts(std::span<const std::uint8_t> unary, std::size_t n, unsigned k, std::uint64_t* h,
                                 unsigned& widest) {
  std::size_t produced = 0;
  std::uint64_t next = 0;       // the bit after the last stop bit
  std::uint64_t high_bits = 0;  // OR of the high parts
  for (std::size_t at = 0; produced < n; at += 8) {
    if (at >= unary.size()) throw DecodeError("rice block: fewer stop bits than values");
    std::uint64_t word = 0;
    std::memcpy(&word, unary.data() + at, std::min<std::size_t>(8, unary.size() - at));
    for (; word != 0 && produced < n; word &= word - 1) {
      const std::uint64_t stop = at * 8 + static_cast<unsigned>(std::countr_zero(word));
      const std::uint64_t high = stop - next;
      high_bits |= high;
      h[produced++] = high;
      next = stop + 1;
    }
  }
  const std::size_t used = (next + 7) / 8;
  const unsigned tail = next % 8;
  if (tail != 0 && (unary[used - 1] >> tail) != 0) throw DecodeError("rice block: bits after the last stop bit");
  const unsigned width = bit_width_of(high_bits);
  if (width > 0 && width + k > 64) throw DecodeError("rice block: value above 64 bits");
  widest = width > 0 ? width + k : k;
  return used;
}

// Reads one block of n residuals into r; returns a bound on their bit width.
unsigned decode_rice_block(ByteReader& reader, std::size_t n, std::uint64_t* r) {
  const unsigned k = reader.u8("rice parameter");
  if (k > 64) throw DecodeError("rice parameter " + std::to_string(k) + " above 64");
  if (k == 0) {
    std::fill(r, r + n, 0);
  } else if (n == kBlock) {
    kUnpackers[k](reader.take(16 * std::size_t{k}, "rice low bits").data(), 0, r);
  } else {
    unpack_stream(reader.take(packed_bytes(n, k), "rice low bits").data(), n, k, 0, r);
  }
  alignas(64) std::array<std::uint64_t, kBlock> h;
  unsigned widest = 64;
  const std::size_t used = read_rice_high_parts({reader.here(), reader.remaining()}, n, k, h.data(), widest);
  reader.skip(used, "rice unary bits");
  if (k < 64) {  // with k = 64 every high part is 0 (checked)
    for (std::size_t i = 0; i < n; ++i) r[i] += h[i] << k;
  }
  return widest;
}

}  // namespace

void encode_rice(const PayloadInput& in, ByteBuffer& out) {
  alignas(64) std::array<std::uint64_t, kBlock> r;
  const std::size_t n = in.ids.size();
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t count = std::min(kBlock, n - begin);
    compute_residuals(in.ids.data(), begin, count, in.order, in.base, r.data());
    encode_rice_block(r.data(), count, out);
  }
}

void decode_rice(std::span<const std::uint8_t> payload, const PayloadOutput& out) {
  ByteReader reader(payload);
  IdRebuilder rebuild(out.order, out.base);
  alignas(64) std::array<std::uint64_t, kBlock> r;
  for (std::uint64_t begin = 0; begin < out.count; begin += kBlock) {
    const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, out.count - begin));
    const unsigned widest = decode_rice_block(reader, count, r.data());
    rebuild.apply(r.data(), count, out.ids + begin, widest);
  }
  if (rebuild.failed()) throw DecodeError("ids overflow 64 bits");
  if (reader.remaining() != 0) throw DecodeError("bytes left after the last block");
}

void encode_blocks(const PayloadInput& in, bool with_exceptions, ByteBuffer& out) {
  alignas(64) std::array<std::uint64_t, kBlock> r;
  const std::size_t n = in.ids.size();
  // Worst case per block: header, reference and 64-bit values (plus exceptions' bytes).
  out.reserve(out.size() + n * 9 + 32);
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t count = std::min(kBlock, n - begin);
    if (!with_exceptions && count == kBlock && (begin > 0 || in.order == IdOrder::kSequence)) {
      encode_full_block(in.ids.data() + begin, in.order, in.base, out);
    } else {
      compute_residuals(in.ids.data(), begin, count, in.order, in.base, r.data());
      encode_block(r.data(), count, in.order, with_exceptions, out);
    }
  }
}

void decode_blocks(std::span<const std::uint8_t> payload, bool with_exceptions, const PayloadOutput& out) {
  ByteReader reader(payload);
  IdRebuilder rebuild(out.order, out.base);
  alignas(64) std::array<std::uint64_t, kBlock> r;
  for (std::uint64_t begin = 0; begin < out.count; begin += kBlock) {
    const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, out.count - begin));
    const BlockHeader header = read_block_header(reader, count, with_exceptions);
    if (count != kBlock || !decode_full_block(reader, header, rebuild, out, out.ids + begin)) {
      const unsigned widest = decode_block_values(reader, header, count, r.data());
      rebuild.apply(r.data(), count, out.ids + begin, widest);
    }
  }
  if (rebuild.failed()) throw DecodeError("ids overflow 64 bits");
  if (reader.remaining() != 0) throw DecodeError("bytes left after the last block");
}

}  // namespace zbfs::codec_detail
