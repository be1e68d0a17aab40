#include "zbfs/driver/result_block.hpp"

#include <fmt/format.h>
#include <fmt/printf.h>

#include <string>

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
  // The kernels' groups in the reference's order: times, nedge, TEPS, validation times.
  const auto each = [&](const auto& print) {
    if (b.bfs) print("bfs  ", *b.bfs);
    if (b.sssp) print("sssp ", *b.sssp);
  };
  each([&](const char* prefix, const KernelStatistics& k) { statistics_lines(out, prefix, "time", k.time_s); });
  statistics_lines(out, "", "nedge", b.nedge, "%.11g");
  each([&](const char* prefix, const KernelStatistics& k) {
    const auto key = [&](const char* stat) { return fmt::format("{}{}_TEPS:", prefix, stat); };
    line(out, key("min").c_str(), k.teps.min);
    line(out, key("firstquartile").c_str(), k.teps.first_quartile);
    line(out, key("median").c_str(), k.teps.median);
    line(out, key("thirdquartile").c_str(), k.teps.third_quartile);
    line(out, key("max").c_str(), k.teps.max);
    out += fmt::sprintf("%sharmonic_mean_TEPS:     !  %g\n", prefix, k.teps.harmonic_mean);
    line(out, key("harmonic_stddev").c_str(), k.teps.harmonic_stddev);
  });
  each([&](const char* prefix, const KernelStatistics& k) {
    SummaryStatistics validate = k.validate_time_s;
    if (!b.validated) validate = {-1, -1, -1, -1, -1, -1, 0};
    statistics_lines(out, prefix, "validate", validate);
  });
  // The Green Graph500 figure, as the Green Graph500 list ranks it: TEPS per watt of the
  // power drawn while searching.
  each([&](const char* prefix, const KernelStatistics& k) {
    const bool measured = k.mean_power_w && *k.mean_power_w > 0;
    const std::string power_key = fmt::format("{}mean_power_W:", prefix);
    const std::string per_watt_key = fmt::format("{}TEPS_per_W:", prefix);
    if (!measured) {
      out += fmt::sprintf("%-32snot measured\n", power_key);
      out += fmt::sprintf("%-32snot measured\n", per_watt_key);
      return;
    }
    line(out, power_key.c_str(), *k.mean_power_w);
    line(out, per_watt_key.c_str(), k.teps.harmonic_mean / *k.mean_power_w);
  });
  return out;
}

}  // namespace zbfs
