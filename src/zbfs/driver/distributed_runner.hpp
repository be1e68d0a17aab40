// The Graph500 benchmark over MPI: kernel 1 as DistributedGraph, then for each search key
// DistributedBfs (timed; the slowest rank's time counts) and the distributed validator
// (timed separately), with per-phase counters summarised over ranks per search and for
// the whole run. Collective over MPI_COMM_WORLD; every rank returns the same RunResult.
#pragma once

#include "zbfs/driver/runner.hpp"

namespace zbfs {

// Throws Error: exit 2 for bad configuration or too little memory, 3 when a search fails
// validation (both raised on every rank alike), others on the failing rank only.
RunResult run_distributed_benchmark(const RunConfig& config);

}  // namespace zbfs
