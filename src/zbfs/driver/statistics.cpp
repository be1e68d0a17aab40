#include "zbfs/driver/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "zbfs/core/error.hpp"

namespace zbfs {

SummaryStatistics summarize(std::span<const double> values) {
  SummaryStatistics s;
  const std::size_t n = values.size();
  if (n == 0) return s;
  double sum = 0;
  for (const double x : values) sum += x;
  s.mean = sum / static_cast<double>(n);
  double squares = 0;
  for (const double x : values) squares += (x - s.mean) * (x - s.mean);
  s.stddev = n > 1 ? std::sqrt(squares / static_cast<double>(n - 1)) : 0.0;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.first_quartile = (sorted[(n - 1) / 4] + sorted[n / 4]) * 0.5;
  s.median = (sorted[(n - 1) / 2] + sorted[n / 2]) * 0.5;
  s.third_quartile = (sorted[n - 1 - (n - 1) / 4] + sorted[n - 1 - n / 4]) * 0.5;
  s.max = sorted.back();
  return s;
}

TepsStatistics summarize_teps(std::span<const double> edges, std::span<const double> times_s) {
  if (edges.size() != times_s.size()) throw Error(ExitCode::kFailure, "TEPS statistics need one time per edge count");
  TepsStatistics t;
  const std::size_t n = edges.size();
  if (n == 0) return t;
  std::vector<double> seconds_per_edge(n);
  for (std::size_t i = 0; i < n; ++i) seconds_per_edge[i] = times_s[i] / edges[i];
  const SummaryStatistics s = summarize(seconds_per_edge);
  t.min = 1.0 / s.max;
  t.first_quartile = 1.0 / s.third_quartile;
  t.median = 1.0 / s.median;
  t.third_quartile = 1.0 / s.first_quartile;
  t.max = 1.0 / s.min;
  t.harmonic_mean = 1.0 / s.mean;
  t.harmonic_stddev = n > 1 ? s.stddev / (s.mean * s.mean * std::sqrt(static_cast<double>(n - 1))) : 0.0;
  return t;
}

}  // namespace zbfs
