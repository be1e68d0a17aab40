// The generator families of --graph: slices are independent of the rank count, ids stay
// below n, parameters are checked, and the random geometric graph equals the brute-force
// graph of its points.
#include "zbfs/generator/graph_generator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/generator/geometric_graph.hpp"

namespace zbfs {
namespace {

std::vector<Edge> edges_over_ranks(const GraphSpec& spec, int ranks) {
  std::vector<Edge> all;
  for (int r = 0; r < ranks; ++r) {
    const PackedEdgeList slice = generate_graph_slice(spec, r, ranks);
    for (std::uint64_t i = 0; i < slice.size(); ++i) all.push_back(slice.get(i));
  }
  return all;
}

std::vector<Edge> sorted(std::vector<Edge> edges) {
  std::sort(edges.begin(), edges.end(),
            [](const Edge& a, const Edge& b) { return a.u != b.u ? a.u < b.u : a.v < b.v; });
  return edges;
}

TEST(GraphGenerator, EveryFamilyIsTheSameGraphForAnyRankCount) {
  GraphSpec base;
  base.scale = 9;
  base.edgefactor = 8;
  base.seed = 5;
  for (const GraphKind kind : {GraphKind::kKronecker, GraphKind::kRmat, GraphKind::kGnm, GraphKind::kRgg}) {
    GraphSpec spec = base;
    spec.kind = kind;
    if (kind == GraphKind::kGnm || kind == GraphKind::kRgg) spec.vertices = 1000;
    const std::vector<Edge> one = edges_over_ranks(spec, 1);
    EXPECT_FALSE(one.empty()) << to_string(kind);
    for (const Edge& e : one) {
      ASSERT_LT(e.u, graph_vertices(spec)) << to_string(kind);
      ASSERT_LT(e.v, graph_vertices(spec)) << to_string(kind);
    }
    if (kind != GraphKind::kRgg) {
      EXPECT_EQ(one.size(), expected_graph_edges(spec)) << to_string(kind);
    }
    // Same edges (as a multiset; rgg's are generated per vertex range) on 3 and 7 ranks.
    for (const int ranks : {3, 7}) EXPECT_EQ(sorted(edges_over_ranks(spec, ranks)), sorted(one)) << to_string(kind);
  }
}

TEST(GraphGenerator, RmatDiffersFromKroneckerByItsInitiatorOnly) {
  GraphSpec kronecker;
  kronecker.scale = 8;
  GraphSpec rmat = kronecker;
  rmat.kind = GraphKind::kRmat;
  rmat.a = 0.57;
  rmat.b = 0.19;
  rmat.c = 0.19;
  EXPECT_EQ(edges_over_ranks(rmat, 1), edges_over_ranks(kronecker, 1));
  rmat.a = 0.45;
  rmat.b = 0.15;
  rmat.c = 0.15;
  EXPECT_NE(edges_over_ranks(rmat, 1), edges_over_ranks(kronecker, 1));
}

TEST(GraphGenerator, ParametersAreChecked) {
  const auto fails = [](GraphSpec spec, const std::string& mention) {
    try {
      validate_graph_spec(spec);
      return std::string("no error");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage);
      return std::string(e.what()).find(mention) != std::string::npos ? std::string("ok") : std::string(e.what());
    }
  };
  GraphSpec spec;
  spec.vertices = 100;
  EXPECT_EQ(fails(spec, "--vertices applies"), "ok");
  spec = GraphSpec{};
  spec.kind = GraphKind::kRmat;
  spec.a = 0.5;
  spec.b = 0.3;
  spec.c = 0.3;
  EXPECT_EQ(fails(spec, "a + b + c < 1"), "ok");
  spec = GraphSpec{};
  spec.kind = GraphKind::kGnm;
  spec.radius = 0.1;
  EXPECT_EQ(fails(spec, "--radius applies"), "ok");
  spec.kind = GraphKind::kRgg;
  spec.degree = 4;
  EXPECT_EQ(fails(spec, "not both"), "ok");
  spec.degree = 0;
  spec.radius = 2;
  EXPECT_EQ(fails(spec, "--radius must be"), "ok");
  spec = GraphSpec{};
  spec.kind = GraphKind::kGnm;
  spec.vertices = 1;
  EXPECT_EQ(fails(spec, "--vertices must be"), "ok");
  EXPECT_EQ(vertex_bits_for(2), 1);
  EXPECT_EQ(vertex_bits_for(1000), 10);
  EXPECT_EQ(vertex_bits_for(1024), 10);
  EXPECT_EQ(vertex_bits_for(1025), 11);
}

TEST(GeometricGraph, EqualsTheBruteForceGraphOfItsPoints) {
  for (const double radius : {0.03, 0.08, 0.3, 1.2}) {
    const GeometricGraphParams params{700, radius, 11};
    const std::vector<Point> points = geometric_graph_points(params);
    std::vector<Edge> brute;
    for (std::uint64_t u = 0; u < points.size(); ++u) {
      ASSERT_GE(points[u].x, 0.0);
      ASSERT_LT(points[u].x, 1.0);
      ASSERT_GE(points[u].y, 0.0);
      ASSERT_LT(points[u].y, 1.0);
      for (std::uint64_t v = u + 1; v < points.size(); ++v) {
        const double dx = points[u].x - points[v].x;
        const double dy = points[u].y - points[v].y;
        if (dx * dx + dy * dy < radius * radius) brute.push_back({u, v});
      }
    }
    std::vector<Edge> generated;
    for (const auto& [first, last] :
         {std::pair<std::uint64_t, std::uint64_t>{0, 123}, {123, 124}, {124, 650}, {650, 700}}) {
      const std::vector<Edge> part = geometric_graph_edges(params, first, last);
      for (const Edge& e : part) {
        ASSERT_GE(e.u, first);
        ASSERT_LT(e.u, last);
      }
      generated.insert(generated.end(), part.begin(), part.end());
    }
    EXPECT_EQ(sorted(generated), sorted(brute)) << "radius " << radius;
  }
}

TEST(GeometricGraph, AverageDegreeFollowsTheTarget) {
  const std::uint64_t n = 40000;
  const double degree = 12;
  const GeometricGraphParams params{n, radius_for_degree(n, degree), 3};
  const std::vector<Edge> edges = geometric_graph_edges(params, 0, n);
  const double measured = 2.0 * static_cast<double>(edges.size()) / static_cast<double>(n);
  // Points near the border have fewer neighbours: a few percent below the target.
  EXPECT_GT(measured, degree * 0.9);
  EXPECT_LT(measured, degree * 1.02);
  // Ids follow the cells row by row: most edges join nearby ids (geometric locality).
  std::uint64_t near = 0;
  for (const Edge& e : edges) near += e.v - e.u < n / 20 ? 1 : 0;
  EXPECT_GT(static_cast<double>(near), 0.95 * static_cast<double>(edges.size()));
}

}  // namespace
}  // namespace zbfs
