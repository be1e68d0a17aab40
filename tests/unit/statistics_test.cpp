#include "zbfs/driver/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "zbfs/driver/phase_table.hpp"
#include "zbfs/driver/result_block.hpp"
#include "zbfs/driver/search_harness.hpp"

namespace zbfs {
namespace {

TEST(Statistics, OrderStatisticsFollowTheReference) {
  // Five values: quartiles average x[(n-1)/4] and x[n/4], i.e. x[1] and x[1].
  const std::vector<double> v = {5, 1, 4, 2, 3};
  const SummaryStatistics s = summarize(v);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.first_quartile, 2);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.third_quartile, 4);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(2.5));  // sample variance: 10 / 4
}

TEST(Statistics, EvenCountAveragesTheMiddlePair) {
  const std::vector<double> v = {1, 2, 3, 4};
  const SummaryStatistics s = summarize(v);
  EXPECT_DOUBLE_EQ(s.first_quartile, 1.5);  // (x[0] + x[1]) / 2
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.third_quartile, 3.5);
}

TEST(Statistics, TepsUseTheHarmonicMeanAndNorrisError) {
  // Two searches of 100 edges in 1 s and 4 s: 100 and 25 TEPS.
  const std::vector<double> edges = {100, 100};
  const std::vector<double> times = {1, 4};
  const TepsStatistics t = summarize_teps(edges, times);
  EXPECT_DOUBLE_EQ(t.min, 25);
  EXPECT_DOUBLE_EQ(t.max, 100);
  EXPECT_DOUBLE_EQ(t.median, 40);  // 1 / mean(0.01, 0.04)
  EXPECT_DOUBLE_EQ(t.harmonic_mean, 40);
  // stddev of seconds-per-edge {0.01, 0.04} is 0.0212132; / (0.025^2 * sqrt(1))
  EXPECT_NEAR(t.harmonic_stddev, std::sqrt(0.00045) / (0.025 * 0.025), 1e-9);
}

ResultBlock sample_block() {
  ResultBlock b;
  b.scale = 16;
  b.edgefactor = 16;
  b.num_searches = 64;
  b.generation_time_s = 0.348317;
  b.construction_time_s = 0.0818638;
  b.bfs.emplace();
  b.bfs->time_s = {0.011379, 0.0139655, 0.015635, 0.0180487, 0.0238177, 0.0162357, 0.00298008};
  b.nedge = {1048079, 1048079, 1048079, 1048079, 1048079, 1048079, 0};
  b.bfs->teps = {4.40042e+07, 5.80696e+07, 6.70343e+07, 7.50479e+07, 9.21067e+07, 6.45541e+07, 1.49283e+06};
  b.validated = true;
  b.bfs->validate_time_s = {0.0296526, 0.0336922, 0.0364761, 0.0424962, 0.0503994, 0.0380145, 0.00575617};
  return b;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  }
  return lines;
}

// A key in a small component reached under 1% of what the largest search reached; the
// line says how many there were and puts the median TEPS beside the harmonic mean.
TEST(SearchKeys, SmallComponentsAreCountedAndNamed) {
  std::vector<SearchResult> searches(4);
  for (std::size_t i = 0; i < searches.size(); ++i) searches[i].reached_vertices = 1000 + i;
  EXPECT_EQ(count_small_component_keys(searches), 0u);
  searches[1].reached_vertices = 9;  // 9 of 1003: under 1%
  EXPECT_EQ(count_small_component_keys(searches), 1u);
  EXPECT_EQ(describe_search_keys(searches, 2.5e9, 4.0e4),
            "4 search keys, 1 in a small component (under 1% of the largest search's vertices); TEPS median 2.5e+09, "
            "harmonic mean 4e+04");
  searches[2].reached_vertices = 2;
  searches[3].reached_vertices = 11;  // 1.1% of 1000: not small
  EXPECT_EQ(count_small_component_keys(searches), 2u);
  EXPECT_NE(describe_search_keys(searches, 1, 1).find("2 in small components"), std::string::npos);
  EXPECT_EQ(describe_search_keys({}, 1, 1), "");
}

TEST(ResultBlock, ReproducesTheReferenceOutputByteForByte) {
  // The values of the reference block (tests/data/graph500-reference-output.txt, a copy of
  // the Graph500 reference's output kept in the repository) printed through our formatter
  // must give back that file's lines exactly: keys, order, spacing and number format. The
  // Green Graph500 lines follow them (the reference prints none).
  const std::filesystem::path reference = ZBFS_REFERENCE_OUTPUT;
  ASSERT_TRUE(std::filesystem::exists(reference)) << "the reference block is missing: " << reference;
  std::ifstream in(reference);
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> expected = lines_of(text.str());
  expected.emplace_back("bfs  mean_power_W:              not measured");
  expected.emplace_back("bfs  TEPS_per_W:                not measured");
  EXPECT_EQ(lines_of(format_result_block(sample_block())), expected);
}

