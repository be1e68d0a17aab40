// Residuals: what the integer codecs actually store. A sorted set x_0 < x_1 < ... is
// stored as r_0 = x_0 - base and r_k = x_k - x_{k-1} - 1 (gaps minus one, so dense runs
// are zeros); any other sequence as r_k = x_k - base, with base its minimum. Encoders
// compute residuals a chunk at a time into a small buffer that stays in L1, so there is
// no conversion pass over the message; decoders rebuild ids from residual chunks and
// report, rather than wrap, an id that would overflow 64 bits.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "zbfs/codec/frame.hpp"

namespace zbfs::codec_detail {

// Residuals of ids[begin, begin + n) into r[0, n).
inline void compute_residuals(const std::uint64_t* ids, std::size_t begin, std::size_t n, IdOrder order,
                              std::uint64_t base, std::uint64_t* r) {
  if (n == 0) return;
  if (order == IdOrder::kSequence) {
    for (std::size_t k = 0; k < n; ++k) r[k] = ids[begin + k] - base;
    return;
  }
  const std::uint64_t* x = ids + begin;
  r[0] = begin == 0 ? x[0] - base : x[0] - x[-1] - 1;
  for (std::size_t k = 1; k < n; ++k) r[k] = x[k] - x[k - 1] - 1;
}

struct IdRange {
  std::uint64_t lowest;
  std::uint64_t highest;
};

// The lowest and highest of ids[0, n), n > 0. Unsigned 64-bit minimum and maximum are
// missing from SSE/AVX2, so values are biased by 2^63 and compared signed, in vectors of
// two with two accumulators each (to break the dependency chains).
inline IdRange range_of_ids(const std::uint64_t* ids, std::size_t n) {
  using Unsigned = std::uint64_t __attribute__((vector_size(16)));
  using Signed = std::int64_t __attribute__((vector_size(16)));
  constexpr std::uint64_t kBias = std::uint64_t{1} << 63;
  std::uint64_t lowest = ids[0];
  std::uint64_t highest = ids[0];
  const std::size_t vectors_end = n - n % 4;
  if (vectors_end != 0) {
    const Unsigned bias = {kBias, kBias};
    const auto biased = [&](std::size_t at) {
      Unsigned v;
      std::memcpy(&v, ids + at, sizeof v);
      return reinterpret_cast<Signed>(v ^ bias);
    };
    Signed low[2] = {biased(0), biased(2)};
    Signed high[2] = {low[0], low[1]};
    for (std::size_t k = 4; k < vectors_end; k += 4) {
      for (std::size_t j = 0; j < 2; ++j) {
        const Signed v = biased(k + 2 * j);
        low[j] = v < low[j] ? v : low[j];
        high[j] = v > high[j] ? v : high[j];
      }
    }
    const Signed l = low[0] < low[1] ? low[0] : low[1];
    const Signed h = high[0] > high[1] ? high[0] : high[1];
    lowest = static_cast<std::uint64_t>(std::min(l[0], l[1])) ^ kBias;  // compared biased, as signed
    highest = static_cast<std::uint64_t>(std::max(h[0], h[1])) ^ kBias;
  }
  for (std::size_t k = vectors_end; k < n; ++k) {
    lowest = std::min(lowest, ids[k]);
    highest = std::max(highest, ids[k]);
  }
  return {lowest, highest};
}

// Bits needed for v (0 for 0).
inline unsigned bit_width_of(std::uint64_t v) { return v == 0 ? 0u : 64u - static_cast<unsigned>(__builtin_clzll(v)); }

// Rebuilds ids chunk by chunk; `failed()` tells whether any id overflowed 64 bits.
class IdRebuilder {
 public:
  IdRebuilder(IdOrder order, std::uint64_t base) : order_(order), base_(base) {}

  // `widest`: an upper bound on the residuals' bit width (64 when unknown). When the
  // chunk's sum cannot reach 2^63, one check per chunk replaces one per id.
  void apply(const std::uint64_t* r, std::size_t n, std::uint64_t* out, unsigned widest = 64) {
    if (n == 0) return;
    const bool small_sum = widest + bit_width_of(n) < 63;
    bool bad = false;
    if (order_ == IdOrder::kSequence) {
      const std::uint64_t limit = ~std::uint64_t{0} - base_;
      if (small_sum && widest < 64 && (std::uint64_t{1} << widest) - 1 <= limit) {
        for (std::size_t k = 0; k < n; ++k) out[k] = base_ + r[k];
      } else {
        for (std::size_t k = 0; k < n; ++k) {
          bad |= r[k] > limit;
          out[k] = base_ + r[k];
        }
      }
      failed_ |= bad;
      return;
    }
    std::size_t k = 0;
    std::uint64_t prev = prev_;
    if (!started_) {
      bad |= r[0] > ~std::uint64_t{0} - base_;
      prev = base_ + r[0];
      out[0] = prev;
      k = 1;
      started_ = true;
    }
    if (small_sum) {
      // Sum below 2^63: it wrapped iff the end is below the start.
      const std::uint64_t start = prev;
      for (; k < n; ++k) {
        prev += r[k] + 1;
        out[k] = prev;
      }
      bad |= prev < start;
    } else {
      for (; k < n; ++k) {
        const std::uint64_t x = prev + 1 + r[k];
        bad |= x <= prev;  // wrapped past 2^64 - 1
        out[k] = x;
        prev = x;
      }
    }
    prev_ = prev;
    failed_ |= bad;
  }
  [[nodiscard]] bool failed() const { return failed_; }

  // For decoders that rebuild a sorted set's chunk themselves (fused with unpacking):
  // whether a first id was rebuilt, the last id rebuilt, and how to continue after them.
  [[nodiscard]] bool started() const { return started_; }
  [[nodiscard]] std::uint64_t last() const { return prev_; }
  void continue_from(std::uint64_t last, bool wrapped) {
    started_ = true;
    prev_ = last;
    failed_ |= wrapped;
  }

 private:
  IdOrder order_;
  std::uint64_t base_;
  std::uint64_t prev_ = 0;
  bool started_ = false;
  bool failed_ = false;
};

}  // namespace zbfs::codec_detail
