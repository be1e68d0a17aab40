// Entry point of the multi-rank tests, run as `mpirun -np P zbfs_mpi_tests`: initialises
// MPI, lets rank 0 print the usual GoogleTest report while the other ranks print only
// their failures, and exits non-zero on every rank when a test failed on any of them. A
// fatal failure on any rank aborts the job at once.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <cstdio>
#include <string>

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

// A fatal failure (a failed ASSERT or an exception out of a test body) on one rank leaves
// the others waiting in the next collective: end the whole job at once instead of
// hanging until the test's timeout.
class AbortOnFatalFailure : public ::testing::EmptyTestEventListener {
 public:
  explicit AbortOnFatalFailure(int rank) : rank_(rank) {}
  // The name is kept here: GoogleTest holds its lock while it reports a result.
  void OnTestStart(const ::testing::TestInfo& test) override {
    test_ = std::string(test.test_suite_name()) + "." + test.name();
  }
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.fatally_failed()) return;
    std::fprintf(stderr, "[rank %d] fatal failure in %s: aborting the job so that no rank waits for it\n", rank_,
                 test_.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

 private:
  int rank_;
  std::string test_;
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
  // After the printers, so that the failure is reported before the abort.
  ::testing::UnitTest::GetInstance()->listeners().Append(new AbortOnFatalFailure(mpi.world_rank()));
  // Tests run oversubscribed (up to 8 ranks on a laptop): one thread per rank then, two
  // threads when alone so that the OpenMP paths are exercised too.
  omp_set_num_threads(mpi.world_size() == 1 ? 2 : 1);
  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any_failed;
}
