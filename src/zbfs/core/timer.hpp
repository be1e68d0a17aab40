// Wall-clock stopwatch on the steady clock, in seconds. In the simulated-cluster build
// (ZBFS_SIMGRID) it reads SMPI's simulated clock instead: a simulated run's times are
// those of the simulated platform, where the host's clock would time the simulator.
#pragma once

#ifdef ZBFS_SIMGRID
#include <mpi.h>
#else
#include <chrono>
#endif

namespace zbfs {

#ifdef ZBFS_SIMGRID
class Stopwatch {
 public:
  Stopwatch() : start_(MPI_Wtime()) {}
  void restart() { start_ = MPI_Wtime(); }
  [[nodiscard]] double elapsed_s() const { return MPI_Wtime() - start_; }

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
