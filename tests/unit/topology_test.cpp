// Partition arithmetic without MPI: grid factorisation and parsing, vertex blocks and the
// local numbering of piece groups.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "zbfs/core/fast_divider.hpp"
#include "zbfs/topology/grid_shape.hpp"
#include "zbfs/topology/vertex_partition.hpp"
#include "zbfs/wire/id_messages.hpp"

namespace zbfs {
namespace {

TEST(GridShape, MostSquareFactorisation) {
  EXPECT_EQ(most_square_grid(1), (GridShape{1, 1}));
  EXPECT_EQ(most_square_grid(4), (GridShape{2, 2}));
  EXPECT_EQ(most_square_grid(6), (GridShape{2, 3}));
  EXPECT_EQ(most_square_grid(7), (GridShape{1, 7}));
  EXPECT_EQ(most_square_grid(8), (GridShape{2, 4}));
  EXPECT_EQ(most_square_grid(36), (GridShape{6, 6}));
}

// Hybrid: the nodes on the most square grid, tall; each node's ranks stacked in one
// processor column (a node-local 1D slice by target), and a processor row's ranks on
// distinct nodes.
TEST(GridShape, HybridGridStacksEachNodeInOneColumn) {
  EXPECT_EQ(hybrid_grid(8, 2), (GridShape{4, 2, 2}));
  EXPECT_EQ(hybrid_grid(16, 4), (GridShape{8, 2, 4}));
  EXPECT_EQ(hybrid_grid(6, 6), (GridShape{6, 1, 6}));
  EXPECT_EQ(hybrid_grid(4, 2), (GridShape{4, 1, 2}));
  EXPECT_EQ(hybrid_grid(6, 1), (GridShape{3, 2, 1}));
  EXPECT_FALSE(hybrid_grid(6, 4));
  EXPECT_FALSE(hybrid_grid(6, 0));
  for (const auto& [ranks, per_node] : std::vector<std::pair<int, int>>{{8, 2}, {12, 3}, {36, 4}, {24, 6}, {9, 3}}) {
    const GridShape g = *hybrid_grid(ranks, per_node);
    ASSERT_EQ(g.size(), ranks);
    ASSERT_GE(g.rows, g.cols * per_node) << ranks << " " << per_node;
    std::vector<int> seen(static_cast<std::size_t>(ranks), 0);
    for (int rank = 0; rank < ranks; ++rank) {
      const int node = rank / per_node;
      ASSERT_LT(g.row_of(rank), g.rows);
      ASSERT_LT(g.col_of(rank), g.cols);
      EXPECT_EQ(g.rank_at(g.row_of(rank), g.col_of(rank)), rank);
      ++seen[static_cast<std::size_t>(g.piece_of_rank(rank))];
      EXPECT_EQ(g.col_of(rank), g.col_of(node * per_node)) << ranks << " " << rank;
      EXPECT_EQ(g.row_of(rank), g.row_of(node * per_node) + rank % per_node) << ranks << " " << rank;
      for (int col = 0; col < g.cols; ++col) {
        if (col != g.col_of(rank)) {
          EXPECT_NE(g.rank_at(g.row_of(rank), col) / per_node, node);
        }
      }
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), ranks);  // every piece has one owner
  }
  EXPECT_EQ(parse_partition("hybrid"), Partition::kHybrid);
  EXPECT_EQ(to_string(Partition::kHybrid), "hybrid");
}

TEST(GridShape, ParsesRowsByColumns) {
  EXPECT_EQ(parse_grid_shape("2x3"), (GridShape{2, 3}));
  EXPECT_EQ(parse_grid_shape("4X1"), (GridShape{4, 1}));
  for (const char* bad : {"", "x", "2x", "x3", "0x4", "2x-1", "2*3", "2x3x4", "a x b"}) {
    EXPECT_FALSE(parse_grid_shape(bad)) << bad;
  }
}

TEST(GridShape, RanksAndPiecesAreABijection) {
  const GridShape g{3, 4};
  std::set<int> pieces;
  for (int rank = 0; rank < g.size(); ++rank) {
    const int piece = g.piece_of_rank(rank);
    EXPECT_EQ(g.rank_of_piece(piece), rank);
    EXPECT_EQ(piece / g.rows, g.col_of(rank));  // a column owns consecutive pieces
    pieces.insert(piece);
  }
  EXPECT_EQ(pieces.size(), 12U);
}

TEST(VertexBlocks, WordAlignedBlocksCoverEveryVertex) {
  for (const std::uint64_t n : {std::uint64_t{16}, std::uint64_t{1000}, std::uint64_t{1} << 20}) {
    for (const int p : {1, 3, 7, 8}) {
      const VertexBlocks blocks(n, p);
      EXPECT_EQ(blocks.block() % 64, 0U);
      std::uint64_t total = 0;
      for (int k = 0; k < p; ++k) total += blocks.piece_vertices(k);
      EXPECT_EQ(total, n) << n << " " << p;
      EXPECT_EQ(blocks.piece_of(n - 1), static_cast<int>((n - 1) / blocks.block()));
    }
  }
}

TEST(PieceGroup, LocalNumberingRoundTrips) {
  const VertexBlocks blocks(6400, 6);  // block 1088
  const GridShape g{2, 3};
  for (int rank = 0; rank < g.size(); ++rank) {
    const PieceGroup column(blocks, g.col_of(rank) * g.rows, 1, g.rows);
    const PieceGroup row(blocks, g.row_of(rank), g.rows, g.cols);
    for (const PieceGroup* group : {&column, &row}) {
      std::uint64_t members = 0;
      for (std::uint64_t v = 0; v < 6400; ++v) {
        if (!group->contains(v)) continue;
        ++members;
        const std::uint64_t local = group->to_local(v);
        ASSERT_LT(local, group->local_size());
        ASSERT_EQ(group->to_global(local), v);
        ASSERT_EQ(group->member_of_local(local), group->member_of(v));
      }
      EXPECT_GT(members, 0U);
    }
    // The own piece is in both groups, at the member index of the rank's position.
    const std::uint64_t mine = blocks.first_vertex(g.piece_of_rank(rank));
    EXPECT_EQ(column.member_of(mine), g.row_of(rank));
    EXPECT_EQ(row.member_of(mine), g.col_of(rank));
  }
}

TEST(OutgoingBuilder, ConcatenatesBucketsByDestination) {
  OutgoingBuilder builder(3, 2);
  builder.bucket(1, 2).push_back(21);
  builder.bucket(0, 2).push_back(20);
  builder.bucket(0, 0).push_back(0);
  builder.bucket(1, 0).push_back(1);
  const OutgoingIds out = builder.finish();
  EXPECT_EQ(out.counts, (std::vector<std::uint64_t>{2, 0, 2}));
  EXPECT_EQ(out.ids, (std::vector<std::uint64_t>{0, 1, 20, 21}));
}

}  // namespace
}  // namespace zbfs

namespace zbfs {
namespace {

TEST(FastDivider, AgreesWithDivisionEverywhere) {
  std::mt19937_64 rng(12345);
  for (const std::uint64_t d : {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{64}, std::uint64_t{1088},
                                std::uint64_t{1} << 20, (std::uint64_t{1} << 40) + 64, ~std::uint64_t{0}}) {
    const FastDivider by(d);
    for (const std::uint64_t n :
         {std::uint64_t{0}, std::uint64_t{1}, d - 1, d, d + 1, 2 * d - 1, ~std::uint64_t{0}, ~std::uint64_t{0} - 1}) {
      ASSERT_EQ(by.divide(n), n / d) << n << " / " << d;
    }
    for (int i = 0; i < 100000; ++i) {
      const std::uint64_t n = rng() >> (rng() % 64);
      ASSERT_EQ(by.divide(n), n / d) << n << " / " << d;
    }
  }
}

}  // namespace
}  // namespace zbfs
