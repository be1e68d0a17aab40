#include "zbfs/output/partial_files.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
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
