// zbfs command-line entry point: every failure becomes one line on stderr and an exit
// code. An error every rank raised alike is printed once by rank 0 and the job ends
// normally; an error on some ranks only aborts the whole MPI job, so no rank hangs.
#include <chrono>
#include <cstdio>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <thread>

#include "cli.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/mpi/environment.hpp"
#include "zbfs/output/partial_files.hpp"

namespace {

int report(const std::string& message, int exit_code, zbfs::ErrorScope scope, const zbfs::MpiEnvironment* mpi) {
  const int ranks = mpi != nullptr ? mpi->world_size() : 1;
  if (ranks <= 1) {
    std::fprintf(stderr, "zbfs: error: %s\n", message.c_str());
    return exit_code;
  }
  if (scope == zbfs::ErrorScope::kAllRanks) {
    if (mpi->world_rank() == 0) std::fprintf(stderr, "zbfs: error: %s\n", message.c_str());
    return exit_code;
  }
  // A rank that fails alone ends the job. When several fail alike (each short of memory),
  // the first on a node reports and aborts; the others wait to be ended with it, and
  // abort themselves only if that never comes.
  if (!mpi->first_to_abort_on_node()) std::this_thread::sleep_for(std::chrono::seconds(60));
  std::fprintf(stderr, "zbfs: error: rank %d: %s\n", mpi->world_rank(), message.c_str());
  std::fflush(stderr);
  zbfs::abort_job(exit_code);
}

// What a failed allocation says (std::bad_alloc's what() is only its name).
std::string describe(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) {
    return "out of memory (a memory allocation failed; the run needs more memory than this node gave it: use more "
           "ranks or nodes, or leave out --force)";
  }
  return e.what();
}

}  // namespace

int main(int argc, char** argv) {
  zbfs::fix_heap_mmap_threshold();
  std::optional<zbfs::MpiEnvironment> mpi;
  try {
    // A signal removes this rank's partial files and ends it by the signal, which ends the
    // job (rank 0 says so): from the start, and again after MPI's start-up, in case the
    // library put handlers of its own in their place.
    zbfs::end_on_signals("zbfs", zbfs::first_rank_by_launcher());
    mpi.emplace(argc, argv);
    zbfs::end_on_signals("zbfs", mpi->world_rank() == 0);
    return zbfs::cli::run_cli(argc, argv, mpi->world_rank(), mpi->world_size());
  } catch (const zbfs::Error& e) {
    return report(e.what(), static_cast<int>(e.code()), e.scope(), mpi ? &*mpi : nullptr);
  } catch (const std::exception& e) {
    return report(describe(e), static_cast<int>(zbfs::ExitCode::kFailure), zbfs::ErrorScope::kThisRank,
                  mpi ? &*mpi : nullptr);
  }
}
