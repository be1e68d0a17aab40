// Wall-clock stopwatch on the steady clock, in seconds. In the simulated-cluster build
// (ZBFS_SIMGRID) it reads SimGrid's simulated clock instead: a simulated run's times are
// those of the simulated platform, where the host's clock would time the simulator.
#pragma once

#ifdef ZBFS_SIMGRID
#include <simgrid/engine.h>
#include <smpi/smpi.h>
#else
#include <chrono>
#endif

namespace zbfs {

#ifdef ZBFS_SIMGRID
// The simulated time, as SMPI's own wall clock reads it: the computation since the rank's
// last MPI call is first charged to its simulated host (SMPI times such bursts on the
// machine running the simulation), then the clock is read.
inline double simulated_now_s() {
  smpi_bench_end();
  const double now = simgrid_get_clock();
  smpi_bench_begin();
  return now;
}

class Stopwatch {
 public:
  Stopwatch() : start_(simulated_now_s()) {}
  void restart() { start_ = simulated_now_s(); }
  [[nodiscard]] double elapsed_s() const { return simulated_now_s() - start_; }

 private:
  double start_;
};
#else
class Stopwatch {
 public:
  Stopwatch() : start_(Clock::now()) {}
  void restart() { start_ = Clock::now(); }
  [[nodiscard]] double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};
#endif

}  // namespace zbfs
