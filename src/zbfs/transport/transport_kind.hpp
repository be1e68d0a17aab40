// Which transport carries the exchanges' rounds (--transport): matched two-sided
// messages, or MPI-3 one-sided puts into windows (mpi/rma_exchange.hpp). Plain C++, so
// the run's configuration names it without MPI.
#pragma once

#include <optional>
#include <string_view>

namespace zbfs {

enum class Transport { kTwoSided, kRma };

inline std::string_view to_string(Transport transport) { return transport == Transport::kRma ? "rma" : "two-sided"; }

inline std::optional<Transport> parse_transport(std::string_view text) {
  if (text == "two-sided") return Transport::kTwoSided;
  if (text == "rma") return Transport::kRma;
  return std::nullopt;
}

}  // namespace zbfs
