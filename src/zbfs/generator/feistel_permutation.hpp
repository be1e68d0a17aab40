// A keyed pseudorandom permutation of [0, n) that needs no memory: a 4-round balanced
// Feistel network over the smallest even number of bits covering n, with cycle walking
// for values that land outside [0, n). Used for the Graph500 relabelling of vertices and
// the shuffle of the edge list, so that every edge can be produced on its own.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

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

  // The permutation of every value of `values`, in place: the same results as
  // operator(), computed round by round over the whole span so that the compiler can
  // vectorise the rounds (the generator's hot loop). Values that land outside the domain
  // are collected and walked again together. `scratch` holds at least values.size()
  // entries.
  void apply(std::span<std::uint64_t> values, std::span<std::uint64_t> scratch) const {
    if (domain_size_ <= 1) return;
    encrypt_all(values);
    std::size_t outside = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      scratch[outside] = i;
      outside += values[i] >= domain_size_ ? 1 : 0;
    }
    // A value outside is encrypted again in a compacted batch until it lands inside;
    // the batch shrinks geometrically (at least a quarter of the values land inside).
    std::uint64_t batch[kWalkBatch];
    while (outside > 0) {
      std::size_t kept = 0;
      for (std::size_t first = 0; first < outside; first += kWalkBatch) {
        const std::size_t count = std::min(kWalkBatch, outside - first);
        for (std::size_t j = 0; j < count; ++j) batch[j] = values[scratch[first + j]];
        encrypt_all(std::span(batch, count));
        for (std::size_t j = 0; j < count; ++j) {
          const std::uint64_t index = scratch[first + j];
          values[index] = batch[j];
          scratch[kept] = index;
          kept += batch[j] >= domain_size_ ? 1 : 0;
        }
      }
      outside = kept;
    }
  }

 private:
  static constexpr std::size_t kWalkBatch = 64;

  // One loop over the span around the inlined rounds, which the compiler vectorises.
  void encrypt_all(std::span<std::uint64_t> values) const {
    for (std::uint64_t& x : values) x = encrypt(x);
  }

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
