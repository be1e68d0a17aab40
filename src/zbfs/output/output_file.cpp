#include "zbfs/output/output_file.hpp"

#include <utility>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

// Small writes (the frontier dump's records) gather here before one write(2).
constexpr std::size_t kBufferBytes = std::size_t{1} << 20;

}  // namespace

std::string partial_path_of(const std::string& path) { return path + ".partial"; }

std::string output_failure(const std::string& path, const std::string& reason, const std::string& removal_problem) {
  std::string message = "cannot write '" + path + "': " + reason;
  if (removal_problem.empty()) return message + " (the partial file was removed)";
  return message + " (and its partial file '" + partial_path_of(path) + "' could not be removed: " + removal_problem +
         ")";
}

OutputFile::OutputFile(std::string path, std::uint64_t expected_bytes) : path_(std::move(path)) {
  try {
    const OutputTarget target = output_target(path_);
    target_ = target.path;
    in_place_ = target.in_place;
    if (in_place_) {
      file_.emplace(target_, PosixFile::Open::kExisting);
      settled_ = true;  // nothing to remove on the way out
    } else {
      partial_ = partial_path_of(target_);
      listed_.emplace(partial_);  // before it exists: a signal then never leaves it behind
      file_.emplace(partial_, PosixFile::Open::kCreate);
    }
  } catch (const FileError& e) {
    throw Error(ExitCode::kFailure, "cannot write '" + path_ + "': " + e.what());
  }
  if (!in_place_) {
    try {
      file_->reserve(expected_bytes);
    } catch (const FileError& e) {
      fail(e.what());
    }
  }
  buffer_.reserve(kBufferBytes);
}

OutputFile::~OutputFile() {
  if (settled_) return;
  file_.reset();
  std::string ignored;
  remove_file(partial_, ignored);  // an exception is on its way and says what went wrong
  listed_.reset();
}

void OutputFile::write(std::span<const char> bytes) {
  if (!file_) throw Error(ExitCode::kFailure, "internal: writing '" + path_ + "' after it was sealed");
  if (buffer_.size() + bytes.size() > kBufferBytes) flush();
  if (bytes.size() >= kBufferBytes) {
    append(bytes);
  } else {
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
  }
}

void OutputFile::flush() {
  append(buffer_);
  buffer_.clear();
}

void OutputFile::append(std::span<const char> bytes) {
  try {
    if (in_place_) {
      file_->write_next(bytes);
    } else {
      file_->write_at(flushed_bytes_, bytes);
    }
  } catch (const FileError& e) {
    fail(e.what());
  }
  flushed_bytes_ += bytes.size();
}

void OutputFile::seal() {
  if (!file_) return;
  flush();
  try {
    if (in_place_) {
      file_->sync_in_place();
      file_->close();
      file_.reset();
      return;
    }
    file_->sync();
    if (file_->size() != flushed_bytes_) {
      throw FileError("it holds " + std::to_string(file_->size()) + " bytes, not the " +
                      std::to_string(flushed_bytes_) + " written");
    }
    file_->close();
    file_.reset();
  } catch (const FileError& e) {
    fail(e.what());
  }
}

void OutputFile::commit() {
  seal();
  if (in_place_) return;
  try {
    rename_durably(partial_, target_);
  } catch (const FileError& e) {
    fail(e.what());
  }
  settled_ = true;
  listed_.reset();
}

void OutputFile::fail(const std::string& reason) {
  settled_ = true;
  file_.reset();
  if (in_place_) throw Error(ExitCode::kFailure, "cannot write '" + path_ + "': " + reason);
  std::string problem;
  remove_file(partial_, problem);
  listed_.reset();
  throw Error(ExitCode::kFailure, output_failure(path_, reason, problem));
}

}  // namespace zbfs
