// Output durability, end to end: no failed write leaves a file under the name asked for.
// Every writer (levels and parents in text and binary, graph files from generate and
// convert, the JSON record, the frontier dumps) is driven into failure at 1 and 4 ranks
// two ways: on a real small file system (a tmpfs mounted for the test, where the machine
// allows mounting), and through the fault-injection build (zbfs_fault: ZBFS_FAULT_INJECT
// fails or shortens the N-th write, sync, close or rename). Each case checks the exit
// status, the one-line message naming the file and the reason, that no partial file is
// left, and that the final name is absent or holds what it held before.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "command.hpp"

namespace {

namespace fs = std::filesystem;
using zbfs_test::Outcome;
using zbfs_test::run_command;
using zbfs_test::slurp;

const std::string kOldContent = "an older file that a failed run must leave as it was\n";

// A fresh folder for one test, removed with everything in it.
class Scratch {
 public:
  Scratch() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() / ("zbfs_durability_" + std::string(info->test_suite_name()) + "_" +
                                         info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// A tmpfs of `kib` KiB mounted on a folder of its own (read-only when asked), unmounted
// at the end. `skip_reason()` is set where the machine does not let tests mount one.
class SmallFileSystem {
 public:
  SmallFileSystem(const fs::path& where, int kib, bool read_only = false) : where_(where) {
    fs::create_directories(where_);
    const std::string options = "size=" + std::to_string(kib) + "k";
    if (::mount("tmpfs", where_.c_str(), "tmpfs", read_only ? MS_RDONLY : 0, options.c_str()) != 0) {
      skip_reason_ = std::string("cannot mount a tmpfs here (") + std::strerror(errno) +
                     "); the fault-injection tests cover the same failures";
      return;
    }
    mounted_ = true;
  }
  ~SmallFileSystem() {
    if (mounted_) ::umount2(where_.c_str(), MNT_DETACH);
  }
  SmallFileSystem(const SmallFileSystem&) = delete;
  SmallFileSystem& operator=(const SmallFileSystem&) = delete;
  [[nodiscard]] const std::optional<std::string>& skip_reason() const { return skip_reason_; }
  [[nodiscard]] std::string file(const std::string& name) const { return (where_ / name).string(); }
  [[nodiscard]] const fs::path& path() const { return where_; }

 private:
  fs::path where_;
  bool mounted_ = false;
  std::optional<std::string> skip_reason_;
};

// One way of writing a file: the zbfs arguments that write `out` (`input` is a graph file
// for convert).
struct Writer {
  std::string name;
  std::string file_name;
  std::string (*args)(const std::string& out, const std::string& input);
  bool only_rank_zero = false;  // the JSON record: written by rank 0 alone
  bool one_process = false;     // SSSP's distances: written by a one-process run only
};

// The searches run one thread per rank: one rank's default, the one-process kernel, claims
// vertices in top-down steps by races between its threads, so that its trees (any valid
// one) differ from run to run, and ShortWritesAreCompleted compares two runs' files.
const std::vector<Writer>& writers() {
  static const std::vector<Writer> all = {
      {"parents_text", "p.txt",
       [](const std::string& out, const std::string&) {
         return "run -q -s 13 -r 1 -t 1 --no-validate --write-parents " + out;
       }},
      {"parents_binary", "p.bin",
       [](const std::string& out, const std::string&) {
         return "run -q -s 13 -r 1 -t 1 --no-validate --write-parents " + out + " --write-format binary";
       }},
      {"levels_text", "l.txt",
       [](const std::string& out, const std::string&) {
         return "run -q -s 13 -r 1 -t 1 --no-validate --write-levels " + out;
       }},
      {"distances_text", "d.txt",
       [](const std::string& out, const std::string&) {
         return "run -q -s 12 -r 1 -t 1 --no-validate --kernels sssp --write-distances " + out;
       },
       false, true},
      {"generate_edgelist", "g.txt",
       [](const std::string& out, const std::string&) { return "generate -q -s 11 " + out; }},
      {"generate_binary", "g.zel",
       [](const std::string& out, const std::string&) { return "generate -q -s 11 " + out; }},
      {"generate_mtx", "g.mtx", [](const std::string& out, const std::string&) { return "generate -q -s 11 " + out; }},
      {"convert", "c.zel",
       [](const std::string& out, const std::string& input) { return "convert -q " + input + " " + out; }},
      {"json_record", "r.json",
       [](const std::string& out, const std::string&) { return "run -q -s 10 -r 4 --network shm --json " + out; },
       true},
  };
  return all;
}

// The command line prefix that runs `binary` on `ranks` ranks, with ZBFS_FAULT_INJECT=`fault`
// on rank `faulty_rank` only (an MPMD job), or on none.
std::string launcher(const std::string& binary, int ranks, const std::string& fault = {}, int faulty_rank = 0) {
  const std::string with_fault = fault.empty() ? binary : "env ZBFS_FAULT_INJECT=" + fault + " " + binary;
  if (ranks == 1) return with_fault;
  std::vector<std::string> parts;  // MPMD parts; all but the last take ARGS here
  if (faulty_rank > 0) parts.push_back("-np " + std::to_string(faulty_rank) + " " + binary);
  parts.push_back("-np 1 " + with_fault);
  if (faulty_rank < ranks - 1) parts.push_back("-np " + std::to_string(ranks - 1 - faulty_rank) + " " + binary);
  std::string command = "timeout 120 " + std::string(ZBFS_MPIEXEC);
  for (std::size_t i = 0; i < parts.size(); ++i) command += " " + parts[i] + (i + 1 < parts.size() ? " ARGS :" : "");
  return command;
}

// Runs `args` through `prefix`, whose ARGS placeholders (MPMD parts) take the arguments too.
Outcome run_with(std::string prefix, const std::string& args) {
  for (std::size_t at = prefix.find("ARGS"); at != std::string::npos; at = prefix.find("ARGS", at + args.size()))
    prefix.replace(at, 4, args);
  return run_command(prefix, args);
}

std::vector<std::string> partial_files(const fs::path& folder) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    if (entry.path().string().find(".partial") != std::string::npos) found.push_back(entry.path().string());
  }
  return found;
}

int error_lines(const std::string& err) {
  int n = 0;
  for (std::size_t at = err.find("zbfs: error:"); at != std::string::npos; at = err.find("zbfs: error:", at + 1)) ++n;
  return n;
}

// A job that failed with exit status 1 and one error line holding `mention`.
void expect_one_failure(const Outcome& o, const std::string& mention) {
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_EQ(error_lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find(mention), std::string::npos) << o.err;
}

// The checks every failed write must pass: exit status 1, one error line naming the file
// and the reason (and that the partial file was removed, when one was made), no partial
// file, and the final name as it was (absent, or the old file).
void expect_failed_write(const Outcome& o, const std::string& out, const std::string& reason, bool had_old_file,
                         const std::string& context, bool partial_made = true) {
  EXPECT_EQ(o.status, 1) << context << "\nstderr: " << o.err;
  EXPECT_EQ(error_lines(o.err), 1) << context << "\nstderr: " << o.err;
  EXPECT_NE(o.err.find("zbfs: error: cannot write '" + out + "': "), std::string::npos) << context << "\n" << o.err;
  EXPECT_NE(o.err.find(reason), std::string::npos) << context << ": expected '" << reason << "' in\n" << o.err;
  EXPECT_EQ(o.err.find("(the partial file was removed)") != std::string::npos, partial_made) << context << "\n"
                                                                                             << o.err;
  EXPECT_TRUE(partial_files(fs::path(out).parent_path()).empty()) << context;
  if (had_old_file) {
    EXPECT_EQ(slurp(out), kOldContent) << context << ": the older file was changed";
  } else {
    EXPECT_FALSE(fs::exists(out)) << context << ": a failed write left '" << out << "'";
  }
}

// A small edge list for convert to read (outside the file system under test).
std::string convert_input(const Scratch& scratch) {
  const std::string input = scratch.file("input.txt");
  if (!fs::exists(input)) {
    const Outcome o = run_command(ZBFS_BINARY, "generate -q -s 11 " + input);
    EXPECT_EQ(o.status, 0) << o.err;
  }
  return input;
}

// ---- The fault-injection build ----

// The faults each writer meets at 1 rank, with the errno text the message must carry.
struct Fault {
  std::string spec;
  std::string reason;
  bool partial_made = true;
};

std::vector<Fault> one_rank_faults() {
  return {
      {"write@1=ENOSPC", std::strerror(ENOSPC)},
      {"write@1=short,write@2+=ENOSPC", std::strerror(ENOSPC)},  // the disk fills mid-file
      {"write@1+=EIO", std::strerror(EIO)},
      {"reserve@1=EDQUOT", std::strerror(EDQUOT)},
      {"sync@1=EIO", std::strerror(EIO)},
      {"close@1=EDQUOT", std::strerror(EDQUOT)},  // NFS reports a full quota at close
      {"rename@1=EIO", std::strerror(EIO)},
      {"open@1=EACCES", std::strerror(EACCES), false},
  };
}

TEST(FaultInjection, EveryWriterFailsCleanlyOnOneRank) {
  const Scratch scratch;
  const std::string input = convert_input(scratch);
  int case_number = 0;
  for (const Writer& w : writers()) {
    for (const Fault& fault : one_rank_faults()) {
      const std::string out = scratch.file(w.file_name);
      const bool had_old_file = (case_number++ % 2) == 0;
      fs::remove(out);
      if (had_old_file) std::ofstream(out) << kOldContent;
      const Outcome o = run_with(launcher(ZBFS_FAULT_BINARY, 1, fault.spec), w.args(out, input));
      expect_failed_write(o, out, fault.reason, had_old_file, w.name + " with " + fault.spec, fault.partial_made);
    }
  }
}

// A write that moves fewer bytes than asked is not an error: the rest follows, and the
// file is byte for byte what a run without faults writes on as many ranks (parents may
// differ between rank counts: any BFS tree is valid).
TEST(FaultInjection, ShortWritesAreCompleted) {
  const Scratch scratch;
  const std::string input = convert_input(scratch);
  for (const Writer& w : writers()) {
    if (w.name == "json_record") continue;  // its times differ from run to run
    for (const int ranks : {1, 4}) {
      if (w.one_process && ranks > 1) continue;
      const std::string context = w.name + " on " + std::to_string(ranks) + " ranks";
      const std::string expected = scratch.file("expected_" + w.file_name);
      ASSERT_EQ(run_with(launcher(ZBFS_BINARY, ranks), w.args(expected, input)).status, 0) << context;
      const std::string out = scratch.file(w.file_name);
      const Outcome o = run_with(launcher(ZBFS_FAULT_BINARY, ranks, "write@1+=short", ranks - 1), w.args(out, input));
      ASSERT_EQ(o.status, 0) << context << "\n" << o.err;
      EXPECT_TRUE(slurp(out) == slurp(expected)) << context << ": the file differs from a run without faults";
    }
  }
}

// At 4 ranks the failing rank is not rank 0 (except for the JSON record, which only rank 0
// writes): every rank must agree, end with status 1, and none may rename the file.
TEST(FaultInjection, EveryWriterFailsCleanlyOnFourRanks) {
  const Scratch scratch;
  const std::string input = convert_input(scratch);
  const std::vector<Fault> faults = {{"write@1+=ENOSPC", std::strerror(ENOSPC)}, {"sync@1=EIO", std::strerror(EIO)}};
  int case_number = 0;
  for (const Writer& w : writers()) {
    if (w.one_process) continue;
    for (const Fault& fault : faults) {
      const std::string out = scratch.file(w.file_name);
      const bool had_old_file = (case_number++ % 2) == 1;
      fs::remove(out);
      if (had_old_file) std::ofstream(out) << kOldContent;
      const int faulty_rank = w.only_rank_zero ? 0 : 2;
      const Outcome o = run_with(launcher(ZBFS_FAULT_BINARY, 4, fault.spec, faulty_rank), w.args(out, input));
      const std::string context = w.name + " with " + fault.spec + " on rank " + std::to_string(faulty_rank);
      expect_failed_write(o, out, fault.reason, had_old_file, context);
      if (!w.only_rank_zero) {
        EXPECT_NE(o.err.find(fault.reason + " on rank 2 (the partial file was removed)"), std::string::npos)
            << context << "\n"
            << o.err;
      }
    }
  }
}

// A rank that cannot open the file rank 0 created (a folder that is not shared by every
// node) ends the job with a message that says so, and nothing is left.
TEST(FaultInjection, ARankThatCannotSeeTheFileEndsTheJob) {
  const Scratch scratch;
  const std::string out = scratch.file("p.txt");
  const Outcome o = run_with(launcher(ZBFS_FAULT_BINARY, 4, "open@1=ENOENT", 1),
                             "run -q -s 8 -r 1 --no-validate --write-parents " + out);
  expect_one_failure(o, "zbfs: error: cannot write '" + out + "': rank 1 cannot open the file rank 0 created (" +
                            std::strerror(ENOENT) + "): is the folder on a file system every node shares?");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(partial_files(scratch.path()).empty());
}

// Each rank writes a dump of its own; one rank's failure ends the job and no rank's dump
// takes its name.
TEST(FaultInjection, FrontierDumpsFailTogether) {
  const Scratch scratch;
  const std::string dumps = scratch.file("dumps");
  const Outcome o = run_with(launcher(ZBFS_FAULT_BINARY, 4, "close@1=EIO", 3),
                             "run -q -s 10 -r 2 --network shm --dump-frontiers " + dumps);
  expect_one_failure(o, "cannot write '" + dumps + "/rank-3.zbfsdump': " + std::strerror(EIO));
  EXPECT_TRUE(partial_files(dumps).empty());
  EXPECT_TRUE(fs::is_empty(dumps)) << "a dump took its name although rank 3's failed";
}

// The seam exists only in the test build: zbfs itself ignores the variable.
TEST(FaultInjection, TheProductBuildHasNoSeam) {
  const Scratch scratch;
  const std::string out = scratch.file("p.txt");
  const Outcome o = run_command("env ZBFS_FAULT_INJECT=write@1+=ENOSPC " + std::string(ZBFS_BINARY),
                                "run -q -s 8 -r 1 --no-validate --write-parents " + out);
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(fs::exists(out));
  const Outcome bad = run_command("env ZBFS_FAULT_INJECT=write@x=EIO " + std::string(ZBFS_FAULT_BINARY),
                                  "run -q -s 8 -r 1 --no-validate --write-parents " + out);
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_NE(bad.err.find("ZBFS_FAULT_INJECT: cannot read 'write@x=EIO'"), std::string::npos) << bad.err;
}

// ---- A real small file system ----

// 16 KiB: smaller than every writer's output here.
constexpr int kSmallFileSystemKiB = 16;

TEST(SmallFileSystem, EveryWriterFailsCleanlyWhenTheDiskIsFull) {
  const Scratch scratch;
  const SmallFileSystem small(scratch.path() / "small", kSmallFileSystemKiB);
  if (small.skip_reason()) GTEST_SKIP() << *small.skip_reason();
  const std::string input = convert_input(scratch);
  int case_number = 0;
  for (const Writer& w : writers()) {
    for (const int ranks : {1, 4}) {
      if (w.one_process && ranks > 1) {
        ++case_number;  // the other writers keep their old files' turns
        continue;
      }
      const std::string out = small.file(w.file_name);
      const bool had_old_file = (case_number++ % 2) == 0;
      fs::remove(out);
      if (had_old_file) std::ofstream(out) << kOldContent;
      const Outcome o = run_with(launcher(ZBFS_BINARY, ranks), w.args(out, input));
      expect_failed_write(o, out, std::strerror(ENOSPC), had_old_file, w.name + " on " + std::to_string(ranks));
    }
  }
}

// The dumps' size is not known in advance, so nothing is set aside: here the write
// itself meets the full disk.
TEST(SmallFileSystem, FrontierDumpsFailCleanlyWhenTheDiskIsFull) {
  const Scratch scratch;
  const SmallFileSystem small(scratch.path() / "small", kSmallFileSystemKiB);
  if (small.skip_reason()) GTEST_SKIP() << *small.skip_reason();
  const std::string dumps = small.file("dumps");
  const Outcome o = run_with(launcher(ZBFS_BINARY, 2), "run -q -s 11 -r 2 --network shm --dump-frontiers " + dumps);
  expect_one_failure(o, std::string(std::strerror(ENOSPC)) + " (the partial file was removed)");
  EXPECT_TRUE(partial_files(small.path()).empty());
  EXPECT_TRUE(fs::is_empty(dumps));
}

// A read-only folder is found before the work: exit status 2, the reason given.
TEST(SmallFileSystem, ReadOnlyFolderIsRefusedUpFront) {
  const Scratch scratch;
  const SmallFileSystem small(scratch.path() / "readonly", kSmallFileSystemKiB, /*read_only=*/true);
  if (small.skip_reason()) GTEST_SKIP() << *small.skip_reason();
  const std::string input = convert_input(scratch);
  for (const Writer& w : writers()) {
    const std::string out = small.file(w.file_name);
    const Outcome o = run_with(launcher(ZBFS_BINARY, 1), w.args(out, input));
    EXPECT_EQ(o.status, 2) << w.name << "\n" << o.err;
    EXPECT_EQ(o.err, "zbfs: error: cannot write '" + out + "': " + std::strerror(EROFS) + "\n") << w.name;
    EXPECT_FALSE(fs::exists(out)) << w.name;
  }
}

// The result block on a full standard output is an error too (exit status 1).
TEST(SmallFileSystem, FullStandardOutputIsAnError) {
  // The inner shell sends stdout to /dev/full; run_command's own redirection is outside it.
  const Outcome o = run_command("sh -c '\"$0\" run -q -s 8 -r 1 --no-validate >/dev/full'", std::string(ZBFS_BINARY));
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_EQ(o.err, std::string("zbfs: error: cannot write the result block to standard output: ") +
                       std::strerror(ENOSPC) + "\n");
}

// Under mpirun too: rank 0's output reaches the file through mpirun, which would drop it
// and let the job succeed; zbfs writes it there itself and fails with one line.
TEST(SmallFileSystem, FullStandardOutputUnderMpirunIsAnError) {
  const Outcome o = run_command("sh -c '" + std::string(ZBFS_MPIEXEC) + " -np 4 \"$0\" run -q -s 8 -r 2 >/dev/full'",
                                std::string(ZBFS_BINARY));
  EXPECT_NE(o.status, 0) << o.err;
  EXPECT_EQ(error_lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find(std::string("zbfs: error: cannot write the result block to standard output: ") +
                       std::strerror(ENOSPC) + "\n"),
            std::string::npos)
      << o.err;
  // And a file still gets the block, once per run, appended as >> asks.
  const Scratch scratch;
  const std::string out = scratch.file("block.txt");
  for (int run = 0; run < 2; ++run) {
    const Outcome ok =
        run_command("sh -c '" + std::string(ZBFS_MPIEXEC) + " -np 4 \"$0\" run -q -s 8 -r 2 >>" + out + "'",
                    std::string(ZBFS_BINARY));
    EXPECT_EQ(ok.status, 0) << ok.err;
  }
  const std::string text = slurp(out);
  EXPECT_EQ(text.find("SCALE:"), 0U) << text;
  EXPECT_NE(text.find("SCALE:", 1), std::string::npos) << text;
}

// ---- Outputs that are not regular files ----

// A character device node made in the scratch folder (never /dev): `major`, `minor` as
// /dev/null's (1, 3) or /dev/full's (1, 7). Empty where the machine does not allow it.
std::optional<std::string> device_node(const Scratch& scratch, const std::string& name, unsigned major,
                                       unsigned minor) {
  const std::string path = scratch.file(name);
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(major, minor)) != 0) return std::nullopt;
  // A folder mounted nodev holds the node but refuses to open it.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  ::close(fd);
  return path;
}

