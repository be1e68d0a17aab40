// Division by a divisor fixed at run time, by one multiplication and at most three
// corrections, exact for every 64-bit numerator. Vertex-to-owner lookups divide every
// edge endpoint by the block size; a hardware 64-bit division costs tens of cycles.
#pragma once

#include <cstdint>

namespace zbfs {

class FastDivider {
 public:
  FastDivider() = default;
  explicit FastDivider(std::uint64_t divisor) : divisor_(divisor), inverse_(~std::uint64_t{0} / divisor) {}

  [[nodiscard]] std::uint64_t divisor() const { return divisor_; }

  // inverse_ = floor((2^64 - 1) / d) undershoots 2^64 / d by less than 2 / d, so the
  // estimate is at most 2 below the quotient.
  [[nodiscard]] std::uint64_t divide(std::uint64_t n) const {
    auto q = static_cast<std::uint64_t>((static_cast<unsigned __int128>(n) * inverse_) >> 64);
    std::uint64_t r = n - q * divisor_;
    while (r >= divisor_) {
      ++q;
      r -= divisor_;
    }
    return q;
  }

 private:
  std::uint64_t divisor_ = 1;
  std::uint64_t inverse_ = ~std::uint64_t{0};
};

}  // namespace zbfs
