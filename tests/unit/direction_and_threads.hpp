// A BFS test parameterised by direction and OpenMP thread count: SetUp applies both (the
// direction to options_), TearDown restores the thread count.
#pragma once

#include <gtest/gtest.h>
#include <omp.h>

#include <tuple>

#include "zbfs/bfs/bfs_options.hpp"

namespace zbfs::testing {

using DirectionThreads = std::tuple<Direction, int>;

class DirectionAndThreads : public ::testing::TestWithParam<DirectionThreads> {
 protected:
  void SetUp() override {
    saved_threads_ = omp_get_max_threads();
    omp_set_num_threads(std::get<1>(GetParam()));
    options_.direction = std::get<0>(GetParam());
  }
  void TearDown() override { omp_set_num_threads(saved_threads_); }
  BfsOptions options_;
  int saved_threads_ = 1;
};

}  // namespace zbfs::testing
