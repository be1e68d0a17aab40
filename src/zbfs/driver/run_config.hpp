// Everything that configures one benchmark run, typed and in one place; echoed into the
// JSON record. Validation of ranges happens in validate_config(), not in the CLI layer,
// so that library users get the same checks.
#pragma once

#include <cstdint>
#include <string>

#include "zbfs/bfs/bfs_options.hpp"

namespace zbfs {

struct RunConfig {
  int scale = 16;
  std::uint64_t edgefactor = 16;
  std::uint64_t seed = 1;
  std::uint64_t num_roots = 64;
  BfsOptions bfs;
  int threads = 0;  // 0: OpenMP's default
  bool validate = true;
  bool force = false;  // run even when the memory estimate exceeds available memory
  bool quiet = false;  // no progress on stderr
  std::string json_path;
};

// Throws a usage error (exit status 2) for values out of range.
void validate_config(const RunConfig& config);

// Bytes the run needs at its peak, estimated before anything is allocated.
std::uint64_t estimate_peak_memory_bytes(const RunConfig& config);

}  // namespace zbfs
