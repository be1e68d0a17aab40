#include "zbfs/metrics/energy_meter.hpp"

#include <utility>

namespace zbfs {

const char* to_string(EnergyPhase phase) {
  switch (phase) {
    case EnergyPhase::kGeneration: return "generation";
    case EnergyPhase::kConstruction: return "construction";
    case EnergyPhase::kBfs: return "bfs";
    case EnergyPhase::kSssp: return "sssp";
    case EnergyPhase::kValidation: return "validation";
    case EnergyPhase::kOther: break;
  }
  return "other";
}

EnergyMeter::EnergyMeter(std::vector<std::unique_ptr<EnergyCounter>> counters)
    : counters_(std::move(counters)), last_(counters_.size(), 0) {}

void EnergyMeter::enter(EnergyPhase phase) {
  if (counters_.empty()) return;
  EnergyJoules& booked = joules_[static_cast<std::size_t>(phase_)];
  for (std::size_t i = 0; i < counters_.size(); ++i) {
    EnergyCounter& counter = *counters_[i];
    const std::optional<std::uint64_t> now = counter.read_microjoules(failure_);
    if (!now) {
      // Half a reading would book some counters and not others: stop here.
      counters_.clear();
      last_.clear();
      return;
    }
    if (started_) {
      const double joules = static_cast<double>(counter_advance(last_[i], *now, counter.range_microjoules())) * 1e-6;
      (counter.scope() == EnergyScope::kHost ? booked.host : booked.device) += joules;
    }
    last_[i] = *now;
  }
  started_ = true;
  phase_ = phase;
}

bool EnergyMeter::reads(EnergyScope scope) const {
  for (const auto& counter : counters_) {
    if (counter->scope() == scope) return true;
  }
  return false;
}

std::vector<std::string> EnergyMeter::names() const {
  std::vector<std::string> out;
  for (const EnergyScope scope : {EnergyScope::kHost, EnergyScope::kDevice}) {
    for (const auto& counter : counters_) {
      if (counter->scope() == scope) out.push_back(counter->name());
    }
  }
  return out;
}

double EnergyRecord::total(EnergyPhase phase) const {
  const EnergyJoules& j = joules[static_cast<std::size_t>(phase)];
  return (host_measured ? j.host : 0.0) + (device_measured ? j.device : 0.0);
}

EnergyRecord record_of(const EnergyMeter& meter, bool device_in_run, std::string why_not) {
  EnergyRecord record;
  record.device_in_run = device_in_run;
  record.host_measured = meter.reads(EnergyScope::kHost);
  record.device_measured = device_in_run && meter.reads(EnergyScope::kDevice);
  record.why_not = !meter.failure().empty() ? meter.failure() : std::move(why_not);
  if (record.host_measured && (record.device_measured || !device_in_run)) record.why_not.clear();
  record.counters = meter.names();
  record.joules = meter.joules();
  return record;
}

}  // namespace zbfs
