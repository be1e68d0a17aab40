// Command-line front end: parses `zbfs <command> [options]` with CLI11 and runs it.
// Returns the process exit status; throws zbfs::Error for failures main() reports.
#pragma once

namespace zbfs::cli {

int run_cli(int argc, char** argv);

}  // namespace zbfs::cli
