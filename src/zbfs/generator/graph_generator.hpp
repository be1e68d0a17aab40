// The synthetic graph families zbfs generates (--graph), each a pure function of its
// parameters and seed, generated in slices: rank r of P produces its slice alone, and the
// union of the slices is the same edge list for every P.
//
//   kronecker  Graph500's generator (kronecker.hpp): 2^scale vertices, edgefactor * 2^scale tuples
//   rmat       the same recursive-matrix sampler with initiator (a, b, c, 1 - a - b - c);
//              labels are permuted as for kronecker, so vertex blocks stay balanced
//   gnm        G(n, m): m tuples whose ends are uniform over n vertices (with replacement)
//   rgg        random geometric graph: n uniform points in the unit square, an edge
//              between every two closer than a radius (geometric_graph.hpp); ids follow
//              the points' cells, so vertex blocks are strips of the square
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "zbfs/core/input_edges.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/core/packed_edge_list.hpp"

namespace zbfs {

enum class GraphKind { kKronecker, kRmat, kGnm, kRgg };

[[nodiscard]] std::optional<GraphKind> parse_graph_kind(std::string_view name);
[[nodiscard]] const char* to_string(GraphKind kind);

struct GraphSpec {
  GraphKind kind = GraphKind::kKronecker;
  int scale = 16;
  std::uint64_t edgefactor = 16;
  std::uint64_t seed = 1;
  std::uint64_t vertices = 0;  // gnm, rgg: n (0: 2^scale)
  std::uint64_t edges = 0;     // gnm: m (0: edgefactor * n)
  // rmat's initiator (defaults: the R-MAT paper's).
  double a = 0.45;
  double b = 0.15;
  double c = 0.15;
  // rgg: the connection radius, or (radius 0) the expected average degree (0: 2 * edgefactor).
  double radius = 0;
  double degree = 0;
};

// Throws a usage error for parameters out of range (say which flag).
void validate_graph_spec(const GraphSpec& spec);

[[nodiscard]] std::uint64_t graph_vertices(const GraphSpec& spec);
// Edge tuples of the whole graph: exact for all but rgg, whose count is known only after
// generation (there: the expected count).
[[nodiscard]] std::uint64_t expected_graph_edges(const GraphSpec& spec);
// Bits of the packed edge lists of this graph (every id below graph_vertices).
[[nodiscard]] int graph_vertex_bits(const GraphSpec& spec);

// Rank `rank` of `ranks`'s slice of the graph's edge list.
[[nodiscard]] PackedEdgeList generate_graph_slice(const GraphSpec& spec, int rank, int ranks);

// The weights (generator/edge_weights.hpp) of `slice`, rank `rank` of `ranks`'s slice as
// generate_graph_slice made it, in its order.
[[nodiscard]] LargeArray<float> generate_weight_slice(const GraphSpec& spec, int rank, int ranks,
                                                      const PackedEdgeList& slice);

// Rank `rank` of `ranks`'s share of the same list for a validator, produced again chunk
// by chunk instead of kept: the ranks' shares make up the list, each in an order of its
// own (Kronecker and rmat hand out draws, which skips the shuffle). For the families
// whose edges can be produced by index (kronecker, rmat, gnm); nullopt for rgg, whose
// edges come from whole cells. The share carries its tuples' weights.
[[nodiscard]] std::optional<InputEdges> regenerated_graph_slice(const GraphSpec& spec, int rank, int ranks);

// "the kronecker graph (scale 20, edgefactor 16", or "the gnm graph (3000 vertices", for
// progress lines (the caller closes the parenthesis after what it adds).
[[nodiscard]] std::string describe_graph_open(const GraphSpec& spec);

// Bits that hold every id below n (at least 1).
[[nodiscard]] int vertex_bits_for(std::uint64_t num_vertices);

}  // namespace zbfs
