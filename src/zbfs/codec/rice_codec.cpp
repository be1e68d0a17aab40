// rice: Golomb-Rice coding of residuals in blocks of 128. A block's residuals are split
// at bit k: the low k bits packed by bitpack's kernels (bit_packing.hpp), the high parts
// (r >> k) in unary. For the geometric gaps of a random set (what frontiers are) this
// costs within a few hundredths of a bit of the gaps' entropy, where bit packing pays
// for the block's largest gap on every value.
//
//   rice block: u8 k | packed low k bits (as bitpack's values) | unary: per value,
//               (r >> k) zero bits then a one (the stop bit), from bit 0 of the first byte
//               up, ending with the byte of the last stop bit (zeros above it). The
//               stream's length is where its n-th stop bit is: no length field.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <string>

#if defined(__SSE4_1__)
#include <immintrin.h>
#endif

#include "zbfs/codec/bit_packing.hpp"
#include "zbfs/codec/bit_stream.hpp"
#include "zbfs/codec/payload_codecs.hpp"
#include "zbfs/codec/residuals.hpp"

namespace zbfs::codec_detail {
namespace {

// Bits needed for a 128-bit value.
unsigned bit_width_of(unsigned __int128 v) {
  const auto high = static_cast<std::uint64_t>(v >> 64);
  return high != 0 ? 64 + codec_detail::bit_width_of(high) : codec_detail::bit_width_of(static_cast<std::uint64_t>(v));
}

// The sum of n <= 128 residuals, exactly. `any` is their OR: below 2^56 the plain sum
// cannot overflow.
unsigned __int128 sum_of(const std::uint64_t* r, std::size_t n, std::uint64_t plain_sum, std::uint64_t any) {
  if (bit_width_of(any) <= 56) return plain_sum;
  unsigned __int128 sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += r[i];
  return sum;
}

// The parameter for n residuals, from their sum alone. When the low bits of the values
// are spread evenly, a block costs about n (k + 1/2 + (mean + 1/2) / 2^k) bits, least at
// the smallest k with 2^(k+1) >= mean + 1/2 (for geometric gaps within a few hundredths of
// a bit of the best k, at a fraction of the cost of trying candidates). Then
// 2^(k+1) > mean, so the high parts sum to less than 2n whatever the data: the unary
// stream stays under 3 bits per value.
unsigned rice_parameter(unsigned __int128 sum, std::size_t n) {
  // The least k with 4n 2^k >= 2 sum + n. Starting from the widths' difference, which is
  // at most that k, takes a step or two.
  const unsigned __int128 target = 2 * sum + n;
  const unsigned __int128 four_n = 4 * static_cast<unsigned __int128>(n);
  const unsigned target_width = bit_width_of(target);
  const unsigned step_width = bit_width_of(four_n);
  unsigned k = target_width > step_width ? target_width - step_width : 0;
  while ((four_n << k) < target) ++k;
  return k;  // at most 63: target < 4n 2^63
}

// Residuals of ids[begin, begin + n) into r; returns their sum. A sorted set's full
// block after the first takes its gaps, their sum and their OR in one vector pass.
unsigned __int128 rice_residuals(const PayloadInput& in, std::size_t begin, std::size_t n, std::uint64_t* r) {
  if (n == kBlock && begin > 0 && in.order == IdOrder::kSortedSet) {
    const BlockGaps gaps = gaps_of_block(in.ids.data() + begin, in.ids[begin - 1], r);
    return sum_of(r, n, gaps.sum, gaps.any);
  }
  compute_residuals(in.ids.data(), begin, n, in.order, in.base, r);
  std::uint64_t sum = 0;
  std::uint64_t any = 0;
  for (std::size_t k = 0; k < n; ++k) {
    sum += r[k];
    any |= r[k];
  }
  return sum_of(r, n, sum, any);
}

// A little-endian bit writer that stores its whole register after every append and moves
// on by the bytes completed, so appending costs no branch. Every byte up to the end gets
// written (a long run stores its zeros); the area needs 8 bytes of slack.
class UnaryWriter {
 public:
  explicit UnaryWriter(std::uint8_t* at) : at_(at) {}

