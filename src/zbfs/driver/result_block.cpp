#include "zbfs/driver/result_block.hpp"

#include <fmt/format.h>
#include <fmt/printf.h>

namespace zbfs {
namespace {

// The reference writes every key padded to a 32-character column; the harmonic mean line
// carries a "!" marker inside that padding, as in "bfs  harmonic_mean_TEPS:     !  ".
// Times and rates use %g; edge counts use %.11g so that they print as whole numbers.
void line(std::string& out, const char* key, double value, const char* format = "%g") {
  out += fmt::sprintf("%-32s", key);
  out += fmt::sprintf(format, value);
  out += '\n';
}

void statistics_lines(std::string& out, const char* prefix, const char* suffix, const SummaryStatistics& s,
                      const char* format = "%g") {
  const auto key = [&](const char* stat) { return fmt::format("{}{}_{}:", prefix, stat, suffix); };
  line(out, key("min").c_str(), s.min, format);
  line(out, key("firstquartile").c_str(), s.first_quartile, format);
  line(out, key("median").c_str(), s.median, format);
  line(out, key("thirdquartile").c_str(), s.third_quartile, format);
  line(out, key("max").c_str(), s.max, format);
  line(out, key("mean").c_str(), s.mean, format);
  line(out, key("stddev").c_str(), s.stddev, format);
}

}  // namespace

std::string format_result_block(const ResultBlock& b) {
  std::string out;
  out += fmt::sprintf("%-32s%d\n", "SCALE:", b.scale);
  out += fmt::sprintf("%-32s%d\n", "edgefactor:", b.edgefactor);
  out += fmt::sprintf("%-32s%d\n", "NBFS:", b.num_searches);
  line(out, "graph_generation:", b.generation_time_s);
  out += fmt::sprintf("%-32s%d\n", "num_mpi_processes:", b.num_processes);
  line(out, "construction_time:", b.construction_time_s);
  statistics_lines(out, "bfs  ", "time", b.bfs_time_s);
  statistics_lines(out, "", "nedge", b.nedge, "%.11g");
  line(out, "bfs  min_TEPS:", b.teps.min);
  line(out, "bfs  firstquartile_TEPS:", b.teps.first_quartile);
  line(out, "bfs  median_TEPS:", b.teps.median);
  line(out, "bfs  thirdquartile_TEPS:", b.teps.third_quartile);
  line(out, "bfs  max_TEPS:", b.teps.max);
  out += fmt::sprintf("bfs  harmonic_mean_TEPS:     !  %g\n", b.teps.harmonic_mean);
  line(out, "bfs  harmonic_stddev_TEPS:", b.teps.harmonic_stddev);
  SummaryStatistics validate = b.validate_time_s;
  if (!b.validated) validate = {-1, -1, -1, -1, -1, -1, 0};
  statistics_lines(out, "bfs  ", "validate", validate);
  return out;
}

}  // namespace zbfs
