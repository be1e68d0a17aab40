// The Graph500 benchmark over MPI: kernel 1 as DistributedGraph, then for each search key
// DistributedBfs (timed; the slowest rank's time counts) and the distributed validator
// (timed separately), with per-phase counters summarised over ranks per search and for
// the whole run. Collective over MPI_COMM_WORLD; every rank returns the same RunResult.
#pragma once

#include "zbfs/driver/runner.hpp"
#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

// Throws Error: exit 2 for bad configuration or too little memory, 3 when a search fails
// validation (both raised on every rank alike), others on the failing rank only.
RunResult run_distributed_benchmark(const RunConfig& config);

// --partition shared from the command line: run_benchmark, with a file read by the
// parallel reader (at one rank) and the first search's levels and parents written by the
// ordered writers, which sit on MPI. Collective over MPI_COMM_WORLD (one rank).
RunResult run_shared_benchmark(const RunConfig& config);

// check_openmp_threads for the whole job: the most threads any rank would start, so that
// every rank refuses alike when one rank's OMP_NUM_THREADS is too high. Collective.
void check_job_openmp_threads(const Communicator& world);

}  // namespace zbfs
