// The Graph500 Kronecker generator. Edge tuple number s is drawn bit by bit from the 2x2
// initiator (A, B, C, D) exactly as the specification's reference code does; vertex
// labels are then relabelled by a random permutation and the edge list is shuffled by a
// random permutation of positions. Both permutations and all draws are counter-based, so
// edge(i) for any position i costs O(scale) and any slice can be generated alone: the
// same edge list results whatever the number of threads or ranks.
#pragma once

#include <cstdint>
#include <span>

#include "zbfs/core/edge.hpp"
#include "zbfs/core/packed_edge_list.hpp"
#include "zbfs/generator/counter_rng.hpp"
#include "zbfs/generator/feistel_permutation.hpp"

namespace zbfs {

struct KroneckerParams {
  int scale = 16;
  std::uint64_t edgefactor = 16;
  std::uint64_t seed = 1;
  double a = 0.57;
  double b = 0.19;
  double c = 0.19;  // d = 1 - a - b - c
};

class KroneckerGenerator {
 public:
  explicit KroneckerGenerator(const KroneckerParams& params);

  [[nodiscard]] const KroneckerParams& params() const { return params_; }
  [[nodiscard]] std::uint64_t num_vertices() const { return std::uint64_t{1} << params_.scale; }
  [[nodiscard]] std::uint64_t num_edges() const { return num_edges_; }

  // Edge at position `position` of the final (relabelled, shuffled) edge list.
  [[nodiscard]] Edge edge(std::uint64_t position) const {
    const Edge raw = kronecker_sample(draw_at(position));
    return {relabel(raw.u), relabel(raw.v)};
  }
  // Which Kronecker draw the shuffle puts at `position`, and the label vertex v gets.
  [[nodiscard]] std::uint64_t draw_at(std::uint64_t position) const { return edge_shuffle_(position); }
  [[nodiscard]] std::uint64_t relabel(std::uint64_t v) const { return vertex_relabel_(v); }
  // Positions [first, first + out.size()): the same edges as edge(), produced block by
  // block in vectorised stages (the way to generate many).
  void generate(std::uint64_t first, std::span<Edge> out) const;
  // Draws [first, first + out.size()) relabelled but not shuffled: the edge at position p
  // is draw draw_at(p), so draws [0, num_edges()) are the whole list in another order,
  // without the shuffle's cost (for a validator, to which the order does not matter).
  void generate_draws(std::uint64_t first, std::span<Edge> out) const;

  // The s-th Kronecker draw before relabelling and shuffling (exposed for tests).
  [[nodiscard]] Edge kronecker_sample(std::uint64_t sample) const {
    std::uint64_t u = 0;
    std::uint64_t v = 0;
    const auto scale = static_cast<std::uint64_t>(params_.scale);
    for (std::uint64_t bit = 0; bit < scale; ++bit) {
      const std::uint64_t r = bits_(sample * scale + bit);
      const auto r_row = static_cast<std::uint32_t>(r >> 32);
      const auto r_col = static_cast<std::uint32_t>(r);
      const std::uint64_t row_bit = r_row >= threshold_ab_ ? 1 : 0;
      const std::uint64_t col_bit = r_col >= (row_bit != 0 ? threshold_c_norm_ : threshold_a_norm_) ? 1 : 0;
      u |= row_bit << bit;
      v |= col_bit << bit;
    }
    return {u, v};
  }

 private:
  // generate (shuffled) or generate_draws.
  void produce(std::uint64_t first, std::span<Edge> out, bool shuffled) const;
  // kronecker_sample of every sample of `samples`, into u and v (samples.size() each).
  void sample_block(std::span<const std::uint64_t> samples, std::uint64_t* u, std::uint64_t* v) const;

  KroneckerParams params_;
  std::uint64_t num_edges_;
  CounterRng bits_;
  FeistelPermutation vertex_relabel_;
  FeistelPermutation edge_shuffle_;
  // Thresholds on 32-bit uniforms: a bit is 1 when the draw is >= threshold, i.e. with
  // probability 1 - p, as in the specification's "rand > p".
  std::uint32_t threshold_ab_;
  std::uint32_t threshold_c_norm_;
  std::uint32_t threshold_a_norm_;
};

// Generates the whole edge list of `generator` in parallel (OpenMP), block by block.
PackedEdgeList generate_edge_list(const KroneckerGenerator& generator);

// Edges [first_edge, first_edge + num_edges) of the same list: one rank's slice.
PackedEdgeList generate_edge_slice(const KroneckerGenerator& generator, std::uint64_t first_edge,
                                   std::uint64_t num_edges);

}  // namespace zbfs
