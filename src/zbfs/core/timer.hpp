// Wall-clock stopwatch on the steady clock, in seconds.
#pragma once

#include <chrono>

namespace zbfs {

class Stopwatch {
 public:
  Stopwatch() : start_(Clock::now()) {}
  void restart() { start_ = Clock::now(); }
  [[nodiscard]] double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

}  // namespace zbfs
