#include "zbfs/output/ordered_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/output/output_file.hpp"
#include "zbfs/output/posix_file.hpp"

namespace zbfs {
namespace {

// Where this rank's part starts, and the whole file's size.
struct Layout {
  std::uint64_t header_bytes = 0;
  std::uint64_t my_offset = 0;
  std::uint64_t total_bytes = 0;
};

Layout layout_of(const Communicator& world, std::span<const char> header, std::uint64_t mine_bytes, int position) {
  std::vector<std::uint64_t> part_bytes(static_cast<std::size_t>(world.size()), 0);
  part_bytes[static_cast<std::size_t>(position)] = mine_bytes;
  world.allreduce(std::span<std::uint64_t>(part_bytes), ReduceOp::kSum);
  Layout layout;
  layout.header_bytes = world.allreduce(std::uint64_t{world.rank() == 0 ? header.size() : 0}, ReduceOp::kMax);
  layout.total_bytes = layout.header_bytes;
  for (std::size_t p = 0; p < part_bytes.size(); ++p) {
    if (p == static_cast<std::size_t>(position)) layout.my_offset = layout.total_bytes;
    layout.total_bytes += part_bytes[p];
  }
  return layout;
}

// Collective: when some rank failed (`reason`), rank 0 removes the partial file (when there
// is one) and every rank throws the lowest failing rank's reason, naming PATH.
void end_if_any_failed(const Communicator& world, const std::optional<std::string>& reason, const std::string& path,
                       bool partial_exists) {
  if (world.allreduce(std::uint64_t{reason ? 1U : 0U}, ReduceOp::kMax) == 0) return;
  std::string first;
  for (const std::string& r : world.allgather_strings(reason.value_or(""))) {
    if (!r.empty()) {
      first = r;
      break;
    }
  }
  std::optional<std::string> message;
  if (world.rank() == 0) {
    std::string problem;
    if (partial_exists) remove_file(partial_path_of(path), problem);
    message = partial_exists ? output_failure(path, first, problem) : "cannot write '" + path + "': " + first;
  }
  world.throw_first_error(message, ExitCode::kFailure);
}

std::string on_rank(const Communicator& world, const std::string& reason) {
  return world.size() == 1 ? reason : reason + " on rank " + std::to_string(world.rank());
}

}  // namespace

void write_ordered_file(const Communicator& world, const std::string& path, std::span<const char> header,
                        std::span<const char> mine, int position) {
  const std::string partial = partial_path_of(path);
  const Layout layout = layout_of(world, header, mine.size(), position);

  // Rank 0 creates the file (truncating a stale one) and sets its size aside, so that a
  // file system without room says so before any rank writes.
  std::optional<PosixFile> file;
  std::optional<std::string> failure;
  if (world.rank() == 0) {
    try {
      file.emplace(partial, PosixFile::Open::kCreate);
      file->reserve(layout.total_bytes);
    } catch (const FileError& e) {
      failure = e.what();
    }
  }
  const bool created = world.allreduce(std::uint64_t{file ? 1U : 0U}, ReduceOp::kMax) != 0;
  if (failure) file.reset();  // closed before it is removed
  end_if_any_failed(world, failure, path, created);

  // Every rank writes its part and syncs it. The others open rank 0's file without
  // creating one: a folder that is not shared by every node fails here instead of leaving
  // each node a file of its own.
  if (!file) {
    try {
      file.emplace(partial, PosixFile::Open::kExisting);
    } catch (const FileError& e) {
      failure = "rank " + std::to_string(world.rank()) + " cannot open the file rank 0 created (" + e.what() +
                "): is the folder on a file system every node shares?";
    }
  }
  if (file) {
    try {
      if (world.rank() == 0) file->write_at(0, header);
      file->write_at(layout.my_offset, mine);
      file->sync();
      file->close();
    } catch (const FileError& e) {
      failure = on_rank(world, e.what());
    }
  }
  file.reset();
  end_if_any_failed(world, failure, path, true);

  if (world.rank() == 0) {
    try {
      struct stat info {};
      if (::stat(partial.c_str(), &info) != 0) throw FileError(std::strerror(errno));
      if (static_cast<std::uint64_t>(info.st_size) != layout.total_bytes) {
        throw FileError("it holds " + std::to_string(info.st_size) + " bytes, not the " +
                        std::to_string(layout.total_bytes) + " written");
      }
      rename_durably(partial, path);
    } catch (const FileError& e) {
      failure = e.what();
    }
  }
  end_if_any_failed(world, failure, path, true);
}

}  // namespace zbfs
