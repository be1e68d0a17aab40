#include "zbfs/output/ordered_file.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <vector>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

std::string mpi_error_text(int rc) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  return std::string(text, static_cast<std::size_t>(std::max(0, length)));
}

// Closes the MPI file on every path out (collective, like the open).
class OpenFile {
 public:
  explicit OpenFile(MPI_File handle) : handle_(handle) {}
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile() {
    if (handle_ != MPI_FILE_NULL) MPI_File_close(&handle_);
  }
  [[nodiscard]] MPI_File handle() const { return handle_; }
  int close() { return MPI_File_close(&handle_); }

 private:
  MPI_File handle_;
};

// Writes `bytes` at `offset` in pieces that fit MPI's int counts.
int write_at(MPI_File file, std::uint64_t offset, std::span<const char> bytes) {
  constexpr std::size_t kPiece = std::size_t{1} << 30;
  for (std::size_t done = 0; done < bytes.size(); done += kPiece) {
    const std::size_t take = std::min(kPiece, bytes.size() - done);
    const int rc = MPI_File_write_at(file, static_cast<MPI_Offset>(offset + done), bytes.data() + done,
                                     static_cast<int>(take), MPI_BYTE, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

}  // namespace

void write_ordered_file(const Communicator& world, const std::string& path, std::span<const char> header,
                        std::span<const char> mine, int position) {
  const std::string partial = path + ".partial";
  const auto ranks = static_cast<std::size_t>(world.size());
  // Where each part starts: the header, then the parts by position.
  std::vector<std::uint64_t> sizes(ranks, 0);
  std::vector<std::uint64_t> mine_at(ranks, 0);
  mine_at[static_cast<std::size_t>(position)] = mine.size();
  world.allreduce(std::span<std::uint64_t>(mine_at), ReduceOp::kSum);
  std::uint64_t header_size = world.rank() == 0 ? header.size() : 0;
  header_size = world.allreduce(header_size, ReduceOp::kMax);
  std::uint64_t offset = header_size;
  for (int p = 0; p < position; ++p) offset += mine_at[static_cast<std::size_t>(p)];

  MPI_File handle = MPI_FILE_NULL;
  int rc = MPI_File_open(world.handle(), partial.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &handle);
  world.throw_first_error(rc == MPI_SUCCESS
                              ? std::nullopt
                              : std::optional<std::string>("cannot write '" + path + "': " + mpi_error_text(rc)));
  OpenFile file(handle);
  rc = MPI_File_set_size(file.handle(), 0);  // an old partial file may be longer
  if (rc == MPI_SUCCESS && world.rank() == 0) rc = write_at(file.handle(), 0, header.first(header_size));
  if (rc == MPI_SUCCESS) rc = write_at(file.handle(), offset, mine);
  const int close_rc = file.close();
  if (rc == MPI_SUCCESS) rc = close_rc;
  std::optional<std::string> error;
  if (rc != MPI_SUCCESS) error = "writing '" + path + "' failed: " + mpi_error_text(rc);
  const std::uint64_t failed = world.allreduce(std::uint64_t{error ? 1U : 0U}, ReduceOp::kMax);
  if (world.rank() == 0) {
    std::error_code ec;
    if (failed != 0) {
      std::filesystem::remove(partial, ec);
    } else {
      std::filesystem::rename(partial, path, ec);
      if (ec) {
        error = "cannot move the finished '" + partial + "' to '" + path + "': " + ec.message();
        std::filesystem::remove(partial, ec);
      }
    }
  }
  world.throw_first_error(error);
}

}  // namespace zbfs
