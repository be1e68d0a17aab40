#include "zbfs/mpi/environment.hpp"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <fcntl.h>
#include <omp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// The variables that mpirun (Open MPI, MPICH's Hydra), PMIx and Slurm give a rank.
constexpr const char* kLauncherRankVariables[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};

// Whether no launcher started this process.
bool launched_alone() {
  for (const char* name : kLauncherRankVariables) {
    if (std::getenv(name) != nullptr) return false;
  }
  return std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr && std::getenv("PMI_SIZE") == nullptr;
}

}  // namespace

bool first_rank_by_launcher() {
  for (const char* name : kLauncherRankVariables) {
    const char* value = std::getenv(name);
    if (value != nullptr) return std::string(value) == "0";
  }
  return true;
}

MpiEnvironment::MpiEnvironment(int& argc, char**& argv) {
  // Open MPI 4.1's osc/rdma component, which it picks for windows among a node's ranks,
  // loses remote fetch-and-adds over shared memory (open-mpi/ompi#11410, #6275; the
  // one-sided transport's tests catch it within a few runs); sm, pt2pt and ucx are
  // correct. Read by MPI_Init, and only when the user has not chosen the components.
  setenv("OMPI_MCA_osc", "^rdma", 0);
  // A plain `zbfs run` (no launcher) is an Open MPI singleton, which forks a helper daemon
  // (orted) at MPI_Init: 0.15 s of every start, and a daemon that outlives a signalled
  // zbfs long enough to print errors of its own. zbfs never spawns processes, so the
  // singleton runs isolated, without it (other MPI libraries ignore the variable).
  if (launched_alone()) setenv("OMPI_MCA_ess_singleton_isolated", "1", 0);
#ifdef ZBFS_SIMGRID
  // SMPI (the simulated-cluster build) runs every rank as a coroutine of one simulator
  // thread: a rank's OpenMP team would run outside the simulated clock, so each rank runs
  // one thread, and MPI sees a single-threaded program.
  constexpr int kThreadLevel = MPI_THREAD_SINGLE;
  omp_set_num_threads(1);
#else
  constexpr int kThreadLevel = MPI_THREAD_FUNNELED;
#endif
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, kThreadLevel, &provided) != MPI_SUCCESS) {
    throw Error(ExitCode::kFailure, "MPI_Init_thread failed");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size_);
  if (provided < kThreadLevel) {
    throw Error(ExitCode::kFailure, "the MPI library does not support MPI_THREAD_FUNNELED");
  }
  const auto now = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  job_key_ = (static_cast<std::uint64_t>(::getpid()) << 40) ^ now;
  MPI_Bcast(&job_key_, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
}

bool MpiEnvironment::first_to_abort_on_node() const {
  if (world_size_ <= 1) return true;
  // Open MPI's session folder of the job, which mpirun removes when the job ends however
  // it ends: a file made there stays claimed after the rank that made it is gone (a
  // socket's name would be free again, and a rank failing later would report too).
  if (const char* session = std::getenv("OMPI_MCA_orte_jobfam_session_dir"); session != nullptr) {
    char name[64];
    std::snprintf(name, sizeof(name), "/zbfs-abort-%llx", static_cast<unsigned long long>(job_key_));
    const int made = ::open((std::string(session) + name).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (made >= 0) {
      ::close(made);
      return true;
    }
    if (errno == EEXIST) return false;
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return true;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  // Abstract (a leading NUL): nothing in the file system, gone with the process.
  const int length = std::snprintf(address.sun_path + 1, sizeof(address.sun_path) - 1, "zbfs-abort-%llx",
                                   static_cast<unsigned long long>(job_key_));
  const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + static_cast<std::size_t>(length));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), size) == 0) return true;  // kept open until the end
  const bool other_process_first = errno == EADDRINUSE;
  ::close(fd);
  return !other_process_first;
}

MpiEnvironment::~MpiEnvironment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

int world_rank() {
  int rank = 0;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS) throw Error(ExitCode::kFailure, "MPI_Comm_rank failed");
  return rank;
}

int world_size() {
  int size = 1;
  if (MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS) throw Error(ExitCode::kFailure, "MPI_Comm_size failed");
  return size;
}

void abort_job(int exit_code) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

bool mpi_is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  // The header says what the library was built with; the query, what it does at run time.
  return MPIX_CUDA_AWARE_SUPPORT != 0 && MPIX_Query_cuda_support() != 0;
#else
  return false;
#endif
}

}  // namespace zbfs
