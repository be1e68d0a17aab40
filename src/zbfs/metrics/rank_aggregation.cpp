#include "zbfs/metrics/rank_aggregation.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace zbfs {

PhaseBreakdown summarize_over_ranks(const Communicator& world, const PhaseMetrics& metrics) {
  constexpr std::size_t kTimed = 17;  // the counters below, then the work kinds
  constexpr std::size_t kFields = kTimed + kWorkKindCount;
  std::vector<double> values(kPhaseCount * kFields);
  for (std::size_t i = 0; i < kPhaseCount; ++i) {
    const PhaseCounters& c = metrics.all()[i];
    values[i * kFields + 0] = c.time_s;
    values[i * kFields + 1] = static_cast<double>(c.messages);
    values[i * kFields + 2] = static_cast<double>(c.raw_bytes);
    values[i * kFields + 3] = static_cast<double>(c.wire_bytes);
    values[i * kFields + 4] = c.model_s;
    values[i * kFields + 5] = c.mpi_s;
    values[i * kFields + 6] = c.encode_s;
    values[i * kFields + 7] = c.decode_s;
    values[i * kFields + 8] = static_cast<double>(c.id_bytes);
    values[i * kFields + 9] = c.wait_s;
    values[i * kFields + 10] = static_cast<double>(c.merged_items);
    values[i * kFields + 11] = static_cast<double>(c.to_device_bytes);
    values[i * kFields + 12] = static_cast<double>(c.to_host_bytes);
    values[i * kFields + 13] = c.stream_model_s;
    values[i * kFields + 14] = c.stream_held_s;
    values[i * kFields + 15] = c.overlap_s;
    values[i * kFields + 16] = c.stream_wait_s;
    for (std::size_t k = 0; k < kWorkKindCount; ++k) values[i * kFields + kTimed + k] = static_cast<double>(c.work[k]);
  }
  std::vector<double> min = values;
  std::vector<double> max = values;
  std::vector<double> sum = values;
  // The aggregation's own traffic is not part of any phase being measured.
  world.allreduce(std::span<double>(min), ReduceOp::kMin);
  world.allreduce(std::span<double>(max), ReduceOp::kMax);
  world.allreduce(std::span<double>(sum), ReduceOp::kSum);
  PhaseBreakdown b;
  for (std::size_t i = 0; i < kPhaseCount; ++i) {
    Spread* fields[kTimed] = {&b.phases[i].time_s,        &b.phases[i].messages,       &b.phases[i].raw_bytes,
                              &b.phases[i].wire_bytes,    &b.phases[i].model_s,        &b.phases[i].mpi_s,
                              &b.phases[i].encode_s,      &b.phases[i].decode_s,       &b.phases[i].id_bytes,
                              &b.phases[i].wait_s,        &b.phases[i].merged_items,   &b.phases[i].to_device_bytes,
                              &b.phases[i].to_host_bytes, &b.phases[i].stream_model_s, &b.phases[i].stream_held_s,
                              &b.phases[i].overlap_s,     &b.phases[i].stream_wait_s};
    for (std::size_t f = 0; f < kTimed; ++f)
      *fields[f] = {min[i * kFields + f], max[i * kFields + f], sum[i * kFields + f]};
    for (std::size_t k = 0; k < kWorkKindCount; ++k) {
      const std::size_t f = i * kFields + kTimed + k;
      b.phases[i].work[k] = {min[f], max[f], sum[f]};
    }
  }
  // Frames per codec, then bytes per routed hop: sums over ranks.
  constexpr std::size_t kSummed = kCodecCount + kMaxRouteHops;
  std::vector<double> summed(kPhaseCount * kSummed);
  for (std::size_t i = 0; i < kPhaseCount; ++i) {
    const PhaseCounters& c = metrics.all()[i];
    for (std::size_t k = 0; k < kCodecCount; ++k) summed[i * kSummed + k] = static_cast<double>(c.frames[k]);
    for (std::size_t h = 0; h < kMaxRouteHops; ++h)
      summed[i * kSummed + kCodecCount + h] = static_cast<double>(c.hop_bytes[h]);
  }
  world.allreduce(std::span<double>(summed), ReduceOp::kSum);
  for (std::size_t i = 0; i < kPhaseCount; ++i) {
    for (std::size_t k = 0; k < kCodecCount; ++k) b.phases[i].frames[k] = summed[i * kSummed + k];
    for (std::size_t h = 0; h < kMaxRouteHops; ++h) b.phases[i].hop_bytes[h] = summed[i * kSummed + kCodecCount + h];
  }
  std::vector<double> tallies = PhaseBreakdown::flatten_tallies(metrics);
  world.allreduce(std::span<double>(tallies), ReduceOp::kSum);
  b.traffic = PhaseBreakdown::records_of(tallies);
  return b;
}

