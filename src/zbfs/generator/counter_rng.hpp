// Counter-based random numbers: value(i) of a stream is a pure function of (seed, stream,
// i), so any slice of a random sequence can be produced independently of the others and
// results never depend on thread or rank counts. The mixing function is SplitMix64's
// finaliser applied to key + i * golden ratio, i.e. the i-th output of a SplitMix64
// generator seeded with the stream key.
#pragma once

#include <cstdint>

namespace zbfs {

constexpr std::uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ULL;

constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Independent streams of one seed are told apart by a small stream id.
enum class RandomStream : std::uint64_t {
  kKroneckerBits = 1,
  kVertexPermutation = 2,
  kEdgePermutation = 3,
  kSearchRoots = 4,
  kSyntheticGraphs = 5,  // bench/route_patterns' G(n, m) and geometric graphs
  kUniformGraph = 6,     // --graph gnm
  kGeometricCells = 7,   // --graph rgg: points per cell
  kGeometricPoints = 8,  // --graph rgg: positions within a cell
  kEdgeWeights = 9,      // SSSP: one weight per input tuple (edge_weights.hpp)
};

class CounterRng {
 public:
  constexpr CounterRng(std::uint64_t seed, RandomStream stream)
      : key_(mix64(mix64(seed) ^ (static_cast<std::uint64_t>(stream) * kGoldenGamma))) {}
  [[nodiscard]] constexpr std::uint64_t operator()(std::uint64_t counter) const {
    return mix64(key_ + (counter + 1) * kGoldenGamma);
  }
  [[nodiscard]] constexpr std::uint64_t key() const { return key_; }

 private:
  std::uint64_t key_;
};

// Uniform integer in [0, bound) from 64 random bits (multiply-shift; bias < bound / 2^64).
constexpr std::uint64_t uniform_below(std::uint64_t random_bits, std::uint64_t bound) {
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(random_bits) * bound) >> 64);
}

}  // namespace zbfs