  // `length` bits of `code`, length below 57.
  void append(std::uint64_t code, unsigned length) {
    bits_ |= code << filled_;
    filled_ += length;
    store(at_, bits_);
    at_ += filled_ / 8;
    bits_ >>= filled_ & ~7u;
    filled_ %= 8;
  }
  // One high part of any size: its zeros, then the stop bit.
  void append_one(std::uint64_t high) {
    if (high >= 56) {
      store(at_, bits_);  // the pending byte, zeros after it
      const std::uint64_t position = filled_ + high;
      std::uint8_t* const to = at_ + position / 8;
      for (std::uint8_t* zeros = at_ + 8; zeros < to; zeros += 8) store(zeros, 0);
      at_ = to;
      if (position >= 8) bits_ = 0;
      filled_ = static_cast<unsigned>(position % 8);
      high = 0;
    }
    append(std::uint64_t{1} << high, static_cast<unsigned>(high) + 1);
  }
  // Past the byte of the last bit appended.
  [[nodiscard]] std::uint8_t* end() const { return at_ + (filled_ > 0 ? 1 : 0); }

 private:
  static void store(std::uint8_t* at, std::uint64_t v) { std::memcpy(at, &v, sizeof v); }

  std::uint8_t* at_;
  std::uint64_t bits_ = 0;  // pending bits of the byte at at_, fewer than 8
  unsigned filled_ = 0;
};

// Writes the unary stream of high parts (r >> k) from `at` (8 bytes of slack);
// returns its end. High parts are appended eight at a time when the eight codes fit in
// 56 bits (for the parameter above they average under 3 bits each), else one by one.
std::uint8_t* write_unary(const std::uint64_t* r, std::size_t n, unsigned k, std::uint8_t* at) {
  UnaryWriter writer(at);
  std::size_t i = 0;
  const Lanes zero = {0, 0};
  const Lanes one = {1, 1};
  for (; i + 8 <= n; i += 8) {
    // The eight stop bits' positions in vectors: prefix sums within each pair, then the
    // earlier pairs' totals (a short tree, not a chain through all eight), plus the
    // stop bits before. The high parts sum to less than 2n (see rice_parameter): no
    // overflow.
    Lanes stop[4];
    for (std::size_t q = 0; q < 4; ++q) {
      const Lanes high = load_lanes(r + i + 2 * q) >> k;
      stop[q] = high + __builtin_shufflevector(zero, high, 0, 2);  // {h0, h0 + h1}
    }
    const Lanes before1 = __builtin_shufflevector(stop[0], stop[0], 1, 1);
    const Lanes before2 = before1 + __builtin_shufflevector(stop[1], stop[1], 1, 1);
    const Lanes before3 = before2 + __builtin_shufflevector(stop[2], stop[2], 1, 1);
    stop[0] += Lanes{0, 1};
    stop[1] += before1 + Lanes{2, 3};
    stop[2] += before2 + Lanes{4, 5};
    stop[3] += before3 + Lanes{6, 7};
    const std::uint64_t length = stop[3][1] + 1;
    if (length <= 56) [[likely]] {
      const Lanes code = (one << stop[0]) | (one << stop[1]) | (one << stop[2]) | (one << stop[3]);
      writer.append(code[0] | code[1], static_cast<unsigned>(length));
    } else {
      for (std::size_t j = 0; j < 8; ++j) writer.append_one(r[i + j] >> k);
    }
  }
  for (; i < n; ++i) writer.append_one(r[i] >> k);
  return writer.end();
}

// Appends one block of n residuals that sum to `sum`.
void encode_rice_block(const std::uint64_t* r, std::size_t n, unsigned __int128 sum, ByteBuffer& out) {
  const unsigned k = rice_parameter(sum, n);
  out.put_u8(static_cast<std::uint8_t>(k));
  if (k > 0) {
    if (n == kBlock) {
      kLowBitPackers[k](r, 0, out.extend(16 * std::size_t{k}));
    } else {
      pack_stream(r, n, k, 0, out.extend(packed_bytes(n, k)));
    }
  }
  const std::size_t start = out.size();
  const std::size_t room = (3 * n + 7) / 8 + 8;  // under 3 bits per value, plus slack
  std::uint8_t* unary = out.extend(room);
  const std::uint8_t* end = write_unary(r, n, k, unary);
  out.shrink_to(start + static_cast<std::size_t>(end - unary));
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

// The fast path for a sorted set's full block. Its ids follow from the
// stop bits' positions without taking the high parts apart: with p_i the position of
// the i-th stop bit, the high parts up to i sum to c_i = p_i - i, so
//   x_i = x_{-1} + sum_{j <= i} (low_j + 1) + (c_i << k):
// one prefix sum over the low bits (fused with their unpacking, as for bitpack), plus
// c_i shifted.

using Halves = std::uint16_t __attribute__((vector_size(16)));

// Two sums c_i, c_{i+1} widened to 64 bits. GCC 12 turns the portable conversion
// (__builtin_convertvector) into scalar moves, so x86 gets the one instruction.
inline __attribute__((always_inline)) Lanes widen_pair(const std::uint16_t* c) {
#if defined(__SSE4_1__)
  return reinterpret_cast<Lanes>(_mm_cvtepu16_epi64(_mm_loadu_si32(c)));
#else
  return Lanes{c[0], c[1]};
#endif
}

// Per byte of a unary stream: for its j-th set bit (j below the byte's popcount), the
// bit's position in the byte minus j (the rest of the row is padding, written past the
// end and then overwritten); and 8 minus its popcount in every lane, what the byte adds
// to 8 * (bytes read) - (stop bits read).
struct StopRow {
  std::array<std::uint16_t, 8> offsets;
  std::array<std::uint16_t, 8> advance;
};
constexpr std::array<StopRow, 256> kStopRows = [] {
  std::array<StopRow, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    unsigned rank = 0;
    for (unsigned bit = 0; bit < 8; ++bit) {
      if ((byte >> bit) & 1) table[byte].offsets[rank] = static_cast<std::uint16_t>(bit - rank), ++rank;
    }
    table[byte].advance.fill(static_cast<std::uint16_t>(8 - rank));
  }
  return table;
}();

// Unary streams longer than this take the general path, so that positions fit 16 bits
// (the encoder writes under 3 bits per value: 48 bytes for a full block).
constexpr std::size_t kFastUnaryBytes = 4096;

// Reads the n stop bits at the start of `unary` as c_i = p_i - i into c (n + 8 entries:
// each byte writes a whole row). Returns the bytes taken, or 0 when the stream is longer
// than kFastUnaryBytes (the general path reads it then).
std::size_t read_stop_sums(std::span<const std::uint8_t> unary, std::size_t n, std::uint16_t* c) {
  const std::size_t limit = std::min(unary.size(), kFastUnaryBytes);
  std::size_t produced = 0;
  std::size_t at = 0;
  Halves base = {};  // 8 at - produced in every lane: below 2^15
  const auto read_byte = [&](std::uint8_t byte) {
    Halves offsets;
    Halves advance;
    std::memcpy(&offsets, kStopRows[byte].offsets.data(), sizeof offsets);
    std::memcpy(&advance, kStopRows[byte].advance.data(), sizeof advance);
    const Halves row = offsets + base;
    std::memcpy(c + produced, &row, sizeof row);
    base += advance;
    produced += static_cast<unsigned>(std::popcount(byte));
  };
  // Eight bytes, then two, per step while they surely belong to this block (a byte holds
  // at most 8 stop bits), then one at a time.
  while (produced + 64 < n && at + 8 <= limit) {
    for (std::size_t j = 0; j < 8; ++j) read_byte(unary[at + j]);
    at += 8;
  }
  while (produced + 8 < n && at + 2 <= limit) {
    read_byte(unary[at]);
    read_byte(unary[at + 1]);
    at += 2;
  }
  while (produced < n) {
    if (at == limit) {
      if (limit == unary.size()) throw DecodeError("rice block: fewer stop bits than values");
      return 0;
    }
    read_byte(unary[at]);
    ++at;
  }
  // The n-th stop bit ends its byte: any stop bit after it is in the same byte.
  if (produced > n) throw DecodeError("rice block: bits after the last stop bit");
  return at;
}

// Two pairs at a time, as bitpack's unpack_gap_quad: the scan of the low bits carries
// one shuffle and one add from quad to quad; each id then adds its c_i << K.
template <unsigned K, unsigned Q>
inline __attribute__((always_inline)) void unpack_rice_quad(const std::uint8_t* lows, const std::uint16_t* c,
                                                            Lanes& total, std::uint64_t* out) {
  const Lanes steps = {1, 2};
  Lanes a = unpack_one<K, 2 * Q>(lows);
  Lanes b = unpack_one<K, 2 * Q + 1>(lows);
  a += __builtin_shufflevector(Lanes{0, 0}, a, 0, 2) + steps;  // {low0 + 1, low0 + low1 + 2}
  b += __builtin_shufflevector(Lanes{0, 0}, b, 0, 2) + steps;
  b += __builtin_shufflevector(a, a, 1, 1);
  store_lanes(out + 4 * Q, a + total + (widen_pair(c + 4 * Q) << K));
  store_lanes(out + 4 * Q + 2, b + total + (widen_pair(c + 4 * Q + 2) << K));
  total += __builtin_shufflevector(b, b, 1, 1);
}

template <unsigned K, unsigned... Q>
inline __attribute__((always_inline)) void unpack_rice_all(const std::uint8_t* lows, const std::uint16_t* c,
                                                           Lanes total, std::uint64_t* out,
                                                           std::integer_sequence<unsigned, Q...>) {
  (unpack_rice_quad<K, Q>(lows, c, total, out), ...);
}

#if defined(ZBFS_WIDE_GAP_KERNEL)
// Four ids in one 256-bit vector, as bitpack's unpack_gap_octet: the low bits plus one,
// scanned, plus the running total (whose chain is one add per quad), plus c_i << K.
template <unsigned K, unsigned Q>
inline __attribute__((always_inline)) void unpack_rice_quad_wide(const std::uint8_t* lows, const std::uint16_t* c,
                                                                 __m256i& total, std::uint64_t* out) {
  const __m256i scanned = scan_four(_mm256_add_epi64(unpack_two<K, 2 * Q>(lows), _mm256_set1_epi64x(1)));
  const __m256i high = _mm256_cvtepu16_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(c + 4 * Q)));
  const __m256i ids = _mm256_add_epi64(_mm256_add_epi64(scanned, total), _mm256_slli_epi64(high, K));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 4 * Q), ids);
  total = _mm256_add_epi64(total, _mm256_permute4x64_epi64(scanned, 0xFF));
}

