// PhaseBreakdown: per-phase counters summarised over the ranks of a job (min, max and
// sum of each), the form in which reports print and store them. Plain data, no MPI;
// metrics/rank_aggregation.hpp computes it collectively.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "zbfs/metrics/phase_metrics.hpp"

namespace zbfs {

struct Spread {
  double min = 0;
  double max = 0;
  double sum = 0;
};

struct PhaseSummary {
  Spread time_s;
  Spread messages;
  Spread raw_bytes;
  Spread wire_bytes;
  Spread model_s;  // modelled communication time under the run's network
  Spread mpi_s;    // time inside MPI calls
  Spread wait_s;   // waiting for peers before collectives (with --time-waits; else 0)
  Spread encode_s;
  Spread decode_s;
  Spread id_bytes;                                // the exchanged ids as plain 64-bit ids
  std::array<double, kCodecCount> frames{};       // summed over ranks
  Spread merged_items;                            // routed items removed by merging
  std::array<double, kMaxRouteHops> hop_bytes{};  // routed bytes per hop, summed over ranks
  Spread to_device_bytes;                         // a device backend's copies to its device
  Spread to_host_bytes;                           // and back
  Spread stream_model_s;                          // pipelined exchanges: modelled time,
  Spread stream_held_s;                           // the time they held the rank,
  Spread stream_wait_s;                           // of which blocked at their ends,
  Spread overlap_s;                               // and the modelled time hidden under computation
  std::array<Spread, kWorkKindCount> work{};      // counted work, by kind (metrics/work_counts.hpp)
  // Hops with routed traffic: hop_bytes[0, routed_hops()) (0 when nothing was routed).
  [[nodiscard]] std::size_t routed_hops() const {
    std::size_t n = kMaxRouteHops;
    while (n > 0 && hop_bytes[n - 1] == 0) --n;
    return n;
  }
};

// Calls, messages and bytes of one (phase, communicator role, pattern), summed over ranks.
struct TrafficRecord {
  Phase phase = Phase::kOther;
  CommRole role = CommRole::kOther;
  CommPattern pattern = CommPattern::kReduce;
  double calls = 0;
  double messages = 0;
  double bytes = 0;
};

struct PhaseBreakdown {
  std::array<PhaseSummary, kPhaseCount> phases{};
  std::vector<TrafficRecord> traffic;  // the non-zero tallies, in phase, role, pattern order

  [[nodiscard]] const PhaseSummary& operator[](Phase phase) const { return phases[static_cast<std::size_t>(phase)]; }
  // The summary of one rank alone (a single-process run).
  static PhaseBreakdown of_one_rank(const PhaseMetrics& metrics);
  // Every (phase, role, pattern) tally as a flat array of calls, messages, bytes, and back.
  static std::vector<double> flatten_tallies(const PhaseMetrics& metrics);
  static std::vector<TrafficRecord> records_of(const std::vector<double>& flat);
};

}  // namespace zbfs
