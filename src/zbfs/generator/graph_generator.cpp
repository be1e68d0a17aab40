#include "zbfs/generator/graph_generator.hpp"

#include <bit>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/generator/counter_rng.hpp"
#include "zbfs/generator/edge_weights.hpp"
#include "zbfs/generator/geometric_graph.hpp"
#include "zbfs/generator/kronecker.hpp"

namespace zbfs {
namespace {

constexpr std::uint64_t kMaxVertices = std::uint64_t{1} << 42;  // as --scale 42

double rgg_radius(const GraphSpec& s) {
  if (s.radius > 0) return s.radius;
  const double degree = s.degree > 0 ? s.degree : 2.0 * static_cast<double>(s.edgefactor);
  return radius_for_degree(graph_vertices(s), degree);
}

KroneckerParams kronecker_params(const GraphSpec& s) {
  KroneckerParams p{s.scale, s.edgefactor, s.seed};
  if (s.kind == GraphKind::kRmat) {
    p.a = s.a;
    p.b = s.b;
    p.c = s.c;
  }
  return p;
}

// Tuple `index` of G(n, m): two ends uniform over the n vertices.
Edge gnm_edge(const CounterRng& rng, std::uint64_t n, std::uint64_t index) {
  return {uniform_below(rng(2 * index), n), uniform_below(rng(2 * index + 1), n)};
}

}  // namespace

std::optional<GraphKind> parse_graph_kind(std::string_view name) {
  if (name == "kronecker") return GraphKind::kKronecker;
  if (name == "rmat") return GraphKind::kRmat;
  if (name == "gnm") return GraphKind::kGnm;
  if (name == "rgg") return GraphKind::kRgg;
  return std::nullopt;
}

const char* to_string(GraphKind kind) {
  switch (kind) {
    case GraphKind::kKronecker: return "kronecker";
    case GraphKind::kRmat: return "rmat";
    case GraphKind::kGnm: return "gnm";
    case GraphKind::kRgg: return "rgg";
  }
  return "kronecker";
}

int vertex_bits_for(std::uint64_t num_vertices) {
  return num_vertices <= 2 ? 1 : static_cast<int>(std::bit_width(num_vertices - 1));
}

void validate_graph_spec(const GraphSpec& s) {
  if (s.scale < 1 || s.scale > 42) throw_usage_error("--scale must be in [1, 42], got " + std::to_string(s.scale));
  if (s.edgefactor < 1 || s.edgefactor > 1024)
    throw_usage_error("--edgefactor must be in [1, 1024], got " + std::to_string(s.edgefactor));
  const bool sized = s.kind == GraphKind::kGnm || s.kind == GraphKind::kRgg;
  if (s.vertices != 0 && !sized) throw_usage_error("--vertices applies to --graph gnm and rgg (others have 2^scale)");
  if (s.vertices != 0 && (s.vertices < 2 || s.vertices > kMaxVertices))
    throw_usage_error("--vertices must be in [2, 2^42], got " + std::to_string(s.vertices));
  if (s.edges != 0 && s.kind != GraphKind::kGnm) throw_usage_error("--edges applies to --graph gnm");
  if (s.edges > (std::uint64_t{1} << 50)) throw_usage_error("--edges must be at most 2^50");
  if (s.kind == GraphKind::kRmat) {
    const bool positive = s.a > 0 && s.b > 0 && s.c > 0;
    if (!positive || !(s.a + s.b + s.c < 1) || !std::isfinite(s.a + s.b + s.c)) {
      throw_usage_error("--rmat a,b,c must be positive with a + b + c < 1 (d = 1 - a - b - c)");
    }
  }
  if (s.kind != GraphKind::kRgg && (s.radius != 0 || s.degree != 0))
    throw_usage_error(std::string(s.radius != 0 ? "--radius" : "--degree") + " applies to --graph rgg");
  if (s.kind == GraphKind::kRgg) {
    if (s.radius != 0 && s.degree != 0) throw_usage_error("give --radius or --degree, not both");
    if (s.radius < 0 || s.radius > std::sqrt(2.0) || !std::isfinite(s.radius))
      throw_usage_error("--radius must be in (0, 1.414]");
    if (s.degree < 0 || !std::isfinite(s.degree)) throw_usage_error("--degree must be a positive number");
    if (rgg_radius(s) > std::sqrt(2.0)) throw_usage_error("--degree is too large for the number of vertices");
  }
}

std::uint64_t graph_vertices(const GraphSpec& s) {
  if ((s.kind == GraphKind::kGnm || s.kind == GraphKind::kRgg) && s.vertices != 0) return s.vertices;
  return std::uint64_t{1} << s.scale;
}

std::uint64_t expected_graph_edges(const GraphSpec& s) {
  const std::uint64_t n = graph_vertices(s);
  switch (s.kind) {
    case GraphKind::kKronecker:
    case GraphKind::kRmat: return s.edgefactor << s.scale;
    case GraphKind::kGnm: return s.edges != 0 ? s.edges : s.edgefactor * n;
    case GraphKind::kRgg: {
      const double r = rgg_radius(s);
      return static_cast<std::uint64_t>(std::ceil(static_cast<double>(n) * static_cast<double>(n - 1) / 2.0 *
                                                  std::min(1.0, std::numbers::pi * r * r)));
    }
  }
  return 0;
}

int graph_vertex_bits(const GraphSpec& s) {
  if (s.kind == GraphKind::kKronecker || s.kind == GraphKind::kRmat) return s.scale;
  return vertex_bits_for(graph_vertices(s));
}

PackedEdgeList generate_graph_slice(const GraphSpec& s, int rank, int ranks) {
  switch (s.kind) {
    case GraphKind::kKronecker:
    case GraphKind::kRmat: {
      const KroneckerGenerator generator(kronecker_params(s));
      const EdgeSliceRange range = edge_slice_of(generator.num_edges(), rank, ranks);
      return generate_edge_slice(generator, range.first, range.count);
    }
    case GraphKind::kGnm: {
      const std::uint64_t n = graph_vertices(s);
      const EdgeSliceRange range = edge_slice_of(expected_graph_edges(s), rank, ranks);
      const CounterRng rng(s.seed, RandomStream::kUniformGraph);
      PackedEdgeList list(graph_vertex_bits(s), range.count);
      const auto count = static_cast<std::int64_t>(range.count);
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < count; ++i) {
        list.set(static_cast<std::uint64_t>(i), gnm_edge(rng, n, range.first + static_cast<std::uint64_t>(i)));
      }
      return list;
    }
    case GraphKind::kRgg: {
      const std::uint64_t n = graph_vertices(s);
      const EdgeSliceRange range = edge_slice_of(n, rank, ranks);
      const GeometricGraphParams params{n, rgg_radius(s), s.seed};
      return pack_edges(geometric_graph_edges(params, range.first, range.first + range.count), graph_vertex_bits(s));
    }
  }
  return {};
}

