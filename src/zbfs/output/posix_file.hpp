// PosixFile: a file open for writing (RAII: closed on destruction) whose every call checks
// what the kernel did. A write that falls short goes on with the rest; one that fails, a
// failed sync, close or rename throws FileError with errno's text. This is the one place
// where zbfs's output calls write(2), fsync(2), close(2) and rename(2), so the test build's
// fault injection sits here (see ZBFS_FAULT_INJECTION in posix_file.cpp). Local calls.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace zbfs {

// A failed file operation: `reason` is errno's text (or what was wrong), without a path;
// callers name the file they were writing.
class FileError : public std::runtime_error {
 public:
  explicit FileError(const std::string& reason) : std::runtime_error(reason) {}
};

// What an output path names, once symbolic links are followed: the file written is the
// last link's target (the links stay as they are). `in_place`: it exists and is neither a
// regular file nor a folder (a character or block device, a FIFO, a socket), so it is
// opened and written as it is, never replaced, as coreutils write to one.
struct OutputTarget {
  std::string path;
  bool in_place = false;
};
// Throws FileError on a loop of links (ELOOP) or a link that cannot be read.
[[nodiscard]] OutputTarget output_target(const std::string& path);

class PosixFile {
 public:
  // kCreate truncates an old file of that name; kExisting opens one without creating or
  // truncating it (a device, a FIFO: opening a FIFO waits for its reader).
  enum class Open { kCreate, kExisting };

  // Throws FileError when the file cannot be opened.
  PosixFile(const std::string& path, Open how);
  ~PosixFile();
  PosixFile(PosixFile&& other) noexcept;
  PosixFile& operator=(PosixFile&&) = delete;
  PosixFile(const PosixFile&) = delete;
  PosixFile& operator=(const PosixFile&) = delete;

  // Writes every byte at `offset` (pwrite, repeated after a short count).
  void write_at(std::uint64_t offset, std::span<const char> bytes);
  // Writes every byte where the file stands (write(2)): what a FIFO or a device takes.
  void write_next(std::span<const char> bytes);
  // Sets space aside for `bytes` without changing the size, so that a file system without
  // room says so before anything is written. Where the file system cannot (NFS, FUSE,
  // Lustre before 2.14) nothing happens: the writes still check every byte.
  void reserve(std::uint64_t bytes);
  void sync();
  // sync() for a file written in place: a FIFO, a terminal or /dev/null cannot be synced
  // (EINVAL, EROFS), which is no failure.
  void sync_in_place();
  // The file's size now (fstat).
  [[nodiscard]] std::uint64_t size() const;
  // Closes and reports what close(2) said (NFS reports a full disk there).
  void close();

 private:
  void write_all(std::span<const char> bytes, const std::uint64_t* offset);
  // fsync(2), retried after EINTR: 0, or the errno of its failure.
  int fsync_errno();

  int fd_ = -1;
};

// rename(2), then fsync of the folder that holds `to`, so that the new name survives a crash.
void rename_durably(const std::string& from, const std::string& to);
// unlink(2); false (with errno's text in `reason`) when the file could not be removed.
bool remove_file(const std::string& path, std::string& reason);

}  // namespace zbfs
