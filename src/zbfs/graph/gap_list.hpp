// One sorted, duplicate-free neighbour list as byte-coded gaps in blocks, the way Ligra+
// and GBBS store compressed graphs. A list of d ids is cut into blocks of kGapBlock ids:
//
//   header: d > kGapBlock only: the byte length of every block but the last, one
//           little-endian uint16 each (a block is at most kGapBlock varints of 10 bytes)
//   block:  its first id as a LEB128 varint, then each next id's gap to the one before,
//           minus one, as a varint
//
// Each block starts from an id, not a gap, so a reader can start at any block (a
// top-down step splits a hub's list among threads that way), and a reader that stops
// early (a bottom-up step, at the first parent it finds) decodes only what it read.
// In degree order the lists' ids cluster at the low ids of the hubs, so most gaps take one
// byte. Readers trust the bytes: the lists are written by this process, not read from a
// file.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>

namespace zbfs {

inline constexpr std::uint64_t kGapBlock = 64;

inline std::uint64_t gap_blocks(std::uint64_t degree) { return (degree + kGapBlock - 1) / kGapBlock; }

inline unsigned varint_bytes(std::uint64_t value) { return static_cast<unsigned>((std::bit_width(value | 1) + 6) / 7); }

inline std::uint8_t* put_varint(std::uint8_t* out, std::uint64_t value) {
  while (value >= 0x80) {
    *out++ = static_cast<std::uint8_t>(value | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<std::uint8_t>(value);
  return out;
}

inline std::uint64_t get_varint(const std::uint8_t*& in) {
  std::uint64_t byte = *in++;
  if (byte < 0x80) return byte;  // most gaps
  std::uint64_t value = byte & 0x7f;
  unsigned shift = 7;
  do {
    byte = *in++;
    value |= (byte & 0x7f) << shift;
    shift += 7;
  } while (byte >= 0x80);
  return value;
}

// The encoded size of `ids` (sorted ascending, no duplicates).
template <class V>
std::uint64_t gap_list_bytes(std::span<const V> ids) {
  if (ids.empty()) return 0;
  std::uint64_t bytes = 2 * (gap_blocks(ids.size()) - 1);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    bytes += i % kGapBlock == 0 ? varint_bytes(ids[i]) : varint_bytes(ids[i] - ids[i - 1] - 1);
  }
  return bytes;
}

// Writes `ids` (sorted ascending, no duplicates) at `out`; returns the end.
template <class V>
std::uint8_t* encode_gap_list(std::span<const V> ids, std::uint8_t* out) {
  if (ids.empty()) return out;
  const std::uint64_t blocks = gap_blocks(ids.size());
  std::uint8_t* header = out;
  std::uint8_t* at = out + 2 * (blocks - 1);
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const std::uint8_t* block_start = at;
    const std::size_t first = b * kGapBlock;
    const std::size_t last = std::min<std::size_t>(ids.size(), first + kGapBlock);
    at = put_varint(at, ids[first]);
    for (std::size_t i = first + 1; i < last; ++i) at = put_varint(at, ids[i] - ids[i - 1] - 1);
    if (b + 1 < blocks) {
      const auto length = static_cast<std::uint16_t>(at - block_start);
      std::memcpy(header + 2 * b, &length, sizeof(length));
    }
  }
  return at;
}

// Calls visit(id) for the ids of blocks [first_block, last_block) of the list of `degree`
// ids at `list` (blocks past the list's end are none), in order, until visit returns
// true; returns whether it did.
template <class V, class Visit>
bool scan_gap_blocks(const std::uint8_t* list, std::uint64_t degree, std::uint64_t first_block,
                     std::uint64_t last_block, Visit&& visit) {
  const std::uint64_t blocks = gap_blocks(degree);
  last_block = std::min(last_block, blocks);
  if (first_block >= last_block) return false;
  const std::uint8_t* in = list + 2 * (blocks - 1);
  for (std::uint64_t b = 0; b < first_block; ++b) {
    std::uint16_t length = 0;
    std::memcpy(&length, list + 2 * b, sizeof(length));
    in += length;
  }
  for (std::uint64_t b = first_block; b < last_block; ++b) {
    const std::uint64_t count = std::min(kGapBlock, degree - b * kGapBlock);
    std::uint64_t id = get_varint(in);
    if (visit(static_cast<V>(id))) return true;
    for (std::uint64_t i = 1; i < count; ++i) {
      id += get_varint(in) + 1;
      if (visit(static_cast<V>(id))) return true;
    }
  }
  return false;
}

// The whole list, in order, until visit returns true; returns whether it did.
template <class V, class Visit>
bool scan_gap_list(const std::uint8_t* list, std::uint64_t degree, Visit&& visit) {
  if (degree == 0) return false;
  return scan_gap_blocks<V>(list, degree, 0, gap_blocks(degree), visit);
}

}  // namespace zbfs
