// The compact per-phase breakdown printed after the official result block: for each
// phase with any time or traffic, the slowest and fastest rank's time, and messages and
// bytes summed over ranks with the busiest rank's share, and the slowest rank's modelled
// communication time under the run's network. When exchanges were routed (--route), a
// second section gives per phase the busiest rank's start-ups and the mean, the items
// merged away and the bytes sent per hop.
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
