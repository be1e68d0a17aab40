// Collective summary of every rank's PhaseMetrics into one PhaseBreakdown (min, max and
// sum over ranks of each counter). Every rank gets the result.
#pragma once

#include "zbfs/metrics/phase_breakdown.hpp"
#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

PhaseBreakdown summarize_over_ranks(const Communicator& world, const PhaseMetrics& metrics);

}  // namespace zbfs
