#include "zbfs/driver/run_report.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/driver/json_report.hpp"
#include "zbfs/driver/phase_table.hpp"
#include "zbfs/driver/result_block.hpp"
#include "zbfs/driver/search_harness.hpp"

namespace zbfs {
namespace {

// Rank 0's part. Returns the one-line error of an output that could not be written.
std::optional<std::string> write_outputs(const RunResult& result) {
  const RunConfig& config = result.config;
  std::fputs(format_result_block(result.result_block).c_str(), stdout);
  // A full disk under a redirected stdout shows here, not in fputs.
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    return std::string("cannot write the result block to standard output: ") + std::strerror(errno);
  }
  if (!config.json_path.empty()) {
    try {
      write_json_report(result, config.json_path);
    } catch (const Error& e) {
      return e.what();
    }
  }
  if (!config.quiet) {
    std::fputs(
        format_phase_table(result.phases, result.num_processes, result.network, result.config.codec.name()).c_str(),
        stderr);
    const ResultBlock& block = result.result_block;
    if (block.bfs) {
      const std::string keys =
          describe_search_keys(result.searches, block.bfs->teps.median, block.bfs->teps.harmonic_mean);
      if (!keys.empty()) std::fprintf(stderr, "zbfs: %s\n", keys.c_str());
    }
    if (block.sssp) {
      const std::string keys =
          describe_search_keys(result.sssp_searches, block.sssp->teps.median, block.sssp->teps.harmonic_mean);
      if (!keys.empty()) std::fprintf(stderr, "zbfs: SSSP: %s\n", keys.c_str());
    }
    std::fprintf(stderr, "zbfs: peak memory %s per rank\n", format_bytes(result.peak_rss_bytes).c_str());
  }
  return std::nullopt;
}

}  // namespace

void report_run(const RunResult& result, const Communicator& world) {
  std::optional<std::string> failure;
  if (world.rank() == 0) failure = write_outputs(result);
  // Every rank ends with rank 0's outcome: exit status 1 everywhere when its output failed.
  world.throw_first_error(failure, ExitCode::kFailure);
}

}  // namespace zbfs
