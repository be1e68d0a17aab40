// An input edge tuple with 64-bit global vertex ids, as every zbfs interface passes them.
#pragma once

#include <cstdint>

namespace zbfs {

struct Edge {
  std::uint64_t u;
  std::uint64_t v;
  friend bool operator==(const Edge&, const Edge&) = default;
};

}  // namespace zbfs
