#include "zbfs/driver/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace zbfs {

Progress::Progress(bool enabled) : enabled_(enabled), terminal_(isatty(STDERR_FILENO) != 0) {}

void Progress::phase(const std::string& text) const {
  if (enabled_) std::fprintf(stderr, "zbfs: %s\n", text.c_str());
}

void Progress::count(const char* what, std::uint64_t done, std::uint64_t total) const {
  if (!enabled_) return;
  if (terminal_) {
    std::fprintf(stderr, "\rzbfs: %s %llu/%llu", what, static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total));
    if (done == total) std::fputc('\n', stderr);
    return;
  }
  const std::uint64_t step = total >= 10 ? total / 10 : 1;
  if (done % step == 0 || done == total) {
    std::fprintf(stderr, "zbfs: %s %llu/%llu\n", what, static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total));
  }
}

}  // namespace zbfs
