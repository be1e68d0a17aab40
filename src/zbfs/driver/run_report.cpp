#include "zbfs/driver/run_report.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
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

// Under mpirun, rank 0's standard output is a pseudo-terminal or pipe whose bytes mpirun
// copies to its own, and a write that fails there (a full disk, > /dev/full) is mpirun's,
// which it ignores: the job would succeed with its result block lost. Where mpirun is
// this process's parent (a rank on the launching node) and its standard output is another
// file, that file is opened here (appending, as a shell's >> does: mpirun has written
// nothing there of zbfs's) so that the block is written, and a failure seen, by zbfs.
// -1 where there is no such parent: write to standard output.
int launcher_standard_output() {
  const pid_t parent = ::getppid();
  std::ifstream comm("/proc/" + std::to_string(parent) + "/comm");
  std::string name;
  if (!(comm >> name) || (name != "mpirun" && name != "mpiexec" && name != "orterun" && name != "prterun")) return -1;
  // mpirun --output-filename sends each rank's output to files of its own.
  for (char** env = environ; *env != nullptr; ++env) {
    if (std::strstr(*env, "output_filename") != nullptr) return -1;
  }
  const std::string theirs = "/proc/" + std::to_string(parent) + "/fd/1";
  struct stat their_info {};
  struct stat my_info {};
  if (::stat(theirs.c_str(), &their_info) != 0 || ::fstat(STDOUT_FILENO, &my_info) != 0) return -1;
  if (their_info.st_dev == my_info.st_dev && their_info.st_ino == my_info.st_ino) return -1;
  return ::open(theirs.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
}

// The result block on standard output, or on mpirun's (above); the error of a write
// that failed.
std::optional<std::string> write_result_block(const std::string& block) {
  if (const int fd = launcher_standard_output(); fd >= 0) {
    // Plain write(2)s, as stdio's would be (the test build's file faults are for files).
    std::size_t done = 0;
    int error = 0;
    while (done < block.size() && error == 0) {
      const ssize_t wrote = ::write(fd, block.data() + done, block.size() - done);
      if (wrote > 0) {
        done += static_cast<std::size_t>(wrote);
      } else if (wrote == 0 || errno != EINTR) {
        error = wrote == 0 ? ENOSPC : errno;
      }
    }
    if (::close(fd) != 0 && error == 0 && errno != EINTR) error = errno;
    if (error != 0) return std::string("cannot write the result block to standard output: ") + std::strerror(error);
    return std::nullopt;
  }
  std::fputs(block.c_str(), stdout);
  // A full disk under a redirected stdout shows here, not in fputs.
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    return std::string("cannot write the result block to standard output: ") + std::strerror(errno);
  }
  return std::nullopt;
}

// Rank 0's part. Returns the one-line error of an output that could not be written.
std::optional<std::string> write_outputs(const RunResult& result) {
  const RunConfig& config = result.config;
  if (auto failure = write_result_block(format_result_block(result.result_block))) return failure;
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