std::vector<LevelSummary> summarize_levels_over_ranks(const Communicator& world, std::span<const LevelWork> levels) {
  const auto count = static_cast<std::size_t>(world.allreduce(std::uint64_t{levels.size()}, ReduceOp::kMax));
  // Per level and phase: time, MPI time, messages, bytes, peers, then the work kinds.
  constexpr std::size_t kFixed = 5;
  constexpr std::size_t kFields = kFixed + kWorkKindCount;
  std::vector<double> max(count * kPhaseCount * kFields, 0.0);
  for (std::size_t l = 0; l < levels.size(); ++l) {
    for (std::size_t p = 0; p < kPhaseCount; ++p) {
      const LevelPhaseWork& w = levels[l].phases[p];
      double* f = max.data() + (l * kPhaseCount + p) * kFields;
      f[0] = w.time_s;
      f[1] = w.mpi_s;
      f[2] = static_cast<double>(w.messages);
      f[3] = static_cast<double>(w.wire_bytes);
      f[4] = static_cast<double>(w.peers);
      for (std::size_t k = 0; k < kWorkKindCount; ++k) f[kFixed + k] = static_cast<double>(w.work[k]);
    }
  }
  std::vector<double> sum = max;
  world.allreduce(std::span<double>(max), ReduceOp::kMax);
  world.allreduce(std::span<double>(sum), ReduceOp::kSum);
  const auto ranks = static_cast<double>(world.size());
  std::vector<LevelSummary> summary(count);
  for (std::size_t l = 0; l < count; ++l) {
    for (std::size_t p = 0; p < kPhaseCount; ++p) {
      const std::size_t at = (l * kPhaseCount + p) * kFields;
      const auto field = [&](std::size_t f) { return MaxMean{max[at + f], sum[at + f] / ranks}; };
      LevelPhaseSummary& s = summary[l].phases[p];
      s.time_s = field(0);
      s.mpi_s = field(1);
      s.messages = field(2);
      s.wire_bytes = field(3);
      s.peers = field(4);
      for (std::size_t k = 0; k < kWorkKindCount; ++k) s.work[k] = field(kFixed + k);
    }
  }
  return summary;
}

}  // namespace zbfs

namespace zbfs {

EnergyRecord summarize_energy(const Communicator& world, const EnergyMeter& meter, bool reads_host, bool reads_device,
                              bool device_in_run, const std::string& why_not) {
  const bool host_read = reads_host && meter.reads(EnergyScope::kHost);
  const bool device_read = reads_device && meter.reads(EnergyScope::kDevice);
  std::uint64_t counts[4] = {reads_host ? 1U : 0U, host_read ? 1U : 0U, reads_device ? 1U : 0U, device_read ? 1U : 0U};
  world.allreduce(std::span<std::uint64_t>(counts), ReduceOp::kSum);
  std::vector<double> joules(2 * kEnergyPhases);
  for (std::size_t p = 0; p < kEnergyPhases; ++p) {
    joules[2 * p] = host_read ? meter.joules()[p].host : 0.0;
    joules[2 * p + 1] = device_read ? meter.joules()[p].device : 0.0;
  }
  world.allreduce(std::span<double>(joules), ReduceOp::kSum);

  EnergyRecord record;
  record.device_in_run = device_in_run;
  record.host_measured = counts[0] > 0 && counts[1] == counts[0];
  record.device_measured = device_in_run && counts[2] > 0 && counts[3] == counts[2];
  for (std::size_t p = 0; p < kEnergyPhases; ++p) record.joules[p] = {joules[2 * p], joules[2 * p + 1]};
  record.counters = meter.names();
  const bool complete = record.host_measured && (record.device_measured || !device_in_run);
  if (!complete) {
    const std::string mine = !meter.failure().empty() ? meter.failure() : why_not;
    if (!mine.empty()) {
      record.why_not = mine;
    } else if (counts[1] != counts[0]) {
      record.why_not = "the RAPL counters of " + std::to_string(counts[0] - counts[1]) + " of " +
                       std::to_string(counts[0]) + " nodes could not be read";
    } else if (counts[2] == 0) {
      record.why_not = "no rank read a device's energy counter";
    } else {
      record.why_not = "the energy counters of " + std::to_string(counts[2] - counts[3]) + " of " +
                       std::to_string(counts[2]) + " devices could not be read";
    }
  }
  return record;
}

}  // namespace zbfs
