#include "zbfs/driver/phase_table.hpp"

#include <fmt/format.h>

namespace zbfs {

std::string format_phase_table(const PhaseBreakdown& breakdown, int num_processes, const NetworkModel& network,
                               std::string_view codec) {
  // One rank sends nothing over any link: its model line would price a network it never
  // used (and a measured one reads 0 us + bytes / 0.001 kB/s, nothing having been timed).
  const std::string model =
      num_processes == 1 ? std::string("model_s: no links (one rank)")
                         : fmt::format("model_s: network {}, inter-node {} + bytes / {}, intra-node {} + bytes / {}",
                                       network.name, format_duration(network.inter_node.latency_s),
                                       format_bandwidth(network.inter_node.bandwidth_bytes_per_s),
                                       format_duration(network.intra_node.latency_s),
                                       format_bandwidth(network.intra_node.bandwidth_bytes_per_s));
  std::string out = fmt::format("phase breakdown over {} rank{} (all searches and validations); codec {}; {}\n",
                                num_processes, num_processes == 1 ? "" : "s", codec, model);
  out += fmt::format("{:<22} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>14} {:>14} {:>7} {:>7}\n", "phase",
                     "max_s", "min_s", "mpi_s", "wait_s", "model_s", "encode_s", "decode_s", "messages", "raw_bytes",
                     "wire_bytes", "wire%", "ids%");
  for (std::size_t i = 0; i < kPhaseCount; ++i) {
    const PhaseSummary& p = breakdown.phases[i];
    if (p.time_s.max == 0 && p.messages.sum == 0) continue;
    const double wire_percent = p.raw_bytes.sum > 0 ? 100.0 * p.wire_bytes.sum / p.raw_bytes.sum : 100.0;
    // Wire bytes against the exchanged ids as plain 64-bit ids ("-" where none moved).
    const std::string ids_percent =
        p.id_bytes.sum > 0 ? fmt::format("{:.1f}%", 100.0 * p.wire_bytes.sum / p.id_bytes.sum) : "-";
    out += fmt::format(
        "{:<22} {:>9.4f} {:>9.4f} {:>9.4f} {:>9.4f} {:>9.4f} {:>9.4f} {:>9.4f} {:>10.0f} {:>14.0f} {:>14.0f} {:>6.1f}% "
        "{:>7}\n",
        to_string(static_cast<Phase>(i)), p.time_s.max, p.time_s.min, p.mpi_s.max, p.wait_s.max, p.model_s.max,
        p.encode_s.max, p.decode_s.max, p.messages.sum, p.raw_bytes.sum, p.wire_bytes.sum, wire_percent, ids_percent);
  }
  // A device backend's copies between host and device memory, summed over ranks.
  bool copied = false;
  for (const PhaseSummary& p : breakdown.phases) copied |= p.to_device_bytes.sum + p.to_host_bytes.sum > 0;
  if (copied) {
    out += fmt::format("{:<22} {:>20} {:>20}\n", "device copies", "host_to_device_bytes", "device_to_host_bytes");
    for (std::size_t i = 0; i < kPhaseCount; ++i) {
      const PhaseSummary& p = breakdown.phases[i];
      if (p.to_device_bytes.sum + p.to_host_bytes.sum == 0) continue;
      out += fmt::format("{:<22} {:>20.0f} {:>20.0f}\n", to_string(static_cast<Phase>(i)), p.to_device_bytes.sum,
                         p.to_host_bytes.sum);
    }
  }
  // Pipelined exchanges (--overlap on): their modelled time, the time they held the
  // slowest rank (in MPI calls, and of that blocked at their ends for the last
  // arrivals), and how much of the modelled time ran hidden under computation.
  bool streamed = false;
  for (const PhaseSummary& p : breakdown.phases) streamed |= p.stream_model_s.sum + p.stream_held_s.sum > 0;
  if (streamed) {
    out += fmt::format("{:<22} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "overlapped phase", "model_s", "held_s", "wait_s",
                       "overlap_s", "hidden%");
    for (std::size_t i = 0; i < kPhaseCount; ++i) {
      const PhaseSummary& p = breakdown.phases[i];
      if (p.stream_model_s.sum + p.stream_held_s.sum == 0) continue;
      const double hidden = p.stream_model_s.sum > 0 ? 100.0 * p.overlap_s.sum / p.stream_model_s.sum : 0.0;
      out += fmt::format("{:<22} {:>9.4f} {:>9.4f} {:>9.4f} {:>9.4f} {:>8.1f}%\n", to_string(static_cast<Phase>(i)),
                         p.stream_model_s.max, p.stream_held_s.max, p.stream_wait_s.max, p.overlap_s.max, hidden);
    }
  }
  // Routed exchanges: start-ups (messages) per rank, items merged away, bytes per hop.
  bool routed = false;
  for (const PhaseSummary& p : breakdown.phases) routed |= p.routed_hops() > 0;
  if (!routed) return out;
  out +=
      fmt::format("{:<22} {:>10} {:>10} {:>12}  {}\n", "routed phase", "startups", "mean", "merged", "bytes per hop");
  for (std::size_t i = 0; i < kPhaseCount; ++i) {
    const PhaseSummary& p = breakdown.phases[i];
    if (p.routed_hops() == 0) continue;
    std::string hops;
    for (std::size_t h = 0; h < p.routed_hops(); ++h)
      hops += fmt::format("{}{:.0f}", h == 0 ? "" : " ", p.hop_bytes[h]);
    out += fmt::format("{:<22} {:>10.0f} {:>10.1f} {:>12.0f}  {}\n", to_string(static_cast<Phase>(i)), p.messages.max,
                       p.messages.sum / num_processes, p.merged_items.sum, hops);
  }
  return out;
}

}  // namespace zbfs
