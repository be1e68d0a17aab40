// Command-line front end: parses `zbfs <command> [options]` with CLI11 and runs it.
// Called on every rank of the job (MPI initialised by main); only rank 0 prints results.
// Returns the process exit status; throws zbfs::Error for failures main() reports.
#pragma once

namespace zbfs::cli {

int run_cli(int argc, char** argv, int rank, int ranks);

}  // namespace zbfs::cli
