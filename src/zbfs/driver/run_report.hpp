// The output of a finished run: the official result block on stdout, the JSON record
// (--json), and unless --quiet the phase table and peak memory on stderr. Collective:
// rank 0 writes, and every rank ends with its outcome, so that a result block that cannot
// be written to stdout (a full disk under a redirection) or a JSON record that cannot be
// written ends the job with exit status 1 and one line on every rank alike.
#pragma once

#include "zbfs/driver/runner.hpp"
#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

void report_run(const RunResult& result, const Communicator& world);

}  // namespace zbfs
