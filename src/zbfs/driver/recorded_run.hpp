// `zbfs model`: reads a run's JSON record (schema 3 or later) into what a projection needs,
// and prints a projection as a table. Malformed records give a one-line usage error.
#pragma once

#include <string>

#include "zbfs/network/projection.hpp"

namespace zbfs {

RecordedRun read_recorded_run(const std::string& path);

std::string format_projection(const std::string& path, const RecordedRun& run, const ProjectionTarget& target,
                              const Projection& projection);

}  // namespace zbfs
