// Runs a tiny benchmark through the installed libraries, single-process and over MPI (as
// a singleton job), and checks both validated.
#include <cstdio>

#include "zbfs/driver/distributed_runner.hpp"
#include "zbfs/driver/runner.hpp"
#include "zbfs/mpi/environment.hpp"

int main(int argc, char** argv) {
  const zbfs::MpiEnvironment mpi(argc, argv);
  zbfs::RunConfig config;
  config.graph.scale = 8;
  config.num_roots = 4;
  config.quiet = true;
  const zbfs::RunResult shared = zbfs::run_benchmark(config);
  const zbfs::RunResult distributed = zbfs::run_distributed_benchmark(config);
  std::printf("searches %zu/%zu harmonic_mean_TEPS %g/%g\n", shared.searches.size(), distributed.searches.size(),
              shared.result_block.bfs->teps.harmonic_mean, distributed.result_block.bfs->teps.harmonic_mean);
  const bool ok = shared.searches.size() == 4 && distributed.searches.size() == 4 &&
                  shared.result_block.bfs->teps.harmonic_mean > 0 &&
                  distributed.result_block.bfs->teps.harmonic_mean > 0;
  return ok ? 0 : 1;
}
