// MpiEnvironment: MPI_Init_thread (funneled: OpenMP threads never call MPI) in its
// constructor and MPI_Finalize in its destructor; one per process, owned by main().
// Errors of MPI calls are returned, not fatal, so that zbfs reports them in one line and
// then aborts the job itself (abort_job) rather than letting a rank hang.
#pragma once

#include <cstdint>
#include <string>

namespace zbfs {

// Before MPI_Init: whether this process is its job's rank 0 as the launcher's variables
// say (mpirun's, MPICH Hydra's, PMIx's, Slurm's); a process no launcher started is.
bool first_rank_by_launcher();

class MpiEnvironment {
 public:
  MpiEnvironment(int& argc, char**& argv);
  ~MpiEnvironment();
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;

  [[nodiscard]] int world_rank() const { return world_rank_; }
  [[nodiscard]] int world_size() const { return world_size_; }

  // For a rank about to end the job alone (abort_job): whether it is the first of this
  // job's ranks on its node to ask. Only that one reports and aborts, so that ranks that
  // fail alike (every rank short of memory) print one line, and Open MPI is not asked to
  // abort by several ranks at once (which garbles its own messages). A local call: a file
  // in Open MPI's session folder of the job (removed by mpirun with the job), or where
  // there is none an abstract Unix socket named for the job.
  [[nodiscard]] bool first_to_abort_on_node() const;

 private:
  int world_rank_ = 0;
  int world_size_ = 1;
  std::uint64_t job_key_ = 0;  // rank 0's process id and start time, the same on every rank
};

// This process's rank in the job, and the job's size (MPI_COMM_WORLD); local calls.
[[nodiscard]] int world_rank();
[[nodiscard]] int world_size();

// Whether the MPI library takes CUDA device memory in its calls (CUDA-aware), as far as
// it can say: Open MPI's MPIX_Query_cuda_support where the library has the extension,
// false elsewhere. A local call.
[[nodiscard]] bool mpi_is_cuda_aware();

// Ends every rank of the job with `exit_code`; never returns. Use after printing the error.
[[noreturn]] void abort_job(int exit_code);

}  // namespace zbfs
