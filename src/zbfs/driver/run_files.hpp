// Checks of a command's files before the work, so that a bad path fails at once rather
// than after a long generation or run: two flags naming one file, an output that cannot
// be created (with the reason), a dump folder that cannot be made. Collective: rank 0
// looks at the file system and every rank throws the same usage error (paths could
// resolve differently on other nodes).
#pragma once

#include <string>
#include <vector>

#include "zbfs/driver/run_config.hpp"
#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

// A file a command reads or writes, named by the flag or argument that gave it.
struct NamedFile {
  std::string flag;
  std::string path;
};

// Refuses two of `files` naming one file (after resolving links and ./, or as hard
// links): they would overwrite one another, or an output the input being read.
void refuse_shared_paths(const std::vector<NamedFile>& files, const Communicator& world);

// Refuses an output that rank 0 could not write the way every output is written
// (PATH.partial, renamed over PATH at the end), with the reason.
void require_writable_output(const std::string& path, const Communicator& world);

// All of the above for `zbfs run`: its files (--input, --write-levels, --write-parents,
// --write-distances, --json) and its frontier dump folder, which is created.
void check_run_files(const RunConfig& config, const Communicator& world);

}  // namespace zbfs
