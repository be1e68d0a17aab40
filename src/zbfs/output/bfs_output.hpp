// BFS results for downstream tools (--write-levels, --write-parents): one value per
// vertex of the graph, for one search key, written in parallel by the vertices' owners
// (write_ordered_file). Vertices and parents are named by the graph source's ids
// (VertexIds: the file's own ids, also after --relabel), in increasing order.
//
// Text: a comment line, then "vertex value" per line:
//   # zbfs parents: search key 7, 1000 vertices; vertex parent (-1: unreached)
//   0 7
//   1 -1
// Binary (little-endian): a 32-byte header, then one record per vertex of
//   (u64 vertex, i64 value), value -1 when unreached:
//   offset 0: magic "ZBFSBFSR"; 8: u32 version (1); 12: u32 what (1 levels, 2 parents,
//   3 distances); 16: u64 vertices; 24: u64 search key.
// SSSP distances (--write-distances) are written the same way, as text with 9 significant
// digits (which read back as the same float) and as binary f64 values, -1 unreached.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "zbfs/input/vertex_ids.hpp"
#include "zbfs/output/bfs_output_format.hpp"
#include "zbfs/topology/process_grid.hpp"

namespace zbfs {

constexpr std::size_t kBfsOutputHeaderBytes = 32;

// Collective. `values`: this rank's piece (levels, or parents as internal ids), -1 where
// unreached; `root` is the internal id of the search key.
void write_bfs_output(const ProcessGrid& grid, const VertexIds& ids, const std::string& path, BfsOutputKind kind,
                      BfsOutputFormat format, std::uint64_t root, std::span<const std::int64_t> values);

// Collective. `distance`: this rank's piece, +infinity where unreached.
void write_distance_output(const ProcessGrid& grid, const VertexIds& ids, const std::string& path,
                           BfsOutputFormat format, std::uint64_t root, std::span<const float> distance);

}  // namespace zbfs
