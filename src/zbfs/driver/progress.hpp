// Progress lines on stderr for long runs (phases, "BFS i/N"); silent when disabled. On a
// terminal the BFS counter rewrites one line; elsewhere it prints about ten lines.
#pragma once

#include <cstdint>
#include <string>

namespace zbfs {

class Progress {
 public:
  explicit Progress(bool enabled);
  void phase(const std::string& text) const;
  void count(const char* what, std::uint64_t done, std::uint64_t total) const;

 private:
  bool enabled_;
  bool terminal_;
};

}  // namespace zbfs
