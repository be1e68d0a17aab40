// The official Graph500 result block, keys, order and spacing as the reference prints them
// (values with %g), so that tools that parse Graph500 output read zbfs output unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "zbfs/driver/statistics.hpp"

namespace zbfs {

// One kernel's lines: its search times, TEPS and validation times, and the Green
// Graph500 figure: the mean power over its timed searches (their joules over their
// summed time; unset when the run's energy was not measured) and the harmonic-mean TEPS
// per watt of it.
struct KernelStatistics {
  SummaryStatistics time_s;
  TepsStatistics teps;
  SummaryStatistics validate_time_s;
  std::optional<double> mean_power_w;
};

// A kernel that did not run has no lines: BFS alone prints graph500_reference_bfs's block,
// both print graph500_reference_bfs_sssp's (each SSSP group after the BFS one), SSSP
// alone prints the latter without its bfs lines. After the reference's lines (which have
// no energy figure) come each kernel's mean_power_W and TEPS_per_W, numbers where the
// energy was measured and "not measured" otherwise.
struct ResultBlock {
  int scale = 0;
  std::uint64_t edgefactor = 0;
  std::uint64_t num_searches = 0;  // NBFS
  double generation_time_s = 0;
  int num_processes = 1;
  double construction_time_s = 0;
  std::optional<KernelStatistics> bfs;
  std::optional<KernelStatistics> sssp;
  SummaryStatistics nedge;
  // Without validation the reference prints -1 for every validation statistic.
  bool validated = false;
};

std::string format_result_block(const ResultBlock& block);

}  // namespace zbfs