LargeArray<float> generate_weight_slice(const GraphSpec& s, int rank, int ranks, const PackedEdgeList& slice) {
  const TupleWeights weight(s.seed);
  const std::uint64_t n = graph_vertices(s);
  LargeArray<float> weights(slice.size());
  const auto count = static_cast<std::int64_t>(slice.size());
  switch (s.kind) {
    case GraphKind::kKronecker:
    case GraphKind::kRmat: {
      const KroneckerGenerator generator(kronecker_params(s));
      const std::uint64_t first = edge_slice_of(generator.num_edges(), rank, ranks).first;
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < count; ++i) {
        weights[static_cast<std::uint64_t>(i)] = weight(generator.draw_at(first + static_cast<std::uint64_t>(i)));
      }
      break;
    }
    case GraphKind::kGnm: {
      const std::uint64_t first = edge_slice_of(expected_graph_edges(s), rank, ranks).first;
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < count; ++i) {
        weights[static_cast<std::uint64_t>(i)] = weight(first + static_cast<std::uint64_t>(i));
      }
      break;
    }
    case GraphKind::kRgg: {
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < count; ++i) {
        const Edge e = slice.get(static_cast<std::uint64_t>(i));
        weights[static_cast<std::uint64_t>(i)] = weight(TupleWeights::pair_key(e.u, e.v, n));
      }
      break;
    }
  }
  return weights;
}

std::string describe_graph_open(const GraphSpec& s) {
  return std::string("the ") + to_string(s.kind) + " graph (" +
         (s.kind == GraphKind::kKronecker || s.kind == GraphKind::kRmat
              ? "scale " + std::to_string(s.scale) + ", edgefactor " + std::to_string(s.edgefactor)
              : std::to_string(graph_vertices(s)) + " vertices");
}

std::optional<InputEdges> regenerated_graph_slice(const GraphSpec& s, int rank, int ranks) {
  const std::uint64_t n = graph_vertices(s);
  switch (s.kind) {
    case GraphKind::kKronecker:
    case GraphKind::kRmat: {
      const KroneckerGenerator generator(kronecker_params(s));
      const EdgeSliceRange range = edge_slice_of(generator.num_edges(), rank, ranks);
      InputEdges share(n, range.count, [generator, range](std::uint64_t first, std::span<Edge> out) {
        generator.generate_draws(range.first + first, out);
      });
      // The share lists draws in order, so a tuple's key is its draw.
      share.attach_weights([weight = TupleWeights(s.seed), range](std::uint64_t first, std::span<float> out) {
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = weight(range.first + first + i);
      });
      return share;
    }
    case GraphKind::kGnm: {
      const EdgeSliceRange range = edge_slice_of(expected_graph_edges(s), rank, ranks);
      const CounterRng rng(s.seed, RandomStream::kUniformGraph);
      InputEdges share(n, range.count, [rng, n, range](std::uint64_t first, std::span<Edge> out) {
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = gnm_edge(rng, n, range.first + first + i);
      });
      share.attach_weights([weight = TupleWeights(s.seed), range](std::uint64_t first, std::span<float> out) {
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = weight(range.first + first + i);
      });
      return share;
    }
    case GraphKind::kRgg: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace zbfs
