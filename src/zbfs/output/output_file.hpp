// OutputFile: a file one process writes that appears under its name only when complete.
// The bytes go to NAME.partial; commit() writes what is buffered, syncs, closes and renames
// it over NAME, then syncs the folder. Any failure, and destruction before commit() (an
// exception on the way), removes NAME.partial; the error names NAME and the reason, so no
// name ever holds a half-written file and an older NAME stays as it was. Where NAME is a
// symbolic link, the file it leads to is the one replaced (the link stays); where NAME is
// a device, a FIFO or a socket, it is opened and written in place (no partial name, no
// rename) and a failure says so. Local calls.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zbfs/output/partial_files.hpp"
#include "zbfs/output/posix_file.hpp"

namespace zbfs {

// The name a file is written under until it is complete.
[[nodiscard]] std::string partial_path_of(const std::string& path);

// The one-line message of a failed output: "cannot write 'PATH': REASON", and what became
// of the partial file (removed, or why it could not be).
[[nodiscard]] std::string output_failure(const std::string& path, const std::string& reason,
                                         const std::string& removal_problem = {});

class OutputFile {
 public:
  // Creates NAME.partial; `expected_bytes` (when known) is reserved at once, so that a
  // full file system says so before anything is written. Throws Error (exit code 1).
  explicit OutputFile(std::string path, std::uint64_t expected_bytes = 0);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::span<const char> bytes);
  void write_text(std::string_view text) { write(std::span<const char>(text.data(), text.size())); }
  // Everything written is on the device, still under the partial name (so that files
  // written together can all be sealed before any takes its name); throws Error otherwise.
  void seal();
  // Seals (when not yet done) and gives the file its name; throws Error otherwise.
  void commit();
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  void flush();
  // Writes `bytes` after what is on the file already (the buffer is not involved).
  void append(std::span<const char> bytes);
  [[noreturn]] void fail(const std::string& reason);

  std::string path_;     // as the user named it, for messages
  std::string target_;   // what is written: path_ with its symbolic links followed
  std::string partial_;  // empty when written in place
  bool in_place_ = false;
  std::optional<PartialFileGuard> listed_;  // partial_, for a signal's handler, until settled
  std::optional<PosixFile> file_;           // empty once sealed
  std::vector<char> buffer_;
  std::uint64_t flushed_bytes_ = 0;
  bool settled_ = false;  // renamed, or removed after a failure: nothing left to undo
};

}  // namespace zbfs
