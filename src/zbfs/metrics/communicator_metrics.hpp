// The phase metrics behind a communicator: the exchanges above it (exchange/, route/)
// book their codec work, ids, frames and routed hops into the same PhaseMetrics, in the
// same phase, as the communicator's own traffic, and weigh codecs against the links that
// phase metrics price. Local.
#pragma once

#include "zbfs/core/link_cost.hpp"
#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

// The communicator's observer when it is a PhaseMetrics, else nullptr.
inline PhaseMetrics* phase_metrics_of(const Communicator& comm) { return dynamic_cast<PhaseMetrics*>(comm.observer()); }

// The priced cost of the link to `member`, and of the slowest link to any member; nullptr
// when the communicator has no node layout or its metrics no prices (a codec is then
// weighed against a shared-memory link).
inline const LinkCost* link_cost_to(const Communicator& comm, int member) {
  const PhaseMetrics* metrics = phase_metrics_of(comm);
  return metrics != nullptr && comm.knows_nodes() ? metrics->link(comm.link_to(member)) : nullptr;
}
inline const LinkCost* slowest_link_cost(const Communicator& comm) {
  const PhaseMetrics* metrics = phase_metrics_of(comm);
  return metrics != nullptr && comm.knows_nodes() ? metrics->link(comm.slowest_link()) : nullptr;
}

}  // namespace zbfs
