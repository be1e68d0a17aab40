// The zbfs binary edge list (.zel): a 48-byte header, then the edges as pairs of
// little-endian unsigned ids of 4 or 8 bytes. No parsing and a fixed record size, so
// every rank reads its range of edges directly. Layout (all fields little-endian):
//
//   offset  size  field
//        0     8  magic "ZBFSEDGE"
//        8     4  format version (1)
//       12     4  id width in bytes: 4 or 8
//       16     8  number of vertices n (every id is below n)
//       24     8  number of edges m (the file holds exactly 48 + 2 * m * width bytes)
//       32     8  id base: added to an id to give the id of the file it came from
//                 (1 for Matrix Market sources, whose ids start at 1; else 0)
//       40     8  checksum of the five fields above (mix64 chain, see the .cpp)
//
// Decoding checks every field, the file size and every id: a truncated, foreign or
// corrupted file is an error, never a bad read.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "zbfs/core/edge.hpp"

namespace zbfs {

constexpr std::size_t kBinaryEdgeHeaderBytes = 48;
constexpr std::uint32_t kBinaryEdgeVersion = 1;

struct BinaryEdgeHeader {
  std::uint32_t id_bytes = 4;
  std::uint64_t num_vertices = 0;
  std::uint64_t num_edges = 0;
  std::uint64_t id_base = 0;
  friend bool operator==(const BinaryEdgeHeader&, const BinaryEdgeHeader&) = default;
};

// The narrowest id width that holds every id below n.
[[nodiscard]] std::uint32_t binary_id_bytes(std::uint64_t num_vertices);

[[nodiscard]] std::array<unsigned char, kBinaryEdgeHeaderBytes> encode_binary_edge_header(const BinaryEdgeHeader& h);

// Reads the header from the file's first bytes; `file_size` must match the header's
// counts. Returns what is wrong, or nothing when `out` holds a valid header.
[[nodiscard]] std::optional<std::string> decode_binary_edge_header(std::span<const unsigned char> bytes,
                                                                   std::uint64_t file_size, BinaryEdgeHeader& out);

// `out.size()` edges from `bytes` (exactly out.size() * 2 * id_bytes of them); edge
// numbers in messages start at `first_edge`. Fails on any id >= num_vertices.
[[nodiscard]] std::optional<std::string> decode_binary_edges(std::span<const unsigned char> bytes,
                                                             const BinaryEdgeHeader& header, std::uint64_t first_edge,
                                                             std::span<Edge> out);
// The records of `edges` into `out` (edges.size() * 2 * id_bytes bytes).
void encode_binary_edges(std::span<const Edge> edges, std::uint32_t id_bytes, std::span<unsigned char> out);

}  // namespace zbfs
