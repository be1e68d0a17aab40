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

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

[[noreturn]] inline void throw_usage_error(const std::string& message) { throw Error(ExitCode::kUsage, message); }

}  // namespace zbfs
