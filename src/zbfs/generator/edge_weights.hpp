// Graph500 kernel 3's edge weights: one per input tuple, uniform in [0, 1) as the
// specification draws them. A weight is a pure function of the seed and the tuple's key,
// so any slice of the weighted list can be produced alone, the same for every rank and
// thread count. The key is what identifies a tuple in its generator: the draw for
// Kronecker and R-MAT (so the weight travels with the tuple through the shuffle, and a
// validator that reads the draws in order gets theirs without it), the position for
// G(n, m), the pair of ends for rgg (whose tuples are distinct pairs).
#pragma once

#include <algorithm>
#include <cstdint>

#include "zbfs/generator/counter_rng.hpp"

namespace zbfs {

class TupleWeights {
 public:
  explicit TupleWeights(std::uint64_t seed) : rng_(seed, RandomStream::kEdgeWeights) {}

  // 24 random bits scaled into [0, 1): every weight is a float exactly (a multiple of
  // 2^-24), so a weight written and read back as text or binary stays the same.
  [[nodiscard]] float operator()(std::uint64_t key) const { return static_cast<float>(rng_(key) >> 40) * 0x1p-24F; }

  // The key of an rgg tuple: its ends, in either order.
  [[nodiscard]] static std::uint64_t pair_key(std::uint64_t u, std::uint64_t v, std::uint64_t num_vertices) {
    return std::min(u, v) * num_vertices + std::max(u, v);
  }

 private:
  CounterRng rng_;
};

}  // namespace zbfs