template <unsigned K, unsigned... Q>
inline __attribute__((always_inline)) void unpack_rice_all_wide(const std::uint8_t* lows, const std::uint16_t* c,
                                                                __m256i total, std::uint64_t* out,
                                                                std::integer_sequence<unsigned, Q...>) {
  (unpack_rice_quad_wide<K, Q>(lows, c, total, out), ...);
}
#endif

// 128 ids from x_{-1} = last; returns the last of them. On 256-bit vectors where
// bitpack's kernel is (ZBFS_WIDE_GAP_KERNEL), else in pairs.
template <unsigned K>
std::uint64_t unpack_rice_block(const std::uint8_t* lows, const std::uint16_t* c, std::uint64_t last,
                                std::uint64_t* out) {
#if defined(ZBFS_WIDE_GAP_KERNEL)
  unpack_rice_all_wide<K>(lows, c, _mm256_set1_epi64x(static_cast<long long>(last)), out,
                          std::make_integer_sequence<unsigned, kBlock / 4>{});
#else
  unpack_rice_all<K>(lows, c, Lanes{last, last}, out, std::make_integer_sequence<unsigned, kBlock / 4>{});
#endif
  return out[kBlock - 1];
}

// Up to this k the block's increase stays below 2^63 (high sums below 2^16, lows below
// 2^k each), so a wrap past 2^64 shows as an end below the start.
constexpr unsigned kFastRiceWidest = 46;
using RiceUnpackKernel = std::uint64_t (*)(const std::uint8_t*, const std::uint16_t*, std::uint64_t, std::uint64_t*);
template <unsigned... K>
constexpr std::array<RiceUnpackKernel, sizeof...(K)> make_rice_unpackers(std::integer_sequence<unsigned, K...>) {
  return {&unpack_rice_block<K>...};
}
constexpr auto kRiceUnpackers = make_rice_unpackers(std::make_integer_sequence<unsigned, kFastRiceWidest + 1>{});

