// build_local_csr: rows sorted and free of duplicates;
// transpose_local_csr: the same as building from the pairs turned around.
#include "zbfs/graph/local_csr.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <random>
#include <vector>

namespace zbfs {
namespace {

TEST(LocalCsr, SortsAndDeduplicatesRows) {
  const std::vector<std::uint32_t> rows{2, 0, 2, 2, 0, 3};
  const std::vector<std::uint32_t> cols{7, 5, 1, 7, 5, 0};
  const LocalCsr<std::uint32_t> csr = build_local_csr<std::uint32_t>(4, rows, cols);
  EXPECT_EQ(csr.num_rows(), 4U);
  EXPECT_EQ(csr.num_entries(), 4U);
  EXPECT_EQ(std::vector<std::uint32_t>(csr.neighbors(0).begin(), csr.neighbors(0).end()),
            (std::vector<std::uint32_t>{5}));
  EXPECT_EQ(csr.degree(1), 0U);
  EXPECT_EQ(std::vector<std::uint32_t>(csr.neighbors(2).begin(), csr.neighbors(2).end()),
            (std::vector<std::uint32_t>{1, 7}));
  EXPECT_EQ(std::vector<std::uint32_t>(csr.neighbors(3).begin(), csr.neighbors(3).end()),
            (std::vector<std::uint32_t>{0}));
}

TEST(LocalCsr, EmptyInput) {
  const LocalCsr<std::uint64_t> csr = build_local_csr<std::uint64_t>(3, {}, {});
  EXPECT_EQ(csr.num_entries(), 0U);
  for (std::uint64_t r = 0; r < 3; ++r) EXPECT_EQ(csr.degree(r), 0U);
}

TEST(LocalCsr, TransposeIsTheCsrOfTheTurnedPairs) {
  std::mt19937_64 random(5);
  std::vector<std::uint32_t> rows;
  std::vector<std::uint32_t> cols;
  for (int i = 0; i < 20000; ++i) {
    rows.push_back(static_cast<std::uint32_t>(random() % 300));
    cols.push_back(static_cast<std::uint32_t>(random() % 700));
  }
  const LocalCsr<std::uint32_t> want = build_local_csr<std::uint32_t>(700, cols, rows);
  const LocalCsr<std::uint32_t> forward = build_local_csr<std::uint32_t>(300, rows, cols);
  const int saved_threads = omp_get_max_threads();
  for (const int threads : {1, 3}) {
    omp_set_num_threads(threads);
    const LocalCsr<std::uint32_t> got = transpose_local_csr(forward, 700);
    ASSERT_EQ(got.num_rows(), 700U);
    ASSERT_EQ(got.num_entries(), want.num_entries());
    for (std::uint64_t c = 0; c < 700; ++c) {
      ASSERT_EQ(std::vector<std::uint32_t>(got.neighbors(c).begin(), got.neighbors(c).end()),
                std::vector<std::uint32_t>(want.neighbors(c).begin(), want.neighbors(c).end()))
          << "row " << c << ", " << threads << " threads";
    }
  }
  omp_set_num_threads(saved_threads);
  EXPECT_EQ(transpose_local_csr(build_local_csr<std::uint64_t>(3, {}, {}), 5).num_entries(), 0U);
}

}  // namespace
}  // namespace zbfs
