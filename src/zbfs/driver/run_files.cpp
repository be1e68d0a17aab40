#include "zbfs/driver/run_files.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <system_error>

#include "zbfs/core/error.hpp"
#include "zbfs/output/output_file.hpp"
#include "zbfs/output/posix_file.hpp"

namespace zbfs {
namespace {

// 0 when PATH can be opened for writing, else the errno of the attempt. A file the probe
// created is removed again: a run that fails later leaves nothing empty behind.
int creation_errno(const std::string& path) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  errno = 0;
  if (!std::ofstream(path, std::ios::app)) return errno != 0 ? errno : EACCES;
  if (!existed) std::filesystem::remove(path, ec);
  return 0;
}

// Whether two paths name one file: after resolving links and ./, or as hard links. A
// character device (/dev/null) may take several outputs: each is written in place.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  if (std::filesystem::is_character_file(a, error)) return false;
  if (std::filesystem::equivalent(a, b, error) && !error) return true;
  const auto canonical = [](const std::string& path) {
    std::error_code e;
    const std::filesystem::path resolved = std::filesystem::weakly_canonical(path, e);
    return e ? std::filesystem::path(path).lexically_normal() : resolved;
  };
  return canonical(a) == canonical(b);
}

// The run's files, by flag.
std::vector<NamedFile> run_files(const RunConfig& config) {
  std::vector<NamedFile> files;
  if (config.input) files.push_back({"--input", config.input->path});
  if (!config.write_levels.empty()) files.push_back({"--write-levels", config.write_levels});
  if (!config.write_parents.empty()) files.push_back({"--write-parents", config.write_parents});
  if (!config.write_distances.empty()) files.push_back({"--write-distances", config.write_distances});
  if (!config.json_path.empty()) files.push_back({"--json", config.json_path});
  return files;
}

// Whether rank 0 can create (or use) the directory, agreed by every rank.
bool directory_creatable(const std::string& path, const Communicator& world) {
  int ok = 0;
  if (world.rank() == 0) {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    ok = std::filesystem::is_directory(path, ec) ? 1 : 0;
  }
  world.broadcast(std::span<int>(&ok, 1), 0);
  return ok != 0;
}

}  // namespace

void refuse_shared_paths(const std::vector<NamedFile>& files, const Communicator& world) {
  std::array<int, 2> clash = {-1, -1};
  if (world.rank() == 0) {
    for (std::size_t i = 0; i < files.size() && clash[0] < 0; ++i) {
      for (std::size_t j = i + 1; j < files.size() && clash[0] < 0; ++j) {
        if (same_file(files[i].path, files[j].path)) clash = {static_cast<int>(i), static_cast<int>(j)};
      }
    }
  }
  world.broadcast(std::span<int>(clash), 0);
  if (clash[0] < 0) return;
  const NamedFile& first = files[static_cast<std::size_t>(clash[0])];
  const NamedFile& second = files[static_cast<std::size_t>(clash[1])];
  throw_usage_error(first.flag + " and " + second.flag + " name the same file '" + second.path + "'");
}

void require_writable_output(const std::string& path, const Communicator& world) {
  // -1: a directory is in the way; else the errno of creating the partial file beside
  // what PATH's links lead to, or, for a device or FIFO written in place, of access(2).
  int problem = 0;
  if (world.rank() == 0) {
    std::error_code ec;
    try {
      const OutputTarget target = output_target(path);
      if (std::filesystem::is_directory(target.path, ec)) {
        problem = -1;
      } else if (target.in_place) {
        problem = ::access(target.path.c_str(), W_OK) == 0 ? 0 : errno;
      } else {
        problem = creation_errno(partial_path_of(target.path));
      }
    } catch (const FileError&) {
      problem = ELOOP;
    }
  }
  world.broadcast(std::span<int>(&problem, 1), 0);
  if (problem == -1) throw_usage_error("cannot write '" + path + "': it is a directory");
  if (problem != 0) throw_usage_error("cannot write '" + path + "': " + std::strerror(problem));
}

void check_run_files(const RunConfig& config, const Communicator& world) {
  refuse_shared_paths(run_files(config), world);
  if (!config.dump_frontiers.empty() && !directory_creatable(config.dump_frontiers, world)) {
    throw_usage_error("cannot create the frontier dump directory '" + config.dump_frontiers + "'");
  }
  for (const std::string* path :
       {&config.write_levels, &config.write_parents, &config.write_distances, &config.json_path}) {
    if (!path->empty()) require_writable_output(*path, world);
  }
}

}  // namespace zbfs
