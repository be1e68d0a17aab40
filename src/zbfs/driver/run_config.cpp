#include "zbfs/driver/run_config.hpp"

#include <cmath>
#include <string>

#include "zbfs/bfs/direction_optimizing_bfs.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/generator/packed_edge_list.hpp"
#include "zbfs/graph/csr_builder.hpp"

namespace zbfs {

void validate_config(const RunConfig& c) {
  if (c.scale < 1 || c.scale > 42) throw_usage_error("--scale must be in [1, 42], got " + std::to_string(c.scale));
  if (c.edgefactor < 1 || c.edgefactor > 1024)
    throw_usage_error("--edgefactor must be in [1, 1024], got " + std::to_string(c.edgefactor));
  if (c.num_roots < 1) throw_usage_error("--roots must be at least 1");
  if (c.num_roots > (std::uint64_t{1} << c.scale)) {
    throw_usage_error("--roots " + std::to_string(c.num_roots) + " exceeds the 2^" + std::to_string(c.scale) +
                      " vertices of the graph");
  }
  if (!(c.bfs.alpha > 0) || !std::isfinite(c.bfs.alpha)) throw_usage_error("--alpha must be a positive number");
  if (!(c.bfs.beta > 0) || !std::isfinite(c.bfs.beta)) throw_usage_error("--beta must be a positive number");
  if (c.threads < 0 || c.threads > 4096) throw_usage_error("--threads must be in [0, 4096]");
}

std::uint64_t estimate_peak_memory_bytes(const RunConfig& c) {
  const std::uint64_t n = std::uint64_t{1} << c.scale;
  const std::uint64_t m = c.edgefactor << c.scale;
  const unsigned vertex_bytes = c.scale <= 32 ? 4 : 8;
  const std::uint64_t edges = PackedEdgeList::bytes_needed(c.scale, m);
  // Construction's peak bounds the final graph; BFS and validation come after it.
  const std::uint64_t graph = csr_build_peak_bytes(n, m, vertex_bytes);
  const std::uint64_t bfs =
      n * sizeof(std::int64_t) + (vertex_bytes == 4 ? DirectionOptimizingBfs<std::uint32_t>::workspace_bytes(n)
                                                    : DirectionOptimizingBfs<std::uint64_t>::workspace_bytes(n));
  const std::uint64_t validation = c.validate ? n * sizeof(std::int32_t) + n / 8 : 0;
  constexpr std::uint64_t kBaseline = 64ULL << 20;  // program, libraries, small buffers
  return edges + graph + bfs + validation + kBaseline;
}

}  // namespace zbfs