bool is_char_device(const std::string& path, dev_t rdev) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISCHR(info.st_mode) && info.st_rdev == rdev;
}

// Every writer into a device node: /dev/null's takes the output and stays the device it
// was; /dev/full's refuses it with ENOSPC in one line (exit status 1) and stays too. No
// partial name is made beside either.
TEST(SpecialFiles, DevicesAreWrittenInPlaceAndNeverReplaced) {
  const Scratch scratch;
  const std::optional<std::string> null = device_node(scratch, "null", 1, 3);
  const std::optional<std::string> full = device_node(scratch, "full", 1, 7);
  if (!null || !full) {
    GTEST_SKIP() << "cannot make and open device nodes here (mknod needs root, and a folder not mounted nodev): "
                 << std::strerror(errno);
  }
  const std::string input = convert_input(scratch);
  for (const Writer& w : writers()) {
    for (const int ranks : {1, 4}) {
      if (w.one_process && ranks > 1) continue;
      const std::string context = w.name + " on " + std::to_string(ranks) + " ranks";
      const Outcome to_null = run_with(launcher(ZBFS_BINARY, ranks), w.args(*null, input));
      EXPECT_EQ(to_null.status, 0) << context << "\n" << to_null.err;
      EXPECT_TRUE(is_char_device(*null, makedev(1, 3))) << context << ": the device node was replaced";
      const Outcome to_full = run_with(launcher(ZBFS_BINARY, ranks), w.args(*full, input));
      expect_one_failure(to_full, "zbfs: error: cannot write '" + *full + "': " + std::strerror(ENOSPC) + "\n");
      EXPECT_EQ(to_full.err.find("partial"), std::string::npos) << context << "\n" << to_full.err;
      EXPECT_TRUE(is_char_device(*full, makedev(1, 7))) << context << ": the device node was replaced";
      EXPECT_TRUE(partial_files(scratch.path()).empty()) << context;
    }
  }
}

