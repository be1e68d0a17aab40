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

std::string_view to_string(CommRole role) {
  switch (role) {
    case CommRole::kWorld: return "world";
    case CommRole::kRow: return "row";
    case CommRole::kColumn: return "column";
    case CommRole::kOther: return "other";
  }
  return "unknown";
}

std::string_view to_string(CommPattern pattern) {
  switch (pattern) {
    case CommPattern::kPersonalized: return "personalized";
    case CommPattern::kGather: return "gather";
    case CommPattern::kReduce: return "reduce";
    case CommPattern::kPairwise: return "pairwise";
  }
  return "unknown";
}

}  // namespace zbfs
