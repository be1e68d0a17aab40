// The compact per-phase breakdown printed after the official result block: for each
// phase with any time or traffic, the slowest and fastest rank's time, and messages and
// bytes summed over ranks with the busiest rank's share.
#pragma once

#include <string>

#include "zbfs/metrics/phase_breakdown.hpp"

namespace zbfs {

std::string format_phase_table(const PhaseBreakdown& breakdown, int num_processes);

}  // namespace zbfs
