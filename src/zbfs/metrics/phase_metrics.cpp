#include "zbfs/metrics/phase_metrics.hpp"

namespace zbfs {

std::string_view to_string(Phase phase) {
  switch (phase) {
    case Phase::kGeneration: return "generation";
    case Phase::kConstruction: return "construction";
    case Phase::kLocalExpansion: return "local_expansion";
    case Phase::kColumnExchange: return "column_exchange";
    case Phase::kRowExchange: return "row_exchange";
    case Phase::kTerminationCheck: return "termination_check";
    case Phase::kPredecessorReduction: return "predecessor_reduction";
    case Phase::kValidation: return "validation";
    case Phase::kOther: return "other";
  }
  return "unknown";
}

}  // namespace zbfs
