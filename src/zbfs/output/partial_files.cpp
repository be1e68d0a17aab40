#include "zbfs/output/partial_files.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>

namespace zbfs {
namespace {

constexpr std::size_t kPathBytes = 4096;  // PATH_MAX on Linux, its terminating 0 included

enum SlotState : int { kFree = 0, kFilling = 1, kListed = 2 };

struct Slot {
  std::atomic<int> state{kFree};
  std::array<char, kPathBytes> path{};
};

// The process's list (see the header for why it is global): read by the signal handler.
std::array<Slot, PartialFileGuard::kSlots> g_partial_files;

// The one folder of numbered files a signal empties and removes (PartialFolderGuard).
struct FolderSlot {
  std::atomic<int> state{kFree};
  std::atomic<std::uint64_t> files{0};
  std::array<char, kPathBytes> folder{};
  std::array<char, 64> prefix{};
  std::array<char, 64> suffix{};
};
FolderSlot g_partial_folder;

// Appends `text` to the path being built in `out` (at `at`); false when it does not fit.
bool append(std::array<char, kPathBytes + 160>& out, std::size_t& at, const char* text) {
  for (; *text != 0; ++text) {
    if (at + 1 >= out.size()) return false;
    out[at++] = *text;
  }
  out[at] = 0;
  return true;
}

// Async-signal-safe: the folder's numbered files, then the folder; how many files went.
int remove_partial_folder() {
  if (g_partial_folder.state.load(std::memory_order_acquire) != kListed) return 0;
  int removed = 0;
  const std::uint64_t files = g_partial_folder.files.load(std::memory_order_acquire);
  std::array<char, kPathBytes + 160> path{};
  for (std::uint64_t i = 0; i < files; ++i) {
    char digits[24];
    std::size_t n = 0;
    std::uint64_t v = i;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    char number[24];
    for (std::size_t k = 0; k < n; ++k) number[k] = digits[n - 1 - k];
    number[n] = 0;
    std::size_t at = 0;
    if (append(path, at, g_partial_folder.folder.data()) && append(path, at, "/") &&
        append(path, at, g_partial_folder.prefix.data()) && append(path, at, number) &&
        append(path, at, g_partial_folder.suffix.data()) && ::unlink(path.data()) == 0) {
      ++removed;
    }
  }
  if (::rmdir(g_partial_folder.folder.data()) == 0) ++removed;
  return removed;
}

// What the handler writes, set once before it is installed.
std::array<char, 64> g_program{};
bool g_report = false;

constexpr int kEndingSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGXCPU};

const char* signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    case SIGXCPU: return "SIGXCPU";
    default: return "a signal";
  }
}

void write_all(const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t wrote = ::write(STDERR_FILENO, text, left);
    if (wrote <= 0) return;
    text += wrote;
    left -= static_cast<std::size_t>(wrote);
  }
}

// Async-signal-safe from here to the end of the process.
void on_ending_signal(int signal_number) {
  int removed = 0;
  for (Slot& slot : g_partial_files) {
    if (slot.state.load(std::memory_order_acquire) == kListed && ::unlink(slot.path.data()) == 0) ++removed;
  }
  removed += remove_partial_folder();  // after the files: the one being written is in it
  if (g_report) {
    write_all(g_program.data());
    write_all(": interrupted by ");
    write_all(signal_name(signal_number));
    write_all(removed > 0 ? ": the run was stopped and its partial files removed\n" : ": the run was stopped\n");
  }
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  ::sigaction(signal_number, &fallback, nullptr);
  ::raise(signal_number);  // delivered when the handler returns (the signal is blocked in it)
}

}  // namespace

PartialFileGuard::PartialFileGuard(const std::string& path) {
  if (path.size() >= kPathBytes) return;
  for (int i = 0; i < kSlots; ++i) {
    Slot& slot = g_partial_files[static_cast<std::size_t>(i)];
    int expected = kFree;
    if (!slot.state.compare_exchange_strong(expected, kFilling, std::memory_order_acquire)) continue;
    std::memcpy(slot.path.data(), path.c_str(), path.size() + 1);
    slot.state.store(kListed, std::memory_order_release);
    slot_ = i;
    return;
  }
}

PartialFileGuard::~PartialFileGuard() {
  if (slot_ >= 0) g_partial_files[static_cast<std::size_t>(slot_)].state.store(kFree, std::memory_order_release);
}

PartialFolderGuard::PartialFolderGuard(const std::string& folder, const std::string& prefix,
                                       const std::string& suffix) {
  if (folder.size() >= kPathBytes || prefix.size() >= g_partial_folder.prefix.size() ||
      suffix.size() >= g_partial_folder.suffix.size()) {
    return;
  }
  int expected = kFree;
  if (!g_partial_folder.state.compare_exchange_strong(expected, kFilling, std::memory_order_acquire)) return;
  g_partial_folder.files.store(0, std::memory_order_relaxed);
  std::memcpy(g_partial_folder.folder.data(), folder.c_str(), folder.size() + 1);
  std::memcpy(g_partial_folder.prefix.data(), prefix.c_str(), prefix.size() + 1);
  std::memcpy(g_partial_folder.suffix.data(), suffix.c_str(), suffix.size() + 1);
  g_partial_folder.state.store(kListed, std::memory_order_release);
  listed_ = true;
}

PartialFolderGuard::~PartialFolderGuard() {
  if (listed_) g_partial_folder.state.store(kFree, std::memory_order_release);
}

void PartialFolderGuard::written(std::uint64_t count) {
  if (listed_) g_partial_folder.files.store(count, std::memory_order_release);
}

int listed_partial_files() {
  int listed = 0;
  for (const Slot& slot : g_partial_files) listed += slot.state.load(std::memory_order_acquire) == kListed ? 1 : 0;
  return listed;
}

void end_on_signals(const char* program, bool report) {
  std::strncpy(g_program.data(), program, g_program.size() - 1);
  g_report = report;
  for (const int signal_number : kEndingSignals) {
    struct sigaction before {};
    if (::sigaction(signal_number, nullptr, &before) != 0 || before.sa_handler == SIG_IGN) continue;
    struct sigaction ending {};
    ending.sa_handler = on_ending_signal;
    sigemptyset(&ending.sa_mask);
    for (const int other : kEndingSignals) sigaddset(&ending.sa_mask, other);  // one handler at a time
    ::sigaction(signal_number, &ending, nullptr);
  }
}

}  // namespace zbfs
