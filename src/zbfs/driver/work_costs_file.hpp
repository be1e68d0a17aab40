// The per-unit costs of counted work (metrics/work_counts.hpp) as `zbfs-lab calibrate`
// writes them: a JSON object whose "seconds_per_unit" names each kind's price on the host
// it was calibrated on (kinds left out cost nothing). `zbfs run --work-costs FILE` reads
// it in the simulated-cluster build, where the counted work is charged to the ranks'
// simulated clocks at these prices (docs/simulation.md).
#pragma once

#include <string>

#include "zbfs/metrics/work_counts.hpp"

namespace zbfs {

// The costs in `path`; a usage error in one line when it cannot be read or is malformed
// (not JSON, an unknown kind, a price that is negative or not a number).
WorkCosts read_work_costs(const std::string& path);

}  // namespace zbfs
