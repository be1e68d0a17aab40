// Errors carry the process exit code that main() should use, so that every layer can
// report a problem with one exception type and main() prints exactly one line.
#pragma once

#include <stdexcept>
#include <string>

namespace zbfs {

enum class ExitCode : int {
  kOk = 0,
  kFailure = 1,           // runtime failure (I/O, internal inconsistency)
  kUsage = 2,             // bad flag, value out of range, impossible size
  kValidationFailed = 3,  // a BFS result failed Graph500 validation
};

// Where an error arose in an MPI job: on every rank at the same point (bad configuration,
// a failed validation: one rank reports it and all exit), or on some ranks only (the job
// must be aborted, or the other ranks would wait forever).
enum class ErrorScope { kThisRank, kAllRanks };

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message, ErrorScope scope = ErrorScope::kThisRank)
      : std::runtime_error(message), code_(code), scope_(scope) {}
  [[nodiscard]] ExitCode code() const noexcept { return code_; }
  [[nodiscard]] ErrorScope scope() const noexcept { return scope_; }

 private:
  ExitCode code_;
  ErrorScope scope_;
};

// Usage errors come from checks of configuration every rank holds alike.
[[noreturn]] inline void throw_usage_error(const std::string& message) {
  throw Error(ExitCode::kUsage, message, ErrorScope::kAllRanks);
}

}  // namespace zbfs
