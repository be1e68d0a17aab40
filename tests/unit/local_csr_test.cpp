// build_local_csr: rows sorted and free of duplicates;
// transpose_local_csr: the same as building from the pairs turned around.
#include "zbfs/graph/local_csr.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "zbfs/core/error.hpp"

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

// Consuming the pairs a range of rows at a time gives the same lists, for any number of
// ranges and threads, with long and empty rows and duplicates; the pairs are left empty.
TEST(LocalCsr, ConsumedPairsGiveTheSameLists) {
  std::mt19937_64 random(5);
  std::vector<std::uint32_t> rows;
  std::vector<std::uint32_t> cols;
  for (int i = 0; i < 20000; ++i) {
    const auto r = static_cast<std::uint32_t>(i % 5 == 0 ? 3 : random() % 90);  // row 3 is long
    rows.push_back(r == 40 ? 41 : r);                                           // row 40 is empty
    cols.push_back(static_cast<std::uint32_t>(random() % 700));
  }
  const LocalCsr<std::uint32_t> want = build_local_csr<std::uint32_t>(100, rows, cols);
  const int threads = omp_get_max_threads();
  for (const int ranges : {1, 3, 4, 200}) {
    for (const int t : {1, 3}) {
      omp_set_num_threads(t);
      std::vector<std::uint32_t> r = rows;
      std::vector<std::uint32_t> c = cols;
      const LocalCsr<std::uint32_t> got = build_local_csr<std::uint32_t>(100, std::move(r), std::move(c), ranges);
      EXPECT_TRUE(r.empty() && c.empty());
      ASSERT_EQ(got.num_entries(), want.num_entries()) << ranges << " ranges, " << t << " threads";
      for (std::uint32_t row = 0; row < 100; ++row) {
        ASSERT_EQ(std::vector<std::uint32_t>(got.neighbors(row).begin(), got.neighbors(row).end()),
                  std::vector<std::uint32_t>(want.neighbors(row).begin(), want.neighbors(row).end()))
            << "row " << row << ", " << ranges << " ranges, " << t << " threads";
      }
    }
  }
  omp_set_num_threads(threads);
  const LocalCsr<std::uint64_t> none = build_local_csr<std::uint64_t>(3, {}, {}, 4);
  EXPECT_EQ(none.num_entries(), 0U);
}

// A weight beside each entry, the lightest of its duplicates, rows ordered by weight; the
// same entries as the plain lists, on a long row (the radix path) and short ones.
TEST(LocalCsr, WeightedRowsKeepTheLightestDuplicate) {
  std::mt19937_64 random(9);
  std::vector<std::uint32_t> rows;
  std::vector<std::uint32_t> cols;
  std::vector<float> weights;
  std::map<std::pair<std::uint32_t, std::uint32_t>, float> lightest;
  for (int i = 0; i < 30000; ++i) {
    const auto r = static_cast<std::uint32_t>(i % 7 == 0 ? 0 : random() % 50);  // row 0 is long
    const auto c = static_cast<std::uint32_t>(random() % 4000);
    const float w = static_cast<float>(random() % 1000) / 1000.0F;
    rows.push_back(r);
    cols.push_back(c);
    weights.push_back(w);
    const auto [at, fresh] = lightest.emplace(std::make_pair(r, c), w);
    if (!fresh) at->second = std::min(at->second, w);
  }
  const LocalCsr<std::uint32_t> plain = build_local_csr<std::uint32_t>(50, rows, cols);
  const LocalCsr<std::uint32_t> weighted = build_weighted_local_csr(50, rows, cols, weights);
  ASSERT_TRUE(weighted.weighted());
  EXPECT_FALSE(plain.weighted());
  ASSERT_EQ(weighted.num_entries(), lightest.size());
  ASSERT_EQ(weighted.num_entries(), plain.num_entries());
  for (std::uint32_t r = 0; r < 50; ++r) {
    std::vector<std::uint32_t> mine(weighted.neighbors(r).begin(), weighted.neighbors(r).end());
    std::sort(mine.begin(), mine.end());
    ASSERT_EQ(mine, std::vector<std::uint32_t>(plain.neighbors(r).begin(), plain.neighbors(r).end()));
    for (std::uint64_t e = weighted.offsets()[r]; e < weighted.offsets()[r + 1]; ++e) {
      EXPECT_EQ(weighted.weight_data()[e], lightest.at({r, weighted.neighbor_data()[e]}));
      // By weight, then by neighbour.
      if (e > weighted.offsets()[r]) {
        const float before = weighted.weight_data()[e - 1];
        EXPECT_TRUE(
            before < weighted.weight_data()[e] ||
            (before == weighted.weight_data()[e] && weighted.neighbor_data()[e - 1] < weighted.neighbor_data()[e]));
      }
    }
  }
  EXPECT_EQ(weighted.list_bytes(), plain.list_bytes() + 4 * plain.num_entries());
  LocalCsr<std::uint32_t> copy = build_weighted_local_csr(50, rows, cols, weights);
  EXPECT_THROW(copy.compress(), Error);
}

