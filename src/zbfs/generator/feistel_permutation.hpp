// A keyed pseudorandom permutation of [0, n) that needs no memory: a 4-round balanced
// Feistel network over the smallest even number of bits covering n, with cycle walking
// for values that land outside [0, n). Used for the Graph500 relabelling of vertices and
// the shuffle of the edge list, so that every edge can be produced on its own.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "zbfs/generator/counter_rng.hpp"

namespace zbfs {

class FeistelPermutation {
 public:
  FeistelPermutation(std::uint64_t domain_size, std::uint64_t key) : domain_size_(domain_size) {
    unsigned bits = domain_size <= 1 ? 2U : static_cast<unsigned>(std::bit_width(domain_size - 1));
    bits = (bits + 1U) & ~1U;
    if (bits < 2) bits = 2;
    half_bits_ = bits / 2;
    half_mask_ = (std::uint64_t{1} << half_bits_) - 1;
    for (std::size_t r = 0; r < round_keys_.size(); ++r) round_keys_[r] = mix64(key + (r + 1) * kGoldenGamma);
  }

  [[nodiscard]] std::uint64_t domain_size() const { return domain_size_; }

  [[nodiscard]] std::uint64_t operator()(std::uint64_t x) const {
    if (domain_size_ <= 1) return x;
    do {
      x = encrypt(x);
    } while (x >= domain_size_);
    return x;
  }

 private:
  [[nodiscard]] std::uint64_t encrypt(std::uint64_t x) const {
    std::uint64_t left = x >> half_bits_;
    std::uint64_t right = x & half_mask_;
    for (const std::uint64_t round_key : round_keys_) {
      const std::uint64_t next = left ^ (mix64(right ^ round_key) & half_mask_);
      left = right;
      right = next;
    }
    return (left << half_bits_) | right;
  }

  std::uint64_t domain_size_;
  unsigned half_bits_ = 1;
  std::uint64_t half_mask_ = 1;
  std::array<std::uint64_t, 4> round_keys_{};
};

}  // namespace zbfs
