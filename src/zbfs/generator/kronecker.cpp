#include "zbfs/generator/kronecker.hpp"

#include <cmath>
#include <string>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

std::uint32_t probability_threshold(double p) {
  const double scaled = std::round(p * 4294967296.0);
  if (scaled <= 0.0) return 0;
  if (scaled >= 4294967295.0) return 0xffffffffU;
  return static_cast<std::uint32_t>(scaled);
}

// Checked before any member is derived from the parameters (shifts by scale).
const KroneckerParams& validated(const KroneckerParams& params) {
  if (params.scale < 1 || params.scale > 42)
    throw_usage_error("scale must be in [1, 42], got " + std::to_string(params.scale));
  if (params.edgefactor < 1 || params.edgefactor > 1024) {
    throw_usage_error("edgefactor must be in [1, 1024], got " + std::to_string(params.edgefactor));
  }
  const double d = 1.0 - params.a - params.b - params.c;
  if (params.a <= 0 || params.b < 0 || params.c < 0 || d < -1e-12 || params.a + params.b >= 1.0) {
    throw_usage_error("Kronecker initiator probabilities must be non-negative, sum to 1, and A + B < 1");
  }
  return params;
}

}  // namespace

KroneckerGenerator::KroneckerGenerator(const KroneckerParams& params)
    : params_(validated(params)),
      num_edges_(params_.edgefactor << params_.scale),
      bits_(params_.seed, RandomStream::kKroneckerBits),
      vertex_relabel_(std::uint64_t{1} << params_.scale,
                      CounterRng(params_.seed, RandomStream::kVertexPermutation).key()),
      edge_shuffle_(num_edges_, CounterRng(params_.seed, RandomStream::kEdgePermutation).key()) {
  const double ab = params.a + params.b;
  threshold_ab_ = probability_threshold(ab);
  threshold_c_norm_ = probability_threshold(params.c / (1.0 - ab));
  threshold_a_norm_ = probability_threshold(params.a / ab);
}

void KroneckerGenerator::generate(std::uint64_t first, std::span<Edge> out) const {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = edge(first + i);
}

PackedEdgeList generate_edge_list(const KroneckerGenerator& generator) {
  return generate_edge_slice(generator, 0, generator.num_edges());
}

PackedEdgeList generate_edge_slice(const KroneckerGenerator& generator, std::uint64_t first_edge,
                                   std::uint64_t num_edges) {
  PackedEdgeList list(generator.params().scale, num_edges);
  constexpr std::uint64_t kBlock = 1 << 14;
  const auto num_blocks = static_cast<std::int64_t>((num_edges + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t block = 0; block < num_blocks; ++block) {
    const std::uint64_t first = static_cast<std::uint64_t>(block) * kBlock;
    const std::uint64_t last = std::min(num_edges, first + kBlock);
    for (std::uint64_t i = first; i < last; ++i) list.set(i, generator.edge(first_edge + i));
  }
  return list;
}

}  // namespace zbfs
