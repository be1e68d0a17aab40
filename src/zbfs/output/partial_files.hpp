// What a signal leaves behind: the partial files (output_file.hpp, ordered_file.hpp) this
// process has begun and not yet named or removed are listed here while they exist, as is
// a folder of numbered files being filled (zbfs trace's), and end_on_signals' handler
// removes them before the process ends by the signal.
//
// A signal handler can reach nothing but process-wide state, so the list is one fixed
// table for the process (kSlots paths and one folder, no allocation): registering takes
// a free slot, the handler reads the slots with atomic loads and calls only
// async-signal-safe functions (unlink, rmdir, write, sigaction, raise). It is the one
// global of its kind, and nothing but this file touches it.
#pragma once

#include <cstdint>
#include <string>

namespace zbfs {

// Lists `path` (a partial file about to be created) while it lives. A path longer than a
// slot holds, or one beyond kSlots at once, is not listed (and a signal then leaves it).
class PartialFileGuard {
 public:
  static constexpr int kSlots = 256;
  explicit PartialFileGuard(const std::string& path);
  ~PartialFileGuard();
  PartialFileGuard(const PartialFileGuard&) = delete;
  PartialFileGuard& operator=(const PartialFileGuard&) = delete;

 private:
  int slot_ = -1;
};

// Lists a folder being filled with numbered files, FOLDER/PREFIX<i>SUFFIX for i below the
// count `written` last said, while it lives, so that a signal's handler removes those
// files and then the folder (emptied: the file being written is an OutputFile's, listed
// on its own). zbfs trace's folder of a trace a rank is one. One folder at a time: a
// guard made while another lives lists nothing.
class PartialFolderGuard {
 public:
  PartialFolderGuard(const std::string& folder, const std::string& prefix, const std::string& suffix);
  ~PartialFolderGuard();
  PartialFolderGuard(const PartialFolderGuard&) = delete;
  PartialFolderGuard& operator=(const PartialFolderGuard&) = delete;
  // Files 0 to count - 1 may be in the folder (say so before a file takes its name).
  void written(std::uint64_t count);
  [[nodiscard]] bool listed() const { return listed_; }

 private:
  bool listed_ = false;
};

// The partial files listed now (tests).
[[nodiscard]] int listed_partial_files();

// SIGINT, SIGTERM, SIGHUP and SIGXCPU end the process as they would by default (so its
// exit status is the shells' 128 + the signal, and mpirun ends the job when one rank
// ends so), after removing the listed partial files and, where `report`, writing one
// line "PROGRAM: interrupted by SIGNAME: ..." to stderr. A signal this process started
// with ignored (nohup's SIGHUP, a background job's SIGINT) stays ignored.
void end_on_signals(const char* program, bool report);

}  // namespace zbfs
