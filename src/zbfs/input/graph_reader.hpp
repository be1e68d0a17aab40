// Reading a graph file over MPI (zbfs run --input, zbfs convert). No rank reads the whole
// file: text files are cut into equal byte ranges, and a line belongs to the rank whose
// range holds its first byte (so ranks agree on the cuts without talking); binary files
// into equal ranges of edges. Each rank parses its share with its OpenMP threads. Errors
// name the file and the line (text) or edge (binary) and are agreed on by all ranks: the
// first error in file order is reported by every rank alike (exit status 2).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zbfs/core/edge.hpp"
#include "zbfs/core/packed_edge_list.hpp"
#include "zbfs/input/graph_format.hpp"
#include "zbfs/input/vertex_ids.hpp"
#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

// This rank's share of a file's edges, in the file's order, 0-based.
struct FileEdges {
  std::vector<Edge> edges;
  std::vector<float> weights;         // GraphFileSpec::weights: one per edge
  std::uint64_t num_vertices = 0;     // Matrix Market and binary: declared; edge lists: largest id + 1
  std::uint64_t num_input_edges = 0;  // over all ranks
  std::uint64_t id_base = 0;          // add to give the file's ids (1 for Matrix Market)
};

// Collective; no relabelling.
FileEdges read_file_edges(const Communicator& world, const GraphFileSpec& spec);

struct LoadedGraph {
  PackedEdgeList slice;        // this rank's edges, internal ids
  std::vector<float> weights;  // GraphFileSpec::weights: the slice's, in its order
  std::uint64_t num_vertices = 0;
  std::uint64_t num_input_edges = 0;
  VertexIds ids;  // internal ids back to the file's
};

// Collective: read_file_edges, relabelled when asked, packed for kernel 1 and validation.
LoadedGraph read_graph_file(const Communicator& world, const GraphFileSpec& spec);

}  // namespace zbfs
