// Collective summaries over ranks: every rank's PhaseMetrics into one PhaseBreakdown (min,
// max and sum over ranks of each counter), and the ranks' energy meters into the run's
// EnergyRecord. Every rank gets the result.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "zbfs/metrics/energy_meter.hpp"
#include "zbfs/metrics/level_work.hpp"
#include "zbfs/metrics/phase_breakdown.hpp"
#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

PhaseBreakdown summarize_over_ranks(const Communicator& world, const PhaseMetrics& metrics);

// A search's levels, each rank's own, summarised over ranks (the largest rank's and the
// mean of every counter). A rank with fewer levels than another counts nothing in the
// levels it lacks.
std::vector<LevelSummary> summarize_levels_over_ranks(const Communicator& world, std::span<const LevelWork> levels);

// What each rank was to read (`reads_host`: its node's RAPL counters, one rank a node;
// `reads_device`: its device's board, one rank a device) and what its meter read: a part
// is measured when every rank that was to read it did. The joules are summed over the
// ranks; `why_not` is this rank's reason where it read nothing (rank 0's goes into the
// record; a failure elsewhere is named by the count of ranks).
EnergyRecord summarize_energy(const Communicator& world, const EnergyMeter& meter, bool reads_host, bool reads_device,
                              bool device_in_run, const std::string& why_not);

}  // namespace zbfs
