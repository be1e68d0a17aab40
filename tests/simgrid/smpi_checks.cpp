// What the SMPI build (ZBFS_SIMGRID) relies on from SimGrid, checked under smpirun with
// one rank entering late: a non-blocking barrier (NonblockingBarrier) lets no rank leave
// before the late one has entered, and a sparse exchange (Communicator::sparse_exchange,
// NBX) delivers the late rank's messages to every rank. SimGrid 3.32's own MPI_Ibarrier
// fails the first (ranks 1.. leave once rank 0 has entered), and with it the second.
// Prints one line; exits 1 on a failed check. Run by check_simulated_run.py.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "zbfs/mpi/communicator.hpp"
#include "zbfs/mpi/environment.hpp"
#include "zbfs/mpi/nonblocking_barrier.hpp"

namespace {

// The last rank spends `seconds` of simulated time (each probe costs SMPI's smpi/iprobe).
void arrive_late(const zbfs::Communicator& world, double seconds) {
  if (world.rank() != world.size() - 1) return;
  const double start = MPI_Wtime();
  while (MPI_Wtime() - start < seconds) {
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  }
}

}  // namespace

int main(int argc, char** argv) {
  zbfs::MpiEnvironment mpi(argc, argv);
  const zbfs::Communicator world = zbfs::Communicator::world();
  const int last = world.size() - 1;
  std::vector<std::string> failures;

  arrive_late(world, 0.01);
  const double entered = MPI_Wtime();
  {
    zbfs::NonblockingBarrier barrier(MPI_COMM_WORLD);
    while (!barrier.test()) {
    }
  }
  const double left = MPI_Wtime();
  const double last_entered = world.allreduce(entered, zbfs::ReduceOp::kMax);
  const std::uint64_t early = world.allreduce(std::uint64_t{left < last_entered ? 1U : 0U}, zbfs::ReduceOp::kSum);
  if (early > 0) failures.push_back(std::to_string(early) + " rank(s) left the barrier before the late rank entered");

  arrive_late(world, 0.01);
  std::vector<zbfs::Communicator::SparseMessage> outgoing;
  if (world.rank() == last) {
    for (int r = 0; r < last; ++r) outgoing.push_back({r, {static_cast<std::uint64_t>(r), 7}});
  }
  bool got = world.rank() == last;
  for (const auto& m : world.sparse_exchange(outgoing)) {
    got = got || (m.rank == last && m.words == std::vector<std::uint64_t>{static_cast<std::uint64_t>(world.rank()), 7});
  }
  const std::uint64_t missed = world.allreduce(std::uint64_t{got ? 0U : 1U}, zbfs::ReduceOp::kSum);
  if (missed > 0) failures.push_back(std::to_string(missed) + " rank(s) missed the late rank's sparse message");

  if (world.rank() == 0) {
    if (failures.empty()) {
      std::printf("smpi checks: %d simulated ranks, one late: the barrier and the sparse exchange hold\n",
                  world.size());
    }
    for (const std::string& f : failures) std::printf("FAIL: %s\n", f.c_str());
  }
  return failures.empty() ? 0 : 1;
}