// What a reader of a FIFO gets: started before the writer, it reads to the end. A writer
// that never opens the FIFO is let go by opening it once for writing without waiting.
class FifoReader {
 public:
  explicit FifoReader(std::string path) : path_(std::move(path)) {
    thread_ = std::thread([this] { text_ = slurp(path_); });
  }
  std::string finish() {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    thread_.join();
    return text_;
  }
  ~FifoReader() {
    if (thread_.joinable()) finish();
  }
  FifoReader(const FifoReader&) = delete;
  FifoReader& operator=(const FifoReader&) = delete;

 private:
  std::string path_;
  std::string text_;
  std::thread thread_;
};

bool is_fifo(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISFIFO(info.st_mode);
}

// Every writer into a FIFO (named as its regular file, whose extension picks the format):
// its reader gets what the writer puts in a regular file (the JSON record: a record, its
// times differ), and the FIFO stays a FIFO.
TEST(SpecialFiles, AFifoIsWrittenInPlace) {
  const Scratch scratch;
  const std::string input = convert_input(scratch);
  for (const Writer& w : writers()) {
    const std::string fifo = scratch.file("fifo_" + w.file_name);
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    for (const int ranks : {1, 4}) {
      if (w.one_process && ranks > 1) continue;
      const std::string context = w.name + " on " + std::to_string(ranks) + " ranks";
      const std::string regular = scratch.file(w.file_name);
      ASSERT_EQ(run_with(launcher(ZBFS_BINARY, ranks), w.args(regular, input)).status, 0) << context;
      FifoReader reader(fifo);
      const Outcome o = run_with(launcher(ZBFS_BINARY, ranks), w.args(fifo, input));
      const std::string got = reader.finish();
      EXPECT_EQ(o.status, 0) << context << "\n" << o.err;
      EXPECT_TRUE(is_fifo(fifo)) << context << ": the FIFO was replaced";
      if (w.only_rank_zero) {
        EXPECT_TRUE(got.starts_with("{")) << context;
      } else {
        EXPECT_TRUE(got == slurp(regular)) << context << ": " << got.size() << " bytes, not " << slurp(regular).size();
      }
      EXPECT_TRUE(partial_files(scratch.path()).empty()) << context;
    }
  }
}

