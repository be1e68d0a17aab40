#include "zbfs/input/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "zbfs/core/error.hpp"

namespace zbfs {

InputFile::InputFile(std::string path) : path_(std::move(path)) {
  // A FIFO or a device is refused before it is opened: opening a FIFO waits for a writer,
  // and the ranks read their shares at offsets, which a stream does not have. O_NONBLOCK
  // keeps one that appears in between from blocking the open (it changes nothing for a
  // regular file's reads).
  const auto not_regular = [this](const struct stat& info) {
    const char* what = S_ISDIR(info.st_mode)    ? "a folder"
                       : S_ISFIFO(info.st_mode) ? "a FIFO"
                       : S_ISCHR(info.st_mode)  ? "a character device"
                       : S_ISBLK(info.st_mode)  ? "a block device"
                       : S_ISSOCK(info.st_mode) ? "a socket"
                                                : "not a regular file";
    return Error(ExitCode::kUsage, "cannot read '" + path_ + "': it is " + std::string(what) +
                                       ", and the parallel reader needs a regular file (save the stream to a file "
                                       "first)");
  };
  struct stat info {};
  if (::stat(path_.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) throw not_regular(info);
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw Error(ExitCode::kUsage, "cannot open '" + path_ + "': " + std::strerror(errno));
  if (::fstat(fd_, &info) != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    throw Error(ExitCode::kUsage, "cannot read '" + path_ + "': " + std::strerror(error));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw not_regular(info);
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
