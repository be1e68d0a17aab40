// Summary statistics exactly as the Graph500 reference computes them: quartiles as the
// mean of the two middle order statistics, sample standard deviation (n - 1), and for
// TEPS the harmonic mean with Norris's standard error of the harmonic mean.
#pragma once

#include <span>

namespace zbfs {

struct SummaryStatistics {
  double min = 0;
  double first_quartile = 0;
  double median = 0;
  double third_quartile = 0;
  double max = 0;
  double mean = 0;
  double stddev = 0;
};

SummaryStatistics summarize(std::span<const double> values);

struct TepsStatistics {
  double min = 0;
  double first_quartile = 0;
  double median = 0;
  double third_quartile = 0;
  double max = 0;
  double harmonic_mean = 0;
  double harmonic_stddev = 0;
};

// TEPS statistics from per-search edge counts and times (the reference's method: order
// statistics of seconds per edge, inverted).
TepsStatistics summarize_teps(std::span<const double> edges, std::span<const double> times_s);

}  // namespace zbfs
