// bitpack and pfor: frame-of-reference bit packing of residuals in blocks of 128.
//
// A full block holds 128 residuals minus the block's minimum (its reference), each in b
// bits, packed by the interleaved-lane kernels of bit_packing.hpp. The last, partial
// block is packed as a plain bit stream instead, so a short message costs its bits and
// not a whole block.
//
// Full bitpack blocks take a fast path at both ends: a set's gaps are computed in the
// pass that finds their width and packed straight into the send buffer by a kernel that
// also takes the payload's checksum, and on receipt the unpack kernel does the prefix sum too and writes the
// ids in place, in a lean loop over a set's blocks where the kernel also takes the
// payload's checksum (pfor blocks without exceptions take the kernel too). A set's
// partial block is decoded by a stream kernel fused with the prefix sum in the same way.
// Partial blocks on the way out, pfor's encoder and blocks no kernel takes go through a
// residual buffer.
//
//   bitpack block: u8 b | varint reference | packed values
//   pfor block:    u8 b | u8 exceptions e | varint reference | packed low b bits
//                  | e positions (u8, increasing) | e varint high parts (value >> b)
//
// pfor picks, per block, the width that minimises the block's size when the values
// wider than it are stored as exceptions.
#include <algorithm>
#include <array>
#include <cstring>

#include "zbfs/codec/bit_packing.hpp"
#include "zbfs/codec/bit_stream.hpp"
#include "zbfs/codec/checksum.hpp"
#include "zbfs/codec/payload_codecs.hpp"
#include "zbfs/codec/residuals.hpp"

namespace zbfs::codec_detail {
namespace {

// The widest block the fused gap kernel takes: its values (packed + reference + 1) stay
// below 2^55, so a block's sum stays below 2^62 and a wrap past 2^64 shows as an end
// below the start.
constexpr unsigned kWidestGapBlock = 54;
static_assert(kWidestGapBlock <= kWidestStreamKernel);

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

// A payload's CRC-32C, taken over its bytes in order as a coder passes them. `seen` is
// the buffer up to where the coder has read or written, and the payload starts at
// `start` in it. A decoder takes it in whole strides of crc32c's fast path as soon as it
// has read past them (advance): the crc32 instructions then run beside the unpacking
// rather than in a pass before it, and a small block does not pay a call of its own
// (checksummed alone, block by block, one stream of crc32 was slower than the unpacking
// of wide blocks). A kernel that takes the CRC itself continues the register
// (register_at) and hands it back (resume).
class PayloadChecksum {
 public:
  explicit PayloadChecksum(std::size_t start) : done_(start) {}

  void advance(std::span<const std::uint8_t> seen) {
    if (seen.size() - done_ < kCrc32cStrideBytes) return;
    const std::size_t bytes = (seen.size() - done_) / kCrc32cStrideBytes * kCrc32cStrideBytes;
    crc_ = crc32c(seen.subspan(done_, bytes), crc_);
    done_ += bytes;
  }
  // The CRC register (not inverted) of everything seen.
  std::uint32_t register_at(std::span<const std::uint8_t> seen) {
    if (seen.size() != done_) crc_ = crc32c(seen.subspan(done_), crc_);
    done_ = seen.size();
    return ~crc_;
  }
  // The register after the first `seen_bytes` bytes of the buffer.
  void resume(std::size_t seen_bytes, std::uint32_t crc_register) {
    crc_ = ~crc_register;
    done_ = seen_bytes;
  }
  // The CRC of the whole payload, `seen` to its end.
  std::uint32_t finish(std::span<const std::uint8_t> seen) { return ~register_at(seen); }

