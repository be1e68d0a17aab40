// PhaseBreakdown: per-phase counters summarised over the ranks of a job (min, max and
// sum of each), the form in which reports print and store them. Plain data, no MPI;
// metrics/rank_aggregation.hpp computes it collectively.
#pragma once

#include <array>
#include <cstdint>

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
};

struct PhaseBreakdown {
  std::array<PhaseSummary, kPhaseCount> phases{};

  [[nodiscard]] const PhaseSummary& operator[](Phase phase) const { return phases[static_cast<std::size_t>(phase)]; }
  // The summary of one rank alone (a single-process run).
  static PhaseBreakdown of_one_rank(const PhaseMetrics& metrics);
};

}  // namespace zbfs
