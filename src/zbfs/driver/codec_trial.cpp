#include "zbfs/driver/codec_trial.hpp"

#include <algorithm>

#include "zbfs/core/error.hpp"

namespace zbfs {

bool runs_codec_trial(const RunConfig& config, int ranks) {
  return config.codec.is_auto() && config.codec_trial && !config.shared_memory && ranks > 1 &&
         config.backend == Backend::kCpu && config.transport == Transport::kTwoSided && config.dump_frontiers.empty() &&
         config.network.measure();
}

RunConfig plain_path_config(const RunConfig& config) {
  RunConfig plain = config;
  plain.codec = CodecChoice{CodecId::kNone};
  return plain;
}

bool coded_path_wins(std::span<const double> coded_s, std::span<const double> plain_s) {
  if (coded_s.empty() || coded_s.size() != plain_s.size()) {
    throw Error(ExitCode::kFailure, "codec trial: each key needs one time on each path");
  }
  std::vector<double> ratios(coded_s.size());
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    // A search too short for the clock to see counts as a tie.
    ratios[i] = plain_s[i] > 0 ? coded_s[i] / plain_s[i] : 1.0;
  }
  std::sort(ratios.begin(), ratios.end());
  const std::size_t n = ratios.size();
  const double median = n % 2 == 1 ? ratios[n / 2] : 0.5 * (ratios[n / 2 - 1] + ratios[n / 2]);
  return median < 1.0;
}

bool folds_pipelined(const RunConfig& config, const CodecTrialRecord* trial) {
  return pipelines_folds(trial != nullptr && !trial->chose_coded ? plain_path_config(config) : config);
}

}  // namespace zbfs
