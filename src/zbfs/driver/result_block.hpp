// The official Graph500 result block, keys, order and spacing as the reference prints them
// (values with %g), so that tools that parse Graph500 output read zbfs output unchanged.
#pragma once

#include <cstdint>
#include <string>

#include "zbfs/driver/statistics.hpp"

namespace zbfs {

struct ResultBlock {
  int scale = 0;
  std::uint64_t edgefactor = 0;
  std::uint64_t num_searches = 0;  // NBFS
  double generation_time_s = 0;
  int num_processes = 1;
  double construction_time_s = 0;
  SummaryStatistics bfs_time_s;
  SummaryStatistics nedge;
  TepsStatistics teps;
  // Without validation the reference prints -1 for every validation statistic.
  bool validated = false;
  SummaryStatistics validate_time_s;
};

std::string format_result_block(const ResultBlock& block);

}  // namespace zbfs
