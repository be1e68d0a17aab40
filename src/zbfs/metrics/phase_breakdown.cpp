#include "zbfs/metrics/phase_breakdown.hpp"

namespace zbfs {
namespace {

Spread single(double value) { return {value, value, value}; }

}  // namespace

PhaseBreakdown PhaseBreakdown::of_one_rank(const PhaseMetrics& metrics) {
  PhaseBreakdown b;
  for (std::size_t i = 0; i < kPhaseCount; ++i) {
    const PhaseCounters& c = metrics.all()[i];
    b.phases[i] = {single(c.time_s),
                   single(static_cast<double>(c.messages)),
                   single(static_cast<double>(c.raw_bytes)),
                   single(static_cast<double>(c.wire_bytes)),
                   single(c.model_s),
                   single(c.mpi_s),
                   single(c.wait_s),
                   single(c.encode_s),
                   single(c.decode_s),
                   single(static_cast<double>(c.id_bytes)),
                   {},
                   {},
                   {},
                   single(static_cast<double>(c.to_device_bytes)),
                   single(static_cast<double>(c.to_host_bytes)),
                   single(c.stream_model_s),
                   single(c.stream_held_s),
                   single(c.stream_wait_s),
                   single(c.overlap_s)};
    for (std::size_t k = 0; k < kCodecCount; ++k) b.phases[i].frames[k] = static_cast<double>(c.frames[k]);
    b.phases[i].merged_items = single(static_cast<double>(c.merged_items));
    for (std::size_t h = 0; h < kMaxRouteHops; ++h) b.phases[i].hop_bytes[h] = static_cast<double>(c.hop_bytes[h]);
    for (std::size_t k = 0; k < kWorkKindCount; ++k) b.phases[i].work[k] = single(static_cast<double>(c.work[k]));
  }
  b.traffic = records_of(flatten_tallies(metrics));
  return b;
}

std::vector<double> PhaseBreakdown::flatten_tallies(const PhaseMetrics& metrics) {
  std::vector<double> flat;
  flat.reserve(kPhaseCount * kCommRoleCount * kCommPatternCount * 3);
  for (std::size_t p = 0; p < kPhaseCount; ++p) {
    for (std::size_t r = 0; r < kCommRoleCount; ++r) {
      for (std::size_t k = 0; k < kCommPatternCount; ++k) {
        const TrafficTally& t =
            metrics.tally(static_cast<Phase>(p), static_cast<CommRole>(r), static_cast<CommPattern>(k));
        flat.push_back(static_cast<double>(t.calls));
        flat.push_back(static_cast<double>(t.messages));
        flat.push_back(static_cast<double>(t.bytes));
      }
    }
  }
  return flat;
}

std::vector<TrafficRecord> PhaseBreakdown::records_of(const std::vector<double>& flat) {
  std::vector<TrafficRecord> records;
  std::size_t at = 0;
  for (std::size_t p = 0; p < kPhaseCount; ++p) {
    for (std::size_t r = 0; r < kCommRoleCount; ++r) {
      for (std::size_t k = 0; k < kCommPatternCount; ++k, at += 3) {
        if (at + 2 >= flat.size()) return records;
        if (flat[at] == 0) continue;
        records.push_back({static_cast<Phase>(p), static_cast<CommRole>(r), static_cast<CommPattern>(k), flat[at],
                           flat[at + 1], flat[at + 2]});
      }
    }
  }
  return records;
}

}  // namespace zbfs
