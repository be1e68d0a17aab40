#include "zbfs/metrics/phase_breakdown.hpp"

namespace zbfs {
namespace {

Spread single(double value) { return {value, value, value}; }

}  // namespace

PhaseBreakdown PhaseBreakdown::of_one_rank(const PhaseMetrics& metrics) {
  PhaseBreakdown b;
  for (std::size_t i = 0; i < kPhaseCount; ++i) {
    const PhaseCounters& c = metrics.all()[i];
    b.phases[i] = {single(c.time_s), single(static_cast<double>(c.messages)), single(static_cast<double>(c.raw_bytes)),
                   single(static_cast<double>(c.wire_bytes))};
  }
  return b;
}

}  // namespace zbfs
