// A link's cost in the alpha-beta model (latency + bytes / bandwidth) and a rank's
// traffic split by the class of link it crosses (same node, other node): the plain link
// description the network model, the communicator's accounting and the codecs' cost
// model share. No MPI, no presets (network/network_model.hpp has those).
#pragma once

#include <array>
#include <cstddef>

namespace zbfs {

enum class LinkClass : int { kIntraNode = 0, kInterNode = 1 };

struct LinkCost {
  double latency_s = 0;
  double bandwidth_bytes_per_s = 1;

  [[nodiscard]] double time_s(double messages, double bytes) const {
    return messages * latency_s + bytes / bandwidth_bytes_per_s;
  }
};

// Ranks of one node talk through shared memory, in every network preset and wherever no
// network is attached (figures and sources: docs/network-model.md).
inline constexpr LinkCost kSharedMemoryLink{0.5e-6, 10.0e9};

// Messages and bytes of one rank's part of a call, split by link class.
struct ClassTraffic {
  std::array<double, 2> messages{};
  std::array<double, 2> bytes{};

  void add(LinkClass link, double message_count, double byte_count) {
    messages[static_cast<std::size_t>(link)] += message_count;
    bytes[static_cast<std::size_t>(link)] += byte_count;
  }
};

// The alpha-beta time of `traffic` over an intra-node and an inter-node link.
[[nodiscard]] inline double traffic_time_s(const LinkCost& intra_node, const LinkCost& inter_node,
                                           const ClassTraffic& traffic) {
  return intra_node.time_s(traffic.messages[0], traffic.bytes[0]) +
         inter_node.time_s(traffic.messages[1], traffic.bytes[1]);
}

}  // namespace zbfs
