#include "zbfs/core/packed_edge_list.hpp"

#include <algorithm>
#include <string>

#include "zbfs/core/error.hpp"

namespace zbfs {

unsigned PackedEdgeList::record_bytes_for(int vertex_bits) { return static_cast<unsigned>((2 * vertex_bits + 7) / 8); }

std::uint64_t PackedEdgeList::bytes_needed(int vertex_bits, std::uint64_t num_edges) {
  return num_edges * record_bytes_for(vertex_bits) + kPaddingBytes;
}

PackedEdgeList::PackedEdgeList(int vertex_bits, std::uint64_t num_edges)
    : vertex_bits_(vertex_bits),
      record_bytes_(record_bytes_for(vertex_bits)),
      vertex_mask_(vertex_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << vertex_bits) - 1),
      num_edges_(num_edges) {
  if (vertex_bits < 1 || vertex_bits > 62) {
    throw Error(ExitCode::kFailure, "edge list vertex id width must be 1..62 bits, got " + std::to_string(vertex_bits));
  }
  bytes_ = LargeArray<unsigned char>(bytes_needed(vertex_bits, num_edges));
}

PackedEdgeList pack_edges(std::span<const Edge> edges, int vertex_bits) {
  PackedEdgeList list(vertex_bits, edges.size());
  const auto count = static_cast<std::int64_t>(edges.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) list.set(static_cast<std::uint64_t>(i), edges[static_cast<std::size_t>(i)]);
  return list;
}

}  // namespace zbfs
