// Runs a tiny benchmark through the installed library and checks it validated.
#include <cstdio>

#include "zbfs/driver/runner.hpp"

int main() {
  zbfs::RunConfig config;
  config.scale = 8;
  config.num_roots = 4;
  config.quiet = true;
  const zbfs::RunResult result = zbfs::run_benchmark(config);
  std::printf("searches %zu harmonic_mean_TEPS %g\n", result.searches.size(), result.result_block.teps.harmonic_mean);
  return result.searches.size() == 4 && result.result_block.teps.harmonic_mean > 0 ? 0 : 1;
}
