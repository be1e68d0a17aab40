// Writing a graph file from all ranks at once (zbfs generate, zbfs convert): each rank
// formats its edges, and write_ordered_file lays the parts out in rank order after a
// header. Formats as input/graph_format.hpp reads them:
//   binary    the .zel layout of input/binary_edge_file.hpp
//   edgelist  "# zbfs edge list: N vertices, M edges", then "u v" per line
//   mtx       "%%MatrixMarket matrix coordinate pattern general", the size line "N N M",
//             then "u v" per line, 1-based
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "zbfs/core/edge.hpp"
#include "zbfs/input/graph_format.hpp"
#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

struct GraphFileShape {
  std::uint64_t num_vertices = 0;
  std::uint64_t num_edges = 0;  // over all ranks
  std::uint64_t id_base = 0;    // the source's ids are internal + id_base (edge lists keep them)
};

// Collective. `edges`: this rank's, 0-based; they follow the lower ranks' in the file.
void write_graph_file(const Communicator& world, const std::string& path, GraphFormat format,
                      std::span<const Edge> edges, const GraphFileShape& shape);

}  // namespace zbfs