// A symbolic link is followed: its target (in another folder) is replaced durably and the
// link stays; a link to a file not there yet creates it.
TEST(SpecialFiles, SymbolicLinksAreFollowedAndKept) {
  const Scratch scratch;
  const std::string input = convert_input(scratch);
  fs::create_directories(scratch.path() / "elsewhere");
  for (const Writer& w : writers()) {
    const int ranks = w.one_process ? 1 : 4;
    const std::string context = w.name + " on " + std::to_string(ranks) + " ranks";
    const std::string regular = scratch.file(w.file_name);
    ASSERT_EQ(run_with(launcher(ZBFS_BINARY, ranks), w.args(regular, input)).status, 0) << context;
    const std::string target = scratch.file("elsewhere/" + w.file_name);
    const std::string missing = scratch.file("elsewhere/new_" + w.file_name);
    std::ofstream(target) << kOldContent;
    fs::remove(missing);
    const std::string link = scratch.file("link_" + w.file_name);
    const std::string dangling = scratch.file("dangling_" + w.file_name);
    fs::remove(link);
    fs::remove(dangling);
    fs::create_symlink(fs::path("elsewhere") / w.file_name, link);
    fs::create_symlink(fs::path("elsewhere") / ("new_" + w.file_name), dangling);
    for (const auto& [name, file] : {std::pair{link, target}, std::pair{dangling, missing}}) {
      const Outcome o = run_with(launcher(ZBFS_BINARY, ranks), w.args(name, input));
      EXPECT_EQ(o.status, 0) << context << "\n" << o.err;
      EXPECT_TRUE(fs::is_symlink(name)) << context << ": the link was replaced";
      if (w.only_rank_zero) {
        EXPECT_TRUE(slurp(file).starts_with("{")) << context;
      } else {
        EXPECT_TRUE(slurp(file) == slurp(regular)) << context << ": the link's target is not the output";
      }
    }
    EXPECT_TRUE(partial_files(scratch.path()).empty()) << context;
  }
}

}  // namespace