 private:
  std::size_t done_;
  std::uint32_t crc_ = 0;
};

// A full bitpack block straight from the ids: a sorted set's gaps in one pass that also
// finds their width, packed by a kernel that takes the payload's CRC on the way where the
// wide kernels run, or a sequence's values packed against their minimum. x[-1] is the id
// before the block: for a set's first block, base - 1, whose gap to x[0] = base is the
// first residual, 0. Writes the same bytes as encode_block.
void encode_full_block(const std::uint64_t* x, std::uint64_t before, IdOrder order, std::uint64_t base, ByteBuffer& out,
                       [[maybe_unused]] PayloadChecksum& checksum) {
  if (order == IdOrder::kSortedSet) {
    alignas(64) std::array<std::uint64_t, kBlock> gaps;
    const unsigned b = bit_width_of(gaps_of_block(x, before, gaps.data()).any);
#if defined(ZBFS_WIDE_GAP_KERNEL)
    std::uint32_t crc = checksum.register_at(out.bytes());
    const std::uint16_t head = static_cast<std::uint16_t>(b);  // b, then a reference of 0 (a one-byte varint)
    std::memcpy(out.extend(2), &head, 2);
    crc = _mm_crc32_u16(crc, head);
    if (b > 0) crc = kChecksummedResidualPackers[b](gaps.data(), 0, out.extend(16 * std::size_t{b}), crc);
    checksum.resume(out.size(), crc);
#else
    out.put_u8(static_cast<std::uint8_t>(b));
    out.put_varint(0);
    if (b > 0) kResidualPackers[b](gaps.data(), 0, out.extend(16 * std::size_t{b}));
#endif
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
    if (!rebuild.started() || h.b > kWidestGapBlock || h.reference >= std::uint64_t{1} << kWidestGapBlock) {
      return false;
    }
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

// A sorted set's partial block without exceptions, fused with its prefix sum as the
// full blocks are, under the same bounds (values below 2^55, so a wrap shows as an end
// below the start), continuing from the last id or, for a set's first block, from base -
// 1 where the base is not 0. Returns false, having read nothing, otherwise.
bool decode_gap_tail(ByteReader& reader, const BlockHeader& h, std::size_t n, IdRebuilder& rebuild,
                     const PayloadOutput& out, std::uint64_t* ids) {
  if (out.order != IdOrder::kSortedSet || h.exceptions != 0 || h.b == 0 || h.b > kWidestGapBlock ||
      h.reference >= std::uint64_t{1} << kWidestGapBlock || (!rebuild.started() && out.base == 0)) {
    return false;
  }
  const std::uint8_t* packed = reader.take(packed_bytes(n, h.b), "packed tail").data();
  const std::uint64_t start = rebuild.started() ? rebuild.last() : out.base - 1;
  const std::uint64_t end = kGapStreamUnpackers[h.b](packed, n, h.reference + 1, start, ids);
  rebuild.continue_from(end, end < start);
  return true;
}

}  // namespace

std::uint32_t encode_blocks(const PayloadInput& in, bool with_exceptions, ByteBuffer& out) {
  alignas(64) std::array<std::uint64_t, kBlock> r;
  const std::size_t n = in.ids.size();
  // Worst case per block: header, reference and 64-bit values (plus exceptions' bytes).
  out.reserve(out.size() + n * 9 + 32);
  PayloadChecksum checksum(out.size());
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t count = std::min(kBlock, n - begin);
    if (!with_exceptions && count == kBlock) {
      const std::uint64_t before = begin > 0 ? in.ids[begin - 1] : in.base - 1;
      encode_full_block(in.ids.data() + begin, before, in.order, in.base, out, checksum);
    } else {
      compute_residuals(in.ids.data(), begin, count, in.order, in.base, r.data());
      encode_block(r.data(), count, in.order, with_exceptions, out);
    }
  }
  return checksum.finish(out.bytes());
}

namespace {

// A bitpack block (u8 b, a one-byte reference, 16 b packed bytes) of a sorted set through
// the fused kernel, continuing the CRC register over all its bytes: on the way where the
// wide kernel runs, in a pass behind it otherwise.
GapBlockEnd unpack_checksummed_gap_block(const std::uint8_t* block, unsigned b, std::uint64_t step, std::uint64_t last,
                                         std::uint64_t* ids, std::uint32_t crc) {
#if defined(ZBFS_WIDE_GAP_KERNEL)
  std::uint16_t head;
  std::memcpy(&head, block, 2);
  return kChecksummedGapUnpackers[b](block + 2, step, last, ids, _mm_crc32_u16(crc, head));
#else
  const std::uint64_t end = kGapUnpackers[b](block + 2, step, last, ids);
  return {end, ~crc32c({block, 2 + 16 * std::size_t{b}}, ~crc)};
#endif
}

// bitpack's full blocks of a sorted set, one after another for as long as each takes
// the fused kernel (with the one-byte reference the encoder writes), from ids[begin]: the
// lean loop of the common case, with one bounds check per block. The first block, whose
// first residual is the first id minus the base, continues from base - 1 as if that were
// the id before (the caller sees that the base is not 0). Returns where it stopped; what
// it could not take is left to the general path.
std::uint64_t decode_gap_blocks(ByteReader& reader, IdRebuilder& rebuild, const PayloadOutput& out, std::uint64_t begin,
                                PayloadChecksum& checksum) {
  const std::uint64_t first = rebuild.started() ? rebuild.last() : out.base - 1;
  std::uint64_t last = first;
  bool wrapped = false;
  const std::uint64_t from = begin;
  std::uint32_t crc = checksum.register_at(reader.consumed());
  while (out.count - begin >= kBlock && reader.remaining() >= 2) {
    const std::uint8_t* block = reader.here();
    const unsigned b = block[0];
    const std::uint8_t reference = block[1];
    const std::size_t bytes = 2 + 16 * std::size_t{b};
    if (b > kWidestGapBlock || reference >= 0x80 || bytes > reader.remaining()) break;
    const GapBlockEnd end = unpack_checksummed_gap_block(block, b, reference + 1u, last, out.ids + begin, crc);
    wrapped |= end.last < last;
    last = end.last;
    crc = end.crc;
    reader.skip(bytes, "packed block");
    begin += kBlock;
  }
  checksum.resume(reader.position(), crc);
  if (begin != from) rebuild.continue_from(last, wrapped);
  return begin;
}

}  // namespace

std::uint32_t decode_blocks(std::span<const std::uint8_t> payload, bool with_exceptions, const PayloadOutput& out) {
  PayloadChecksum checksum(0);
  ByteReader reader(payload);
  IdRebuilder rebuild(out.order, out.base);
  const bool gap_blocks = !with_exceptions && out.order == IdOrder::kSortedSet;
  alignas(64) std::array<std::uint64_t, kBlock> r;
  for (std::uint64_t begin = 0; begin < out.count;) {
    if (gap_blocks && (rebuild.started() || out.base != 0)) {
      begin = decode_gap_blocks(reader, rebuild, out, begin, checksum);
      if (begin == out.count) break;
    }
    const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(kBlock, out.count - begin));
    const BlockHeader header = read_block_header(reader, count, with_exceptions);
    const bool fused = count == kBlock ? decode_full_block(reader, header, rebuild, out, out.ids + begin)
                                       : decode_gap_tail(reader, header, count, rebuild, out, out.ids + begin);
    if (!fused) {
      const unsigned widest = decode_block_values(reader, header, count, r.data());
      rebuild.apply(r.data(), count, out.ids + begin, widest);
    }
    checksum.advance(reader.consumed());
    begin += count;
  }
  if (rebuild.failed()) throw DecodeError("ids overflow 64 bits");
  if (reader.remaining() != 0) throw DecodeError("bytes left after the last block");
  return checksum.finish(reader.consumed());
}

}  // namespace zbfs::codec_detail
