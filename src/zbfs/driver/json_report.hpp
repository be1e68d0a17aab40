// The machine-readable record of a run (schema "zbfs.run", versioned): configuration,
// software and host, every search's time, TEPS, levels and per-step phases, and the
// summary of the official result block.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "zbfs/driver/runner.hpp"

namespace zbfs {

inline constexpr int kRunSchemaVersion = 11;

nlohmann::json to_json(const RunResult& result);

// Writes the record to path (through PATH.partial: output/output_file.hpp); throws Error
// (exit status 1) naming the file and the reason when it cannot be written.
void write_json_report(const RunResult& result, const std::string& path);

}  // namespace zbfs
