// build_local_csr: rows sorted and free of duplicates, pair counts before deduplication.
#include "zbfs/graph/local_csr.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace zbfs {
namespace {

TEST(LocalCsr, SortsAndDeduplicatesRows) {
  const std::vector<std::uint32_t> rows{2, 0, 2, 2, 0, 3};
  const std::vector<std::uint32_t> cols{7, 5, 1, 7, 5, 0};
  std::vector<std::uint64_t> pairs;
  const LocalCsr<std::uint32_t> csr = build_local_csr<std::uint32_t>(4, rows, cols, &pairs);
  EXPECT_EQ(csr.num_rows(), 4U);
  EXPECT_EQ(csr.num_entries(), 4U);
  EXPECT_EQ(std::vector<std::uint32_t>(csr.neighbors(0).begin(), csr.neighbors(0).end()),
            (std::vector<std::uint32_t>{5}));
  EXPECT_EQ(csr.degree(1), 0U);
  EXPECT_EQ(std::vector<std::uint32_t>(csr.neighbors(2).begin(), csr.neighbors(2).end()),
            (std::vector<std::uint32_t>{1, 7}));
  EXPECT_EQ(std::vector<std::uint32_t>(csr.neighbors(3).begin(), csr.neighbors(3).end()),
            (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(pairs, (std::vector<std::uint64_t>{2, 0, 3, 1}));
}

TEST(LocalCsr, EmptyInput) {
  const LocalCsr<std::uint64_t> csr = build_local_csr<std::uint64_t>(3, {}, {});
  EXPECT_EQ(csr.num_entries(), 0U);
  for (std::uint64_t r = 0; r < 3; ++r) EXPECT_EQ(csr.degree(r), 0U);
}

}  // namespace
}  // namespace zbfs
