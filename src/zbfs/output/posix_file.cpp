#include "zbfs/output/posix_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include "zbfs/core/memory.hpp"

#ifdef ZBFS_FAULT_INJECTION
#include <array>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <vector>
#endif

namespace zbfs {
namespace {

enum class FileOp { kOpen, kWrite, kReserve, kSync, kClose, kRename, kCount };

[[noreturn]] void throw_errno(int error) { throw FileError(std::strerror(error)); }

#ifdef ZBFS_FAULT_INJECTION
// Test builds only (tests/CMakeLists.txt builds zbfs_fault from this file with the macro
// set): ZBFS_FAULT_INJECT lists faults as OP@N=RESULT, comma-separated. OP is open, write,
// reserve, sync, close or rename; N counts that operation's calls in this process from 1,
// and "N+" means the N-th and every later call; RESULT is an errno name (ENOSPC, EIO,
// EDQUOT, EROFS, EACCES, EFBIG, ENOENT) or, for write, "short": half the bytes are written and that
// count returned, as a file system that just filled up does. Example, a disk filling mid-
// file: ZBFS_FAULT_INJECT=write@2=short,write@3+=ENOSPC.
struct Fault {
  FileOp op = FileOp::kWrite;
  std::uint64_t call = 0;
  bool and_later = false;
  int error = 0;  // 0: a short write
};

constexpr std::array<std::pair<std::string_view, FileOp>, 6> kOpNames = {{{"open", FileOp::kOpen},
                                                                          {"write", FileOp::kWrite},
                                                                          {"reserve", FileOp::kReserve},
                                                                          {"sync", FileOp::kSync},
                                                                          {"close", FileOp::kClose},
                                                                          {"rename", FileOp::kRename}}};
constexpr std::array<std::pair<std::string_view, int>, 7> kErrorNames = {{{"ENOSPC", ENOSPC},
                                                                          {"EIO", EIO},
                                                                          {"EDQUOT", EDQUOT},
                                                                          {"EROFS", EROFS},
                                                                          {"EACCES", EACCES},
                                                                          {"EFBIG", EFBIG},
                                                                          {"ENOENT", ENOENT}}};

[[noreturn]] void bad_fault_spec(std::string_view item) {
  std::fprintf(stderr, "zbfs: error: ZBFS_FAULT_INJECT: cannot read '%.*s' (want OP@N=RESULT)\n",
               static_cast<int>(item.size()), item.data());
  std::exit(2);
}

Fault parse_fault(std::string_view item) {
  const std::size_t at = item.find('@');
  const std::size_t eq = item.find('=');
  if (at == std::string_view::npos || eq == std::string_view::npos || eq < at) bad_fault_spec(item);
  Fault fault;
  const auto op =
      std::find_if(kOpNames.begin(), kOpNames.end(), [&](const auto& n) { return n.first == item.substr(0, at); });
  if (op == kOpNames.end()) bad_fault_spec(item);
  fault.op = op->second;
  std::string_view count = item.substr(at + 1, eq - at - 1);
  fault.and_later = !count.empty() && count.back() == '+';
  if (fault.and_later) count.remove_suffix(1);
  if (count.empty() || count.find_first_not_of("0123456789") != std::string_view::npos) bad_fault_spec(item);
  fault.call = std::stoull(std::string(count));
  const std::string_view result = item.substr(eq + 1);
  if (result == "short" && fault.op == FileOp::kWrite) return fault;
  const auto error =
      std::find_if(kErrorNames.begin(), kErrorNames.end(), [&](const auto& n) { return n.first == result; });
  if (error == kErrorNames.end() || fault.call == 0) bad_fault_spec(item);
  fault.error = error->second;
  return fault;
}

std::vector<Fault> parse_faults() {
  std::vector<Fault> faults;
  const char* spec = std::getenv("ZBFS_FAULT_INJECT");
  std::string_view rest = spec == nullptr ? "" : spec;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    faults.push_back(parse_fault(rest.substr(0, comma)));
    rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
  }
  return faults;
}

// The fault planned for this call of `op`, if any. Counts calls per process (a test
// build's only mutable global: the faults must survive across files).
std::optional<Fault> planned_fault(FileOp op) {
  static const std::vector<Fault> faults = parse_faults();
  static std::array<std::uint64_t, static_cast<std::size_t>(FileOp::kCount)> calls{};
  const std::uint64_t call = ++calls[static_cast<std::size_t>(op)];
  for (const Fault& f : faults) {
    if (f.op == op && (call == f.call || (f.and_later && call > f.call))) return f;
  }
  return std::nullopt;
}

// Fails the call (errno set, -1 returned) when a fault is planned for it; else runs it.
template <class Call>
auto with_fault(FileOp op, Call call) -> decltype(call()) {
  if (const auto fault = planned_fault(op); fault && fault->error != 0) {
    errno = fault->error;
    return -1;
  }
  return call();
}

// pwrite at *offset, or write(2) where offset is null.
ssize_t write_some(int fd, const char* data, std::size_t size, const std::uint64_t* offset) {
  const auto fault = planned_fault(FileOp::kWrite);
  if (fault && fault->error != 0) {
    errno = fault->error;
    return -1;
  }
  if (fault && size > 1) size /= 2;
  return offset != nullptr ? ::pwrite(fd, data, size, static_cast<off_t>(*offset)) : ::write(fd, data, size);
}
#else
template <class Call>
auto with_fault(FileOp /*op*/, Call call) -> decltype(call()) {
  return call();
}

// pwrite at *offset, or write(2) where offset is null.
ssize_t write_some(int fd, const char* data, std::size_t size, const std::uint64_t* offset) {
  return offset != nullptr ? ::pwrite(fd, data, size, static_cast<off_t>(*offset)) : ::write(fd, data, size);
}
#endif

}  // namespace