// Decodes a full block of a sorted set straight into ids. The first block too: its first
// residual is x_0 - base, so it continues from x_{-1} = base - 1 (from 2^64 - 1 when base
// is 0, which cannot wrap: the block's ids are below 2^63 then). Returns false, having
// read nothing, when the general path must handle it.
bool decode_full_rice_block(ByteReader& reader, IdRebuilder& rebuild, std::uint64_t base, std::uint64_t* ids) {
  const std::span<const std::uint8_t> rest(reader.here(), reader.remaining());
  if (rest.empty() || rest[0] > kFastRiceWidest) return false;
  const unsigned k = rest[0];
  const std::size_t low_bytes = 16 * std::size_t{k};
  if (rest.size() < 1 + low_bytes) return false;  // the general path reports it
  alignas(64) std::array<std::uint16_t, kBlock + 8> c;
  const std::size_t used = read_stop_sums(rest.subspan(1 + low_bytes), kBlock, c.data());
  if (used == 0) return false;
  const bool first = !rebuild.started();
  const std::uint64_t start = first ? base - 1 : rebuild.last();
  const std::uint64_t end = kRiceUnpackers[k](rest.data() + 1, c.data(), start, ids);
  rebuild.continue_from(end, end < start && !(first && base == 0));
  reader.skip(1 + low_bytes + used, "rice block");
  return true;
}

}  // namespace

