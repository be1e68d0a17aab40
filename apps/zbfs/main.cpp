// zbfs command-line entry point: every failure becomes one line on stderr and an exit
// code. An error every rank raised alike is printed once by rank 0 and the job ends
// normally; an error on some ranks only aborts the whole MPI job, so no rank hangs.
#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "cli.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/mpi/environment.hpp"

namespace {

int report(const std::string& message, int exit_code, zbfs::ErrorScope scope, int rank, int ranks) {
  if (ranks <= 1) {
    std::fprintf(stderr, "zbfs: error: %s\n", message.c_str());
    return exit_code;
  }
  if (scope == zbfs::ErrorScope::kAllRanks) {
    if (rank == 0) std::fprintf(stderr, "zbfs: error: %s\n", message.c_str());
    return exit_code;
  }
  std::fprintf(stderr, "zbfs: error: rank %d: %s\n", rank, message.c_str());
  std::fflush(stderr);
  zbfs::abort_job(exit_code);
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<zbfs::MpiEnvironment> mpi;
  int rank = 0;
  int ranks = 1;
  try {
    mpi.emplace(argc, argv);
    rank = mpi->world_rank();
    ranks = mpi->world_size();
    return zbfs::cli::run_cli(argc, argv, rank, ranks);
  } catch (const zbfs::Error& e) {
    return report(e.what(), static_cast<int>(e.code()), e.scope(), rank, ranks);
  } catch (const std::exception& e) {
    return report(e.what(), static_cast<int>(zbfs::ExitCode::kFailure), zbfs::ErrorScope::kThisRank, rank, ranks);
  }
}
