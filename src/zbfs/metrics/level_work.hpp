// What one level of a distributed search did on one rank, phase by phase: its time (and
// of that, the time inside MPI), its counted work and its traffic; and the same summarised
// over ranks (the largest rank's and the mean, whose ratio is the level's imbalance), the
// form the record keeps per step. metrics/rank_aggregation.hpp summarises collectively.
#pragma once

#include <array>
#include <cstdint>

#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/metrics/work_counts.hpp"

namespace zbfs {

struct LevelPhaseWork {
  double time_s = 0;
  double mpi_s = 0;
  WorkCounts work{};
  std::uint64_t messages = 0;
  std::uint64_t wire_bytes = 0;
  std::uint64_t peers = 0;  // the most peers one call sent to
};

struct LevelWork {
  std::array<LevelPhaseWork, kPhaseCount> phases{};
};

// The level between two snapshots of a rank's counters (`after.begin_level()` was called
// when `before` was taken, so its peers are the level's).
inline LevelWork level_work_between(const PhaseMetrics& before, const PhaseMetrics& after) {
  LevelWork level;
  for (std::size_t p = 0; p < kPhaseCount; ++p) {
    const PhaseCounters& a = after.all()[p];
    const PhaseCounters& b = before.all()[p];
    LevelPhaseWork& l = level.phases[p];
    l.time_s = a.time_s - b.time_s;
    l.mpi_s = a.mpi_s - b.mpi_s;
    for (std::size_t k = 0; k < kWorkKindCount; ++k) l.work[k] = a.work[k] - b.work[k];
    l.messages = a.messages - b.messages;
    l.wire_bytes = a.wire_bytes - b.wire_bytes;
    l.peers = after.level_peers(static_cast<Phase>(p));
  }
  return level;
}

struct MaxMean {
  double max = 0;
  double mean = 0;
  // The largest rank's over the mean (1 when balanced; 0 when nothing was counted).
  [[nodiscard]] double imbalance() const { return mean > 0 ? max / mean : 0; }
};

struct LevelPhaseSummary {
  MaxMean time_s;
  MaxMean mpi_s;
  std::array<MaxMean, kWorkKindCount> work{};
  MaxMean messages;
  MaxMean wire_bytes;
  MaxMean peers;
  [[nodiscard]] bool empty() const {
    if (time_s.max > 0 || messages.max > 0) return false;
    for (const MaxMean& w : work) {
      if (w.max > 0) return false;
    }
    return true;
  }
};

struct LevelSummary {
  std::array<LevelPhaseSummary, kPhaseCount> phases{};
};

}  // namespace zbfs
