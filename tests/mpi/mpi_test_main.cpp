// Entry point of the multi-rank tests, run as `mpirun -np P zbfs_mpi_tests`: initialises
// MPI, lets rank 0 print the usual GoogleTest report while the other ranks print only
// their failures, and exits non-zero on every rank when a test failed on any of them.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <cstdio>

#include "zbfs/mpi/environment.hpp"

namespace {

class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.summary());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  const zbfs::MpiEnvironment mpi(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (mpi.world_rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(mpi.world_rank()));
  }
  // Tests run oversubscribed (up to 8 ranks on a laptop): one thread per rank then, two
  // threads when alone so that the OpenMP paths are exercised too.
  omp_set_num_threads(mpi.world_size() == 1 ? 2 : 1);
  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any_failed;
}