// order_weighted_rows: light entries a prefix by weight, heavy ones by neighbour, the same
// entries; and back to weight order, which is the build's.
TEST(LocalCsr, WeightedRowsTakeTheOrderASearchReads) {
  std::mt19937_64 random(4);
  std::vector<std::uint32_t> rows;
  std::vector<std::uint32_t> cols;
  std::vector<float> weights;
  for (int i = 0; i < 20000; ++i) {
    rows.push_back(static_cast<std::uint32_t>(i % 5 == 0 ? 3 : random() % 40));
    cols.push_back(static_cast<std::uint32_t>(random() % 5000));
    weights.push_back(static_cast<float>(random() % 1000) / 1000.0F);
  }
  const LocalCsr<std::uint32_t> built = build_weighted_local_csr(40, rows, cols, weights);
  LocalCsr<std::uint32_t> csr = build_weighted_local_csr(40, rows, cols, weights);
  const auto entries = [](const LocalCsr<std::uint32_t>& c, std::uint32_t r) {
    std::vector<std::pair<std::uint32_t, float>> out;
    for (std::uint64_t e = c.offsets()[r]; e < c.offsets()[r + 1]; ++e)
      out.emplace_back(c.neighbor_data()[e], c.weight_data()[e]);
    return out;
  };
  csr.order_weighted_rows(0.3F, true);
  for (std::uint32_t r = 0; r < 40; ++r) {
    std::vector<std::pair<std::uint32_t, float>> mine = entries(csr, r);
    std::size_t split = 0;
    while (split < mine.size() && mine[split].second < 0.3F) ++split;
    for (std::size_t i = split; i < mine.size(); ++i) EXPECT_GE(mine[i].second, 0.3F);
    for (std::size_t i = 1; i < split; ++i) EXPECT_LE(mine[i - 1].second, mine[i].second);
    for (std::size_t i = split + 1; i < mine.size(); ++i) EXPECT_LT(mine[i - 1].first, mine[i].first);
    std::vector<std::pair<std::uint32_t, float>> before = entries(built, r);
    std::sort(mine.begin(), mine.end());
    std::sort(before.begin(), before.end());
    EXPECT_EQ(mine, before);
  }
  csr.order_weighted_rows(0.3F, false);
  for (std::uint32_t r = 0; r < 40; ++r) EXPECT_EQ(entries(csr, r), entries(built, r));
  LocalCsr<std::uint32_t> plain = build_local_csr<std::uint32_t>(40, rows, cols);
  EXPECT_THROW(plain.order_weighted_rows(0.3F, true), Error);
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

// Every row's lists read through a rows view, as (degree, list, first two blocks' ids).
template <class V, class Rows>
std::vector<std::vector<std::uint64_t>> read_rows(const Rows& rows, std::uint64_t count) {
  std::vector<std::vector<std::uint64_t>> got(count);
  for (std::uint64_t r = 0; r < count; ++r) {
    got[r].push_back(rows.degree(r));
    rows.scan(r, [&](V w) {
      got[r].push_back(w);
      return false;
    });
    got[r].push_back(~std::uint64_t{0});
    rows.scan_blocks(r, 1, 3, [&](V w) {
      got[r].push_back(w);
      return false;
    });
  }
  return got;
}

// A hypersparse CSR keeps the rows with a list only, by position, and every row reads the
// same through degree(), neighbors() and each rows view, plain or compressed; the rows'
// bytes shrink to about the rows with lists'.
TEST(LocalCsr, HypersparseRowsReadTheSame) {
  std::mt19937_64 random(11);
  std::vector<std::uint32_t> rows;
  std::vector<std::uint32_t> cols;
  constexpr std::uint32_t kRows = 5000;  // 1 row in 20 has a list, one a long one
  for (int i = 0; i < 3000; ++i) {
    rows.push_back(i % 7 == 0 ? 4321 : static_cast<std::uint32_t>(random() % 250) * 20 + 3);
    cols.push_back(static_cast<std::uint32_t>(random() % 900));
  }
  const LocalCsr<std::uint32_t> dense = build_local_csr<std::uint32_t>(kRows, rows, cols);
  const auto want = dense.with_rows([&](const auto& r) { return read_rows<std::uint32_t>(r, kRows); });
  for (const int variant : {0, 2}) {
    // As kernel 1 builds them: the pairs' rows renumbered to positions first.
    RowIndex index(ids_present(std::span<const std::uint32_t>(rows), kRows));
    std::vector<std::uint32_t> positions;
    for (const std::uint32_t r : rows) positions.push_back(static_cast<std::uint32_t>(index.rank().position(r)));
    LocalCsr<std::uint32_t> csr = LocalCsr<std::uint32_t>::by_position(
        build_local_csr<std::uint32_t>(index.count(), positions, cols), std::move(index));
    if (variant == 2) csr.compress();
    ASSERT_TRUE(csr.hypersparse());
    EXPECT_EQ(csr.compressed(), variant != 0);
    EXPECT_EQ(csr.positions(), dense.rows_with_lists());
    EXPECT_EQ(csr.rows_with_lists(), dense.rows_with_lists());
    EXPECT_LE(csr.positions(), 251U);
    EXPECT_EQ(csr.num_entries(), dense.num_entries());
    const auto got = csr.with_rows([&](const auto& r) { return read_rows<std::uint32_t>(r, kRows); });
    ASSERT_EQ(got, want) << "variant " << variant;
    for (std::uint32_t r = 0; r < kRows; ++r) {
      ASSERT_EQ(csr.degree(r), dense.degree(r)) << "row " << r;
      if (variant == 0) {
        ASSERT_EQ(std::vector<std::uint32_t>(csr.neighbors(r).begin(), csr.neighbors(r).end()),
                  std::vector<std::uint32_t>(dense.neighbors(r).begin(), dense.neighbors(r).end()));
      }
    }
    // Positions follow the rows' order, and arrays kept by position line up with them.
    const RowRank rank = csr.row_rank();
    std::uint64_t position = 0;
    for (std::uint32_t r = 0; r < kRows; ++r) {
      if (dense.degree(r) == 0) {
        ASSERT_FALSE(rank.has(r));
        continue;
      }
      ASSERT_TRUE(rank.has(r));
      ASSERT_EQ(rank.position(r), position++);
    }
    if (variant == 0) {
      // Offsets by position: 8 bytes a row with a list, plus the index's quarter byte a row.
      EXPECT_LE(csr.list_bytes(), dense.list_bytes() - 8 * (kRows - 251) + kRows / 2);
      // Its transpose, by row or hypersparse itself, is the dense one's.
      const LocalCsr<std::uint32_t> want_t = transpose_local_csr(dense, 900);
      const LocalCsr<std::uint32_t> by_row = transpose_local_csr(csr, 900);
      LocalCsr<std::uint32_t> sparse_t = transpose_local_csr(
          csr, 900, RowIndex(ids_present(std::span<const std::uint32_t>(csr.neighbor_data(), csr.num_entries()), 900)));
      EXPECT_TRUE(sparse_t.hypersparse());
      EXPECT_FALSE(by_row.hypersparse());
      for (std::uint32_t c = 0; c < 900; ++c) {
        const std::vector<std::uint32_t> w(want_t.neighbors(c).begin(), want_t.neighbors(c).end());
        ASSERT_EQ(std::vector<std::uint32_t>(by_row.neighbors(c).begin(), by_row.neighbors(c).end()), w) << c;
        ASSERT_EQ(std::vector<std::uint32_t>(sparse_t.neighbors(c).begin(), sparse_t.neighbors(c).end()), w) << c;
      }
      EXPECT_THROW(static_cast<void>(transpose_local_csr(csr, 900, RowIndex(Bitmap(800)))), Error);
    }
  }
  const LocalCsr<std::uint64_t> no_lists =
      LocalCsr<std::uint64_t>::by_position(build_local_csr<std::uint64_t>(0, {}, {}), RowIndex(Bitmap(70)));
  EXPECT_EQ(no_lists.positions(), 0U);
  EXPECT_EQ(no_lists.num_rows(), 70U);
  EXPECT_EQ(no_lists.degree(69), 0U);
}

// Lists built over positions, then given their rows, read as the rows' lists.
TEST(LocalCsr, ListsByPositionTakeTheirRows) {
  const std::vector<std::uint32_t> rows = {7, 7, 130, 3, 130};
  const std::vector<std::uint32_t> cols = {1, 2, 9, 4, 8};
  Bitmap present = ids_present(std::span<const std::uint32_t>(rows), 200);
  EXPECT_EQ(present.count(), 3U);
  const RowIndex index(std::move(present));
  std::vector<std::uint32_t> positions;
  for (const std::uint32_t r : rows) positions.push_back(static_cast<std::uint32_t>(index.rank().position(r)));
  const LocalCsr<std::uint32_t> kept =
      LocalCsr<std::uint32_t>::by_position(build_local_csr<std::uint32_t>(3, positions, cols),
                                           RowIndex(ids_present(std::span<const std::uint32_t>(rows), 200)));
  EXPECT_EQ(kept.num_rows(), 200U);
  EXPECT_EQ(kept.positions(), 3U);
  EXPECT_EQ(std::vector<std::uint32_t>(kept.neighbors(7).begin(), kept.neighbors(7).end()),
            (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(std::vector<std::uint32_t>(kept.neighbors(130).begin(), kept.neighbors(130).end()),
            (std::vector<std::uint32_t>{8, 9}));
  EXPECT_EQ(kept.degree(3), 1U);
  EXPECT_EQ(kept.degree(4), 0U);
  EXPECT_THROW(static_cast<void>(LocalCsr<std::uint32_t>::by_position(build_local_csr<std::uint32_t>(2, {}, {}),
                                                                      RowIndex(Bitmap(9)))),
               Error);
}

TEST(RowIndex, PositionsAreRanks) {
  Bitmap present(200);
  for (const std::uint64_t id : {0, 5, 63, 64, 65, 130, 199}) present.set(id);
  const RowIndex index(std::move(present));
  EXPECT_EQ(index.count(), 7U);
  const RowRank rank = index.rank();
  std::uint64_t k = 0;
  for (const std::uint64_t id : {0, 5, 63, 64, 65, 130, 199}) EXPECT_EQ(rank.position(id), k++) << id;
  EXPECT_FALSE(rank.has(1));
  EXPECT_EQ(rank.position(66), 5U);  // an absent id: the next present one's position
  const RowRank identity;
  EXPECT_TRUE(identity.has(12345));
  EXPECT_EQ(identity.position(12345), 12345U);
  EXPECT_TRUE(sparse_pays(10, 1000, 8));
  EXPECT_FALSE(sparse_pays(600, 1000, 8));
}

}  // namespace
}  // namespace zbfs
