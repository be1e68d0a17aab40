// The compact per-phase breakdown printed after the official result block: for each
// phase with any time or traffic, the slowest and fastest rank's time, and messages and
// bytes summed over ranks with the busiest rank's share, and the slowest rank's modelled
// communication time under the run's network.
#pragma once

#include <string>
#include <string_view>

#include "zbfs/metrics/phase_breakdown.hpp"
#include "zbfs/network/network_model.hpp"

namespace zbfs {

// `network` names the model behind the model_s column.
std::string format_phase_table(const PhaseBreakdown& breakdown, int num_processes, const NetworkModel& network,
                               std::string_view codec);

}  // namespace zbfs
