#include "zbfs/input/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "zbfs/core/error.hpp"

namespace zbfs {

InputFile::InputFile(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(ExitCode::kUsage, "cannot open '" + path_ + "': " + std::strerror(errno));
  struct stat info {};
  const bool stat_failed = ::fstat(fd_, &info) != 0;
  if (stat_failed || !S_ISREG(info.st_mode)) {
    const int error = stat_failed ? errno : 0;  // errno is stale when fstat succeeded
    ::close(fd_);
    fd_ = -1;
    throw Error(ExitCode::kUsage,
                "'" + path_ + "' is not a regular file" + (error != 0 ? std::string(": ") + std::strerror(error) : ""));
  }
  size_ = static_cast<std::uint64_t>(info.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read_at(std::uint64_t offset, std::span<unsigned char> out) const {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t got = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      throw Error(ExitCode::kFailure, "reading '" + path_ + "' at byte " + std::to_string(offset + done) + ": " +
                                          (got == 0 ? std::string("unexpected end of file") : std::strerror(errno)));
    }
    done += static_cast<std::size_t>(got);
  }
}

void InputFile::read_at(std::uint64_t offset, std::span<char> out) const {
  read_at(offset, std::span<unsigned char>(reinterpret_cast<unsigned char*>(out.data()), out.size()));
}

}  // namespace zbfs
