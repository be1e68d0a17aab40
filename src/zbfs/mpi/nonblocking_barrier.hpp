// NonblockingBarrier: a barrier that is started, then tested while the caller goes on
// (the sparse exchange's termination, a barrier that sleeps between checks). Open MPI and
// every MPI-3 library: MPI_Ibarrier. The simulated-cluster build (ZBFS_SIMGRID): SimGrid
// 3.32's MPI_Ibarrier is not a barrier (its members other than rank 0 leave it as soon as
// rank 0 has entered; docs/simulation.md), which let a sparse exchange end before every
// message had been sent; there it is a
// one-word MPI_Iallreduce, which no member can finish before every member has entered.
// Holds the words MPI reads and writes, so it stays where it was made.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

class NonblockingBarrier {
 public:
  explicit NonblockingBarrier(MPI_Comm comm) {
#ifdef ZBFS_SIMGRID
    check_mpi(MPI_Iallreduce(&entered_, &everyone_, 1, MPI_UINT64_T, MPI_MAX, comm, &request_), "MPI_Iallreduce");
#else
    check_mpi(MPI_Ibarrier(comm, &request_), "MPI_Ibarrier");
#endif
  }
  NonblockingBarrier(const NonblockingBarrier&) = delete;
  NonblockingBarrier& operator=(const NonblockingBarrier&) = delete;
  // A barrier still in flight is left to MPI (freeing a collective's request is
  // erroneous): only an error unwinding past it gets here, and the job is ending.
  ~NonblockingBarrier() = default;

  // Whether every member has entered (then the barrier is over).
  [[nodiscard]] bool test() {
    int done = 0;
    check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  }

 private:
  std::uint64_t entered_ = 1;
  std::uint64_t everyone_ = 0;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace zbfs