void encode_rice(const PayloadInput& in, ByteBuffer& out) {
  alignas(64) std::array<std::uint64_t, kBlock> r;
  const std::size_t n = in.ids.size();
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t count = std::min(kBlock, n - begin);
    const unsigned __int128 sum = rice_residuals(in, begin, count, r.data());
    encode_rice_block(r.data(), count, sum, out);
  }
}

void decode_rice(std::span<const std::uint8_t> payload, const PayloadOutput& out) {
  ByteReader reader(payload);
  IdRebuilder rebuild(out.order, out.base);
  alignas(64) std::array<std::uint64_t, kBlock> r;
  for (std::uint64_t begin = 0; begin < out.count; begin += kBlock) {
    const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, out.count - begin));
    const bool fast = count == kBlock && out.order == IdOrder::kSortedSet &&
                      decode_full_rice_block(reader, rebuild, out.base, out.ids + begin);
    if (!fast) {
      const unsigned widest = decode_rice_block(reader, count, r.data());
      rebuild.apply(r.data(), count, out.ids + begin, widest);
    }
  }
  if (rebuild.failed()) throw DecodeError("ids overflow 64 bits");
  if (reader.remaining() != 0) throw DecodeError("bytes left after the last block");
}

}  // namespace zbfs::codec_detail
