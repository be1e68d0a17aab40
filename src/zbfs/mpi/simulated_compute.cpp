#include "zbfs/mpi/simulated_compute.hpp"

#ifdef ZBFS_SIMGRID
#include <simgrid/host.h>
#include <smpi/smpi.h>
#endif

namespace zbfs {

#ifdef ZBFS_SIMGRID
bool simulated_compute_available() { return true; }

void charge_simulated_compute(double seconds) {
  if (!(seconds > 0)) return;
  // The burst before this point is SMPI's to time (none with simulate-computation:no);
  // then the charge runs as flops at the host's own speed: `seconds` of its time whatever
  // speed the platform gives it. smpi_execute would drop charges under
  // smpi/cpu-threshold.
  smpi_bench_end();
  smpi_execute_flops(seconds * sg_host_get_speed(sg_host_self()));
  smpi_bench_begin();
}
#else
bool simulated_compute_available() { return false; }

void charge_simulated_compute(double /*seconds*/) {}
#endif

}  // namespace zbfs
