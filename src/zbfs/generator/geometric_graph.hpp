// Random geometric graphs in the unit square, generated in parallel without any rank
// holding all points. The square is cut into g x g cells of side >= the radius, numbered
// row by row. How many of the n points fall into each cell is drawn by recursive binomial
// splitting of the cell range (the number in the left half of a range is binomial in the
// range's count), each draw keyed by its range, so any rank computes the count and first
// vertex id of any cell on its own in O(log g) draws. Vertex ids go cell by cell; a point's
// position within its cell is a hash of its id. Rank r generates the edges (u, v), u < v,
// whose u lies in its share of the ids, from u's cell and the 8 around it: points are
// exactly n independent uniform points, and the edge set does not depend on the rank count.
#pragma once

#include <cstdint>
#include <vector>

#include "zbfs/core/edge.hpp"

namespace zbfs {

struct GeometricGraphParams {
  std::uint64_t vertices = 0;
  double radius = 0;  // in (0, sqrt(2)]
  std::uint64_t seed = 1;
};

// The radius at which n uniform points have `degree` neighbours on average (boundary
// effects ignored): n * pi * r^2 = degree.
[[nodiscard]] double radius_for_degree(std::uint64_t vertices, double degree);

// The edges (u, v), u < v, with u in [first_vertex, last_vertex).
[[nodiscard]] std::vector<Edge> geometric_graph_edges(const GeometricGraphParams& params, std::uint64_t first_vertex,
                                                      std::uint64_t last_vertex);

// Point of vertex v (for tests): coordinates in [0, 1).
struct Point {
  double x;
  double y;
};
[[nodiscard]] std::vector<Point> geometric_graph_points(const GeometricGraphParams& params);

}  // namespace zbfs