TEST(ResultBlock, KeysAndSpacingMatchTheReference) {
  const std::vector<std::string> lines = lines_of(format_result_block(sample_block()));
  ASSERT_EQ(lines.size(), 36U);
  EXPECT_EQ(lines[0], "SCALE:                          16");
  EXPECT_EQ(lines[13], "min_nedge:                      1048079");
  EXPECT_EQ(lines[25], "bfs  harmonic_mean_TEPS:     !  6.45541e+07");
  EXPECT_EQ(lines[33], "bfs  stddev_validate:           0.00575617");
  for (const std::string& line : lines) EXPECT_EQ(line.find_first_not_of(' ', 32), 32U) << line;
}

TEST(ResultBlock, WithoutValidationPrintsMinusOne) {
  ResultBlock b = sample_block();
  b.validated = false;
  const std::vector<std::string> lines = lines_of(format_result_block(b));
  EXPECT_EQ(lines[27], "bfs  min_validate:              -1");
  EXPECT_EQ(lines[33], "bfs  stddev_validate:           0");
}

// Both kernels: graph500_reference_bfs_sssp's block (its main.c under SSSP), each sssp
// group after the bfs one: times, nedge, TEPS, validation times.
TEST(ResultBlock, BothKernelsFollowTheReferenceBfsSsspOrder) {
  ResultBlock b = sample_block();
  b.sssp = b.bfs;
  b.sssp->teps.harmonic_mean = 1.5e7;
  const std::vector<std::string> lines = lines_of(format_result_block(b));
  ASSERT_EQ(lines.size(), 59U);
  EXPECT_EQ(lines[6], "bfs  min_time:                  0.011379");
  EXPECT_EQ(lines[13], "sssp min_time:                  0.011379");
  EXPECT_EQ(lines[19], "sssp stddev_time:               0.00298008");
  EXPECT_EQ(lines[20], "min_nedge:                      1048079");
  EXPECT_EQ(lines[32], "bfs  harmonic_mean_TEPS:     !  6.45541e+07");
  EXPECT_EQ(lines[34], "sssp min_TEPS:                  4.40042e+07");
  EXPECT_EQ(lines[39], "sssp harmonic_mean_TEPS:     !  1.5e+07");
  EXPECT_EQ(lines[40], "sssp harmonic_stddev_TEPS:      1.49283e+06");
  EXPECT_EQ(lines[41], "bfs  min_validate:              0.0296526");
  EXPECT_EQ(lines[48], "sssp min_validate:              0.0296526");
  EXPECT_EQ(lines[54], "sssp stddev_validate:           0.00575617");
  for (const std::string& line : lines) EXPECT_EQ(line.find_first_not_of(' ', 32), 32U) << line;
  // SSSP alone: the same block without its bfs lines.
  b.bfs.reset();
  const std::vector<std::string> alone = lines_of(format_result_block(b));
  ASSERT_EQ(alone.size(), 36U);
  EXPECT_EQ(alone[6], "sssp min_time:                  0.011379");
  EXPECT_EQ(alone[25], "sssp harmonic_mean_TEPS:     !  1.5e+07");
}

}  // namespace
}  // namespace zbfs

namespace zbfs {
namespace {

// A device backend's copies per phase: in the breakdown of one rank, and as the phase
// table's "device copies" section, which runs without a device backend do not print.
TEST(PhaseTable, DeviceCopiesHaveTheirOwnSection) {
  PhaseMetrics metrics;
  metrics.add_time(Phase::kConstruction, 1.0);
  metrics.add_time(Phase::kLocalExpansion, 0.5);
  EXPECT_EQ(format_phase_table(PhaseBreakdown::of_one_rank(metrics), 1, NetworkModel{}, "none").find("device copies"),
            std::string::npos);
  metrics.add_device_copies(Phase::kConstruction, 123456, 78);
  metrics.add_device_copies(Phase::kLocalExpansion, 9, 10);
  metrics.add_device_copies(Phase::kLocalExpansion, 1, 2);
  const PhaseBreakdown breakdown = PhaseBreakdown::of_one_rank(metrics);
  EXPECT_EQ(breakdown[Phase::kConstruction].to_device_bytes.sum, 123456);
  EXPECT_EQ(breakdown[Phase::kLocalExpansion].to_host_bytes.sum, 12);
  const std::string table = format_phase_table(breakdown, 1, NetworkModel{}, "none");
  const std::size_t section = table.find("device copies");
  ASSERT_NE(section, std::string::npos) << table;
  EXPECT_NE(table.find("123456", section), std::string::npos) << table;
  EXPECT_NE(table.find("local_expansion", section), std::string::npos) << table;
  PhaseMetrics later = metrics;
  later.add_device_copies(Phase::kConstruction, 4, 0);
  EXPECT_EQ(later.since(metrics).all()[static_cast<std::size_t>(Phase::kConstruction)].to_device_bytes, 4U);
}

}  // namespace
}  // namespace zbfs
