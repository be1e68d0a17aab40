// zbfs command-line entry point: every failure becomes one line on stderr and an exit code.
#include <cstdio>
#include <exception>

#include "cli.hpp"
#include "zbfs/core/error.hpp"

int main(int argc, char** argv) {
  try {
    return zbfs::cli::run_cli(argc, argv);
  } catch (const zbfs::Error& e) {
    std::fprintf(stderr, "zbfs: error: %s\n", e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zbfs: error: %s\n", e.what());
    return static_cast<int>(zbfs::ExitCode::kFailure);
  }
}
