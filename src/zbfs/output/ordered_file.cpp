#include "zbfs/output/ordered_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/output/output_file.hpp"
#include "zbfs/output/partial_files.hpp"
#include "zbfs/output/posix_file.hpp"

namespace zbfs {
namespace {

// Where this rank's part starts, the whole file's size, and each position's part size.
struct Layout {
  std::uint64_t header_bytes = 0;
  std::uint64_t my_offset = 0;
  std::uint64_t total_bytes = 0;
  std::vector<std::uint64_t> part_bytes;
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
  layout.part_bytes = std::move(part_bytes);
  return layout;
}

// Collective: when some rank failed (`reason`), rank 0 removes the partial file `partial`
// (when there is one) and every rank throws the lowest failing rank's reason, naming PATH.
void end_if_any_failed(const Communicator& world, const std::optional<std::string>& reason, const std::string& path,
                       const std::string& partial, bool partial_exists) {
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
    if (partial_exists) remove_file(partial, problem);
    message = partial_exists ? output_failure(path, first, problem) : "cannot write '" + path + "': " + first;
  }
  world.throw_first_error(message, ExitCode::kFailure);
}

std::string on_rank(const Communicator& world, const std::string& reason) {
  return world.size() == 1 ? reason : reason + " on rank " + std::to_string(world.rank());
}

// The parts of a file written in place travel to rank 0 in pieces of this many bytes.
constexpr std::uint64_t kPieceBytes = std::uint64_t{16} << 20;
constexpr int kPieceTag = 0x2f17;

// A device, FIFO or socket (`target`, on rank 0's node) is written where it is, in one
// stream: rank 0 writes the header and the parts in position order, each received from
// the rank that holds it in pieces (P messages in all: no rank holds more than a piece of
// another's part). A failed write stops the writing but not the receiving, so that no
// rank is left waiting; then every rank throws the same error.
void write_in_place(const Communicator& world, const std::string& path, const std::string& target,
                    std::span<const char> header, std::span<const char> mine, int position, const Layout& layout) {
  const std::vector<int> positions = world.allgather_value(position);
  std::optional<PosixFile> file;
  std::optional<std::string> failure;
  if (world.rank() == 0) {
    try {
      file.emplace(target, PosixFile::Open::kExisting);
    } catch (const FileError& e) {
      failure = e.what();
    }
  }
  end_if_any_failed(world, failure, path, "", false);
  if (world.rank() != 0) {
    for (std::uint64_t at = 0; at < mine.size(); at += kPieceBytes) {
      world.send_bytes(mine.subspan(at, std::min<std::uint64_t>(kPieceBytes, mine.size() - at)), 0, kPieceTag);
    }
  } else {
    std::vector<int> rank_at(positions.size());
    for (std::size_t r = 0; r < positions.size(); ++r)
      rank_at[static_cast<std::size_t>(positions[r])] = static_cast<int>(r);
    const auto write = [&](std::span<const char> bytes) {
      if (failure) return;
      try {
        file->write_next(bytes);
      } catch (const FileError& e) {
        failure = e.what();
      }
    };
    write(header);
    std::vector<char> piece;
    for (std::size_t p = 0; p < rank_at.size(); ++p) {
      if (rank_at[p] == 0) {
        write(mine);
        continue;
      }
      const std::uint64_t bytes = layout.part_bytes[p];
      piece.resize(static_cast<std::size_t>(std::min(kPieceBytes, bytes)));
      for (std::uint64_t at = 0; at < bytes; at += kPieceBytes) {
        const std::span<char> take(piece.data(), static_cast<std::size_t>(std::min(kPieceBytes, bytes - at)));
        world.receive_bytes(take, rank_at[p], kPieceTag);
        write(take);
      }
    }
    if (!failure) {
      try {
        file->sync_in_place();
        file->close();
      } catch (const FileError& e) {
        failure = e.what();
      }
    }
    file.reset();
  }
  end_if_any_failed(world, failure, path, "", false);
}

}  // namespace

void write_ordered_file(const Communicator& world, const std::string& path, std::span<const char> header,
                        std::span<const char> mine, int position) {
  // Rank 0 follows the links of PATH; everyone writes what it found.
  std::string target = path;
  std::uint64_t in_place = 0;
  std::optional<std::string> failure;
  if (world.rank() == 0) {
    try {
      const OutputTarget found = output_target(path);
      target = found.path;
      in_place = found.in_place ? 1 : 0;
    } catch (const FileError& e) {
      failure = e.what();
    }
  }
  end_if_any_failed(world, failure, path, "", false);
  world.broadcast_string(target, 0);
  world.broadcast(std::span<std::uint64_t>(&in_place, 1), 0);
  const Layout layout = layout_of(world, header, mine.size(), position);
  if (in_place != 0) {
    write_in_place(world, path, target, header, mine, position, layout);
    return;
  }
  const std::string partial = partial_path_of(target);
  // Every rank lists it, so that a signal to any rank of the job removes it.
  const PartialFileGuard listed(partial);

  // Rank 0 creates the file (truncating a stale one) and sets its size aside, so that a
  // file system without room says so before any rank writes.
  std::optional<PosixFile> file;
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
  end_if_any_failed(world, failure, path, partial, created);

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
  end_if_any_failed(world, failure, path, partial, true);

  if (world.rank() == 0) {
    try {
      struct stat info {};
      if (::stat(partial.c_str(), &info) != 0) throw FileError(std::strerror(errno));
      if (static_cast<std::uint64_t>(info.st_size) != layout.total_bytes) {
        throw FileError("it holds " + std::to_string(info.st_size) + " bytes, not the " +
                        std::to_string(layout.total_bytes) + " written");
      }
      rename_durably(partial, target);
    } catch (const FileError& e) {
      failure = e.what();
    }
  }
  end_if_any_failed(world, failure, path, partial, true);
}

}  // namespace zbfs
