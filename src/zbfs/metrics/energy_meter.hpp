// EnergyMeter: a rank's energy counters (metrics/energy_counter.hpp) read at the run's
// phase boundaries, every joule between two readings booked to the phase then current;
// and EnergyRecord, what the run reports of them (joules per phase, host and device).
// Counters are read outside the timed parts: a reading takes microseconds (a sysfs file,
// an NVML call), and a RAPL counter moves about once a millisecond, so a search's share
// is only as exact as the sum over many searches.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zbfs/metrics/energy_counter.hpp"

namespace zbfs {

// Where a run's energy goes: its generation, kernel 1, the timed searches of each kernel,
// their validation, and everything between them (counting trees, writing files).
enum class EnergyPhase { kGeneration, kConstruction, kBfs, kSssp, kValidation, kOther };
inline constexpr std::size_t kEnergyPhases = 6;

[[nodiscard]] const char* to_string(EnergyPhase phase);

struct EnergyJoules {
  double host = 0;
  double device = 0;
  [[nodiscard]] double total() const { return host + device; }
};

using EnergyByPhase = std::array<EnergyJoules, kEnergyPhases>;

class EnergyMeter {
 public:
  EnergyMeter() = default;  // reads nothing (a rank whose node another rank reads)
  explicit EnergyMeter(std::vector<std::unique_ptr<EnergyCounter>> counters);

  // Reads every counter: what each counted since the last reading goes to the phase then
  // current, and from now on counts for `phase`. A counter that cannot be read stops the
  // meter (failure() says why); what was booked stays.
  void enter(EnergyPhase phase);

  // Whether it has counters of that scope, all read so far.
  [[nodiscard]] bool reads(EnergyScope scope) const;
  [[nodiscard]] const std::string& failure() const { return failure_; }
  [[nodiscard]] const EnergyByPhase& joules() const { return joules_; }
  // The counters' names, host ones first.
  [[nodiscard]] std::vector<std::string> names() const;

 private:
  std::vector<std::unique_ptr<EnergyCounter>> counters_;
  std::vector<std::uint64_t> last_;  // each counter's last reading
  bool started_ = false;
  EnergyPhase phase_ = EnergyPhase::kOther;
  EnergyByPhase joules_{};
  std::string failure_;
};

// What a run reports: whether the host's and the devices' energy was measured (on every
// node, every device), why not where it was not, the counters read (rank 0's), and the
// joules per phase summed over the ranks that read them.
struct EnergyRecord {
  bool host_measured = false;
  bool device_measured = false;
  bool device_in_run = false;  // a device backend searched on GPUs
  std::string why_not;         // the first reason a part was not measured
  std::vector<std::string> counters;
  EnergyByPhase joules{};
  [[nodiscard]] bool measured() const { return host_measured || device_measured; }
  // A phase's joules over what was measured.
  [[nodiscard]] double total(EnergyPhase phase) const;
};

// One process's record: its meter reads everything there is to read.
EnergyRecord record_of(const EnergyMeter& meter, bool device_in_run, std::string why_not);

}  // namespace zbfs
