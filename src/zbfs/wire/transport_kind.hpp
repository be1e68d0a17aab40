// Which transport carries the exchanges' rounds (--transport): matched two-sided
// messages, or MPI-3 one-sided puts into windows (mpi/rma_exchange.hpp). Plain C++, so
// the run's configuration names it without MPI.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace zbfs {

enum class Transport { kTwoSided, kRma };

// --batch-bytes: the raw bytes a pipelined fold gathers for one destination before they
// leave (--overlap on). Below Open MPI's eager limit over TCP (64 KiB), so a batch
// leaves in one write without waiting for its receiver; measured in docs/performance.md.
constexpr std::uint64_t kDefaultBatchBytes = std::uint64_t{32} << 10;
// A batch holds at least one word (an update packed into one; a larger one still
// travels whole), and at most what one message of any transport carries comfortably.
constexpr std::uint64_t kMinBatchBytes = 8;
constexpr std::uint64_t kMaxBatchBytes = std::uint64_t{64} << 20;

inline std::string_view to_string(Transport transport) { return transport == Transport::kRma ? "rma" : "two-sided"; }

inline std::optional<Transport> parse_transport(std::string_view text) {
  if (text == "two-sided") return Transport::kTwoSided;
  if (text == "rma") return Transport::kRma;
  return std::nullopt;
}

}  // namespace zbfs
