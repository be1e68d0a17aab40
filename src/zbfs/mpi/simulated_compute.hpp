// Computation charged to a simulated rank's clock. In the simulated-cluster build
// (ZBFS_SIMGRID), with SMPI told not to time the rank's computation itself
// (smpi/simulate-computation:no), the counted work of its local steps is priced
// (metrics/work_counts.hpp) and charged here, so that a simulated search's compute comes
// from what it did, not from how long this machine took to do it while the simulator
// cycled through every rank's data (docs/simulation.md, `--compute counted`).
#pragma once

namespace zbfs {

// Whether this build runs on a simulated clock that computation can be charged to.
bool simulated_compute_available();

// Occupies the calling rank's simulated host for `seconds` (nothing when not positive).
// Only where simulated_compute_available(); elsewhere it does nothing.
void charge_simulated_compute(double seconds);

}  // namespace zbfs
