#include "zbfs/driver/phase_table.hpp"

#include <fmt/format.h>

namespace zbfs {

std::string format_phase_table(const PhaseBreakdown& breakdown, int num_processes, const NetworkModel& network) {
  std::string out = fmt::format(
      "phase breakdown over {} rank{} (all searches and validations); model_s: network {}, inter-node {} + bytes / "
      "{}, intra-node {} + bytes / {}\n",
      num_processes, num_processes == 1 ? "" : "s", network.name, format_duration(network.inter_node.latency_s),
      format_bandwidth(network.inter_node.bandwidth_bytes_per_s), format_duration(network.intra_node.latency_s),
      format_bandwidth(network.intra_node.bandwidth_bytes_per_s));
  out += fmt::format("{:<22} {:>10} {:>10} {:>10} {:>12} {:>12} {:>14} {:>14}\n", "phase", "max_s", "min_s", "model_s",
                     "messages", "max_msgs", "bytes", "max_bytes");
  for (std::size_t i = 0; i < kPhaseCount; ++i) {
    const PhaseSummary& p = breakdown.phases[i];
    if (p.time_s.max == 0 && p.messages.sum == 0) continue;
    out += fmt::format("{:<22} {:>10.4f} {:>10.4f} {:>10.4f} {:>10.4f} {:>12.0f} {:>12.0f} {:>14.0f} {:>14.0f}\n",
                       to_string(static_cast<Phase>(i)), p.time_s.max, p.time_s.min, p.mpi_s.max, p.model_s.max,
                       p.messages.sum, p.messages.max, p.raw_bytes.sum, p.raw_bytes.max);
  }
  return out;
}

}  // namespace zbfs
