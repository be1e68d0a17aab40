#include "zbfs/generator/kronecker.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

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

void KroneckerGenerator::generate(std::uint64_t first, std::span<Edge> out) const { produce(first, out, true); }

void KroneckerGenerator::generate_draws(std::uint64_t first, std::span<Edge> out) const { produce(first, out, false); }

void KroneckerGenerator::produce(std::uint64_t first, std::span<Edge> out, bool shuffled) const {
  // Stage by stage over blocks of positions (shuffle, draw, relabel), each stage a loop
  // the compiler vectorises: the same edges as edge(), several times faster.
  constexpr std::size_t kBlock = 256;
  std::array<std::uint64_t, kBlock> draw{};
  std::array<std::uint64_t, kBlock> u{};
  std::array<std::uint64_t, kBlock> v{};
  std::array<std::uint64_t, kBlock> scratch{};
  for (std::size_t done = 0; done < out.size(); done += kBlock) {
    const std::size_t count = std::min(kBlock, out.size() - done);
    for (std::size_t i = 0; i < count; ++i) draw[i] = first + done + i;
    if (shuffled) edge_shuffle_.apply(std::span(draw.data(), count), scratch);
    sample_block(std::span(draw.data(), count), u.data(), v.data());
    vertex_relabel_.apply(std::span(u.data(), count), scratch);
    vertex_relabel_.apply(std::span(v.data(), count), scratch);
    for (std::size_t i = 0; i < count; ++i) out[done + i] = Edge{u[i], v[i]};
  }
}

void KroneckerGenerator::sample_block(std::span<const std::uint64_t> samples, std::uint64_t* u,
                                      std::uint64_t* v) const {
  // kronecker_sample over a block, bit by bit across the block instead of sample by
  // sample, so that each bit's draws form one vectorisable loop.
  const std::size_t count = samples.size();
  const auto scale = static_cast<std::uint64_t>(params_.scale);
  const std::uint32_t threshold_ab = threshold_ab_;
  const std::uint32_t threshold_c_norm = threshold_c_norm_;
  const std::uint32_t threshold_a_norm = threshold_a_norm_;
  const CounterRng bits = bits_;
  for (std::size_t i = 0; i < count; ++i) {
    u[i] = 0;
    v[i] = 0;
  }
  for (std::uint64_t bit = 0; bit < scale; ++bit) {
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t r = bits(samples[i] * scale + bit);
      const auto r_row = static_cast<std::uint32_t>(r >> 32);
      const auto r_col = static_cast<std::uint32_t>(r);
      const std::uint64_t row_bit = r_row >= threshold_ab ? 1 : 0;
      const std::uint64_t col_bit = r_col >= (row_bit != 0 ? threshold_c_norm : threshold_a_norm) ? 1 : 0;
      u[i] |= row_bit << bit;
      v[i] |= col_bit << bit;
    }
  }
}

PackedEdgeList generate_edge_list(const KroneckerGenerator& generator) {
  return generate_edge_slice(generator, 0, generator.num_edges());
}

PackedEdgeList generate_edge_slice(const KroneckerGenerator& generator, std::uint64_t first_edge,
                                   std::uint64_t num_edges) {
  PackedEdgeList list(generator.params().scale, num_edges);
  constexpr std::uint64_t kBlock = 1 << 14;
  constexpr std::uint64_t kChunk = 1024;
  const auto num_blocks = static_cast<std::int64_t>((num_edges + kBlock - 1) / kBlock);
#pragma omp parallel
  {
    std::vector<Edge> chunk(kChunk);
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t block = 0; block < num_blocks; ++block) {
      const std::uint64_t first = static_cast<std::uint64_t>(block) * kBlock;
      const std::uint64_t last = std::min(num_edges, first + kBlock);
      for (std::uint64_t at = first; at < last; at += kChunk) {
        const std::uint64_t count = std::min(kChunk, last - at);
        generator.generate(first_edge + at, std::span(chunk.data(), count));
        for (std::uint64_t i = 0; i < count; ++i) list.set(at + i, chunk[i]);
      }
    }
  }
  return list;
}

}  // namespace zbfs
