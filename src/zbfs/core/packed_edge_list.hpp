// PackedEdgeList: an edge list (generated, or read from a file) held in memory at 2 * vertex_bits bits per
// edge, rounded up to whole bytes (5 bytes at scale 20, 6 at scale 24, 8 at scale 32)
// instead of the 16 bytes of two 64-bit ids. Kernel 1 and the validator stream over it.
// Records are byte-aligned so that threads can write distinct edges without atomics.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "zbfs/core/edge.hpp"
#include "zbfs/core/large_array.hpp"

namespace zbfs {

class PackedEdgeList {
 public:
  PackedEdgeList() = default;
  PackedEdgeList(int vertex_bits, std::uint64_t num_edges);

  // Bytes a list of this shape occupies (for memory estimates before allocating).
  static std::uint64_t bytes_needed(int vertex_bits, std::uint64_t num_edges);
  // Bytes of one edge: two ids of vertex_bits bits.
  static unsigned record_bytes_for(int vertex_bits);

  [[nodiscard]] std::uint64_t size() const { return num_edges_; }
  [[nodiscard]] int vertex_bits() const { return vertex_bits_; }
  [[nodiscard]] std::uint64_t num_vertices() const { return std::uint64_t{1} << vertex_bits_; }
  [[nodiscard]] unsigned record_bytes() const { return record_bytes_; }

  [[nodiscard]] Edge get(std::uint64_t i) const {
    const unsigned char* p = bytes_.data() + i * record_bytes_;
    if (record_bytes_ <= 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, p, sizeof(word));  // the buffer is padded, so 8 bytes are readable
      return {word & vertex_mask_, (word >> vertex_bits_) & vertex_mask_};
    }
    unsigned __int128 word = 0;
    std::memcpy(&word, p, sizeof(word));
    return {static_cast<std::uint64_t>(word) & vertex_mask_,
            static_cast<std::uint64_t>(word >> vertex_bits_) & vertex_mask_};
  }

  // Writes exactly record_bytes() bytes, so concurrent writes of distinct edges are safe.
  void set(std::uint64_t i, Edge e) {
    unsigned char* p = bytes_.data() + i * record_bytes_;
    const unsigned __int128 word =
        static_cast<unsigned __int128>(e.u) | (static_cast<unsigned __int128>(e.v) << vertex_bits_);
    std::memcpy(p, &word, record_bytes_);  // little-endian: the low bytes hold the record
  }

 private:
  static constexpr std::uint64_t kPaddingBytes = 16;

  int vertex_bits_ = 1;
  unsigned record_bytes_ = 1;
  std::uint64_t vertex_mask_ = 1;
  std::uint64_t num_edges_ = 0;
  LargeArray<unsigned char> bytes_;
};

// `edges` packed (every id below 2^vertex_bits).
PackedEdgeList pack_edges(std::span<const Edge> edges, int vertex_bits);

// The slice of the edge list that rank `rank` of `ranks` generates and validates against.
struct EdgeSliceRange {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
};
inline EdgeSliceRange edge_slice_of(std::uint64_t num_edges, int rank, int ranks) {
  const auto r = static_cast<std::uint64_t>(rank);
  const auto p = static_cast<std::uint64_t>(ranks);
  const std::uint64_t first = static_cast<std::uint64_t>((static_cast<unsigned __int128>(num_edges) * r) / p);
  const std::uint64_t last = static_cast<std::uint64_t>((static_cast<unsigned __int128>(num_edges) * (r + 1)) / p);
  return {first, last - first};
}

}  // namespace zbfs
