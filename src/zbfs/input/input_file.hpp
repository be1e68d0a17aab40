// InputFile: a file opened read-only for positioned reads (pread), closed on destruction.
// Every rank of a job opens the same file and reads only its own byte ranges.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace zbfs {

class InputFile {
 public:
  // Throws Error (usage: the file is the user's input) when it cannot be opened.
  explicit InputFile(std::string path);
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::uint64_t size() const { return size_; }
  // Reads exactly out.size() bytes at `offset` (within the file); throws on I/O errors.
  void read_at(std::uint64_t offset, std::span<unsigned char> out) const;
  void read_at(std::uint64_t offset, std::span<char> out) const;

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

}  // namespace zbfs