OutputTarget output_target(const std::string& path) {
  // As the kernel does, give up after 40 links.
  constexpr int kMaxLinks = 40;
  std::filesystem::path at(path);
  for (int links = 0; links <= kMaxLinks; ++links) {
    struct stat info {};
    if (::lstat(at.c_str(), &info) != 0) return {at.string(), false};  // created (or refused) at open
    if (!S_ISLNK(info.st_mode)) {
      return {at.string(), !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)};
    }
    std::error_code error;
    const std::filesystem::path next = std::filesystem::read_symlink(at, error);
    if (error) throw FileError("cannot read the symbolic link '" + at.string() + "': " + error.message());
    at = next.is_absolute() ? next : at.parent_path() / next;
  }
  throw_errno(ELOOP);
}

PosixFile::PosixFile(const std::string& path, Open how) {
  const int flags = O_WRONLY | O_CLOEXEC | (how == Open::kCreate ? O_CREAT | O_TRUNC : 0);
  do {
    fd_ = with_fault(FileOp::kOpen, [&] { return ::open(path.c_str(), flags, 0666); });
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) throw_errno(errno);
}

PosixFile::~PosixFile() {
  if (fd_ >= 0) ::close(fd_);  // only on a path that already failed; nothing left to report
}

PosixFile::PosixFile(PosixFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

void PosixFile::write_at(std::uint64_t offset, std::span<const char> bytes) { write_all(bytes, &offset); }

void PosixFile::write_next(std::span<const char> bytes) { write_all(bytes, nullptr); }

void PosixFile::write_all(std::span<const char> bytes, const std::uint64_t* offset) {
  // Linux moves at most 2^31 - 4096 bytes a call; larger pieces would come back short anyway.
  constexpr std::size_t kPiece = std::size_t{1} << 30;
  std::size_t done = 0;
  while (done < bytes.size()) {
    const std::size_t take = std::min(kPiece, bytes.size() - done);
    const std::uint64_t at = offset != nullptr ? *offset + done : 0;
    const ssize_t wrote = write_some(fd_, bytes.data() + done, take, offset != nullptr ? &at : nullptr);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno);
    }
    // A write that moves nothing and reports no error would loop forever: a full device.
    if (wrote == 0) throw_errno(ENOSPC);
    done += static_cast<std::size_t>(wrote);
  }
}

void PosixFile::reserve(std::uint64_t bytes) {
  if (bytes == 0) return;
  const int rc =
      with_fault(FileOp::kReserve, [&] { return ::fallocate(fd_, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(bytes)); });
  if (rc == 0) return;
  const int error = errno;
  if (error == EOPNOTSUPP || error == ENOSYS || error == EINVAL || error == EINTR) return;
  throw FileError(std::string(std::strerror(error)) + "; the file needs " + format_bytes(bytes));
}

void PosixFile::sync() {
  if (const int error = fsync_errno(); error != 0) throw_errno(error);
}

void PosixFile::sync_in_place() {
  const int error = fsync_errno();
  if (error != 0 && error != EINVAL && error != EROFS && error != ENOTSUP) throw_errno(error);
}

int PosixFile::fsync_errno() {
  int rc = 0;
  do {
    rc = with_fault(FileOp::kSync, [&] { return ::fsync(fd_); });
  } while (rc != 0 && errno == EINTR);
  return rc != 0 ? errno : 0;
}

std::uint64_t PosixFile::size() const {
  struct stat info {};
  if (::fstat(fd_, &info) != 0) throw_errno(errno);
  return static_cast<std::uint64_t>(info.st_size);
}

void PosixFile::close() {
  const int fd = std::exchange(fd_, -1);
  // close(2) is not retried after EINTR: on Linux the descriptor is gone either way.
  if (with_fault(FileOp::kClose, [&] { return ::close(fd); }) != 0) throw_errno(errno);
}

void rename_durably(const std::string& from, const std::string& to) {
  if (with_fault(FileOp::kRename, [&] { return ::rename(from.c_str(), to.c_str()); }) != 0) throw_errno(errno);
  std::filesystem::path folder = std::filesystem::path(to).parent_path();
  if (folder.empty()) folder = ".";
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // a folder we may not read: the rename stands, its sync is best effort
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  // Some file systems cannot sync a folder (EINVAL); an I/O error is a real failure.
  if (rc != 0 && error == EIO)
    throw FileError(std::string("the file is complete, but syncing its folder failed: ") + std::strerror(error));
}

bool remove_file(const std::string& path, std::string& reason) {
  if (::unlink(path.c_str()) == 0 || errno == ENOENT) return true;
  reason = std::strerror(errno);
  return false;
}

}  // namespace zbfs
