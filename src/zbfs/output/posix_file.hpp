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

class PosixFile {
 public:
  enum class Open { kCreate, kExisting };  // kCreate truncates an old file of that name

  // Throws FileError when the file cannot be opened.
  PosixFile(const std::string& path, Open how);
  ~PosixFile();
  PosixFile(PosixFile&& other) noexcept;
  PosixFile& operator=(PosixFile&&) = delete;
  PosixFile(const PosixFile&) = delete;
  PosixFile& operator=(const PosixFile&) = delete;

  // Writes every byte at `offset` (pwrite, repeated after a short count).
  void write_at(std::uint64_t offset, std::span<const char> bytes);
  // Sets space aside for `bytes` without changing the size, so that a file system without
  // room says so before anything is written. Where the file system cannot (NFS, FUSE,
  // Lustre before 2.14) nothing happens: the writes still check every byte.
  void reserve(std::uint64_t bytes);
  void sync();
  // The file's size now (fstat).
  [[nodiscard]] std::uint64_t size() const;
  // Closes and reports what close(2) said (NFS reports a full disk there).
  void close();

 private:
  int fd_ = -1;
};

// rename(2), then fsync of the folder that holds `to`, so that the new name survives a crash.
void rename_durably(const std::string& from, const std::string& to);
// unlink(2); false (with errno's text in `reason`) when the file could not be removed.
bool remove_file(const std::string& path, std::string& reason);

}  // namespace zbfs
