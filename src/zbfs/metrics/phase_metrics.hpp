// Per-phase counters of one rank: time, messages and bytes (raw, and on the wire once
// codecs exist) for each phase of the distributed benchmark. Communicators add their
// traffic to whatever phase is current; ScopedPhase makes a phase current and times it.
// Nothing here is collective; metrics/rank_summary.hpp aggregates over ranks.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "zbfs/core/timer.hpp"

namespace zbfs {

enum class Phase : int {
  kGeneration,
  kConstruction,
  kLocalExpansion,        // BFS work on local data (frontier expansion, bottom-up checks)
  kColumnExchange,        // gathering the frontier along the processor column (expand)
  kRowExchange,           // sending discovered vertices to their owners (fold)
  kTerminationCheck,      // the per-level allreduce of frontier sizes
  kPredecessorReduction,  // bringing parents to the vertex owners after a search
  kValidation,
  kOther,
};
constexpr std::size_t kPhaseCount = 9;

std::string_view to_string(Phase phase);

struct PhaseCounters {
  double time_s = 0;
  std::uint64_t messages = 0;
  std::uint64_t raw_bytes = 0;   // payload bytes this rank sent to other ranks
  std::uint64_t wire_bytes = 0;  // the same after encoding (equal to raw without a codec)

  PhaseCounters& operator+=(const PhaseCounters& o) {
    time_s += o.time_s;
    messages += o.messages;
    raw_bytes += o.raw_bytes;
    wire_bytes += o.wire_bytes;
    return *this;
  }
  PhaseCounters& operator-=(const PhaseCounters& o) {
    time_s -= o.time_s;
    messages -= o.messages;
    raw_bytes -= o.raw_bytes;
    wire_bytes -= o.wire_bytes;
    return *this;
  }
};

class PhaseMetrics {
 public:
  [[nodiscard]] Phase current() const { return current_; }
  void set_current(Phase phase) { current_ = phase; }

  void add_traffic(std::uint64_t messages, std::uint64_t raw_bytes, std::uint64_t wire_bytes) {
    PhaseCounters& c = counters_[index(current_)];
    c.messages += messages;
    c.raw_bytes += raw_bytes;
    c.wire_bytes += wire_bytes;
  }
  void add_time(Phase phase, double seconds) { counters_[index(phase)].time_s += seconds; }

  [[nodiscard]] const PhaseCounters& operator[](Phase phase) const { return counters_[index(phase)]; }
  [[nodiscard]] const std::array<PhaseCounters, kPhaseCount>& all() const { return counters_; }

  // Counters accumulated since `earlier` (a copy taken before).
  [[nodiscard]] PhaseMetrics since(const PhaseMetrics& earlier) const {
    PhaseMetrics d = *this;
    for (std::size_t i = 0; i < kPhaseCount; ++i) d.counters_[i] -= earlier.counters_[i];
    return d;
  }

 private:
  static std::size_t index(Phase phase) { return static_cast<std::size_t>(phase); }

  std::array<PhaseCounters, kPhaseCount> counters_{};
  Phase current_ = Phase::kOther;
};

// Makes `phase` current for its lifetime and adds the elapsed time to it.
class ScopedPhase {
 public:
  ScopedPhase(PhaseMetrics& metrics, Phase phase) : metrics_(metrics), phase_(phase), previous_(metrics.current()) {
    metrics_.set_current(phase);
  }
  ~ScopedPhase() {
    metrics_.add_time(phase_, clock_.elapsed_s());
    metrics_.set_current(previous_);
  }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  PhaseMetrics& metrics_;
  Phase phase_;
  Phase previous_;
  Stopwatch clock_;
};

}  // namespace zbfs
