#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "test_graphs.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/generator/counter_rng.hpp"
#include "zbfs/graph/compressed_csr_builder.hpp"
#include "zbfs/graph/csr_builder.hpp"
#include "zbfs/graph/gap_list.hpp"

namespace zbfs {
namespace {

// Sorted, duplicate-free lists of `length` ids below `limit` (all of [0, limit) when it
// has no more), the largest id always in when there is room.
template <class V>
std::vector<V> random_list(std::mt19937_64& rng, std::size_t length, std::uint64_t limit) {
  std::vector<V> ids;
  if (length == 0) return ids;
  ids.push_back(static_cast<V>(limit - 1));
  std::uniform_int_distribution<std::uint64_t> any(0, limit - 1);
  std::uniform_int_distribution<std::uint64_t> near(0, 3);
  while (ids.size() < length) {
    // Runs of small gaps (hubs' lists) and big jumps (leaves').
    ids.push_back(static_cast<V>(rng() % 4 == 0 ? any(rng) : (ids.back() + 1 + near(rng)) % limit));
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

template <class V>
std::vector<V> decode_blocks(const std::vector<std::uint8_t>& bytes, std::uint64_t degree, std::uint64_t first,
                             std::uint64_t last) {
  std::vector<V> out;
  scan_gap_blocks<V>(bytes.data(), degree, first, last, [&out](V id) {
    out.push_back(id);
    return false;
  });
  return out;
}

template <class V>
void expect_lists_round_trip(std::uint64_t limit) {
  std::mt19937_64 rng(7);
  for (const std::size_t length : {0, 1, 2, 63, 64, 65, 128, 129, 1000, 5000}) {
    const std::vector<V> ids = random_list<V>(rng, length, limit);
    std::vector<std::uint8_t> bytes(gap_list_bytes<V>(ids) + 1, 0xee);
    const std::uint8_t* end = encode_gap_list<V>(ids, bytes.data());
    ASSERT_EQ(static_cast<std::uint64_t>(end - bytes.data()), bytes.size() - 1) << "length " << length;
    EXPECT_EQ(bytes.back(), 0xee) << "the encoder wrote past the list's size";
    const std::uint64_t blocks = gap_blocks(ids.size());
    EXPECT_EQ(decode_blocks<V>(bytes, ids.size(), 0, blocks), ids) << "length " << length;
    // Any block on its own gives its ids.
    for (std::uint64_t b = 0; b < blocks; ++b) {
      const auto first = static_cast<std::ptrdiff_t>(b * kGapBlock);
      const auto last = static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(ids.size(), (b + 1) * kGapBlock));
      EXPECT_EQ(decode_blocks<V>(bytes, ids.size(), b, b + 1), std::vector<V>(ids.begin() + first, ids.begin() + last))
          << "length " << length << " block " << b;
    }
    // A scan stops where its visitor says, and says so.
    if (!ids.empty()) {
      std::size_t seen = 0;
      const V stop_at = ids[ids.size() / 2];
      EXPECT_TRUE(scan_gap_list<V>(bytes.data(), ids.size(), [&](V id) {
        ++seen;
        return id == stop_at;
      }));
      EXPECT_EQ(seen, ids.size() / 2 + 1);
    }
  }
}

TEST(GapList, ListsRoundTripThroughEveryBlock) {
  expect_lists_round_trip<std::uint32_t>(std::uint64_t{1} << 32);
  expect_lists_round_trip<std::uint32_t>(70000);
  expect_lists_round_trip<std::uint64_t>(std::numeric_limits<std::uint64_t>::max());
  expect_lists_round_trip<std::uint64_t>(std::uint64_t{1} << 40);
}

TEST(GapList, SmallGapsTakeOneByte) {
  std::vector<std::uint32_t> ids(200);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::uint32_t>(3 * i);
  // A byte per gap (of 2), a block's first id as it is (0 one byte; 192, 384 and 576 two
  // bytes), and a two-byte header entry per block but the last.
  EXPECT_EQ(gap_list_bytes<std::uint32_t>(ids), 200U + 3 + 2 * 3);
  EXPECT_EQ(varint_bytes(0), 1U);
  EXPECT_EQ(varint_bytes(127), 1U);
  EXPECT_EQ(varint_bytes(128), 2U);
  EXPECT_EQ(varint_bytes(std::numeric_limits<std::uint64_t>::max()), 10U);
}

// The compressed graph holds exactly the plain graph's lists, degrees, tuple degrees and
// order, whatever the number of passes.
template <class V>
void expect_same_graph(const Csr<V>& plain, const CompressedCsr<V>& packed) {
  ASSERT_EQ(plain.num_vertices(), packed.num_vertices());
  ASSERT_EQ(plain.num_directed_edges(), packed.num_directed_edges());
  for (std::uint64_t v = 0; v < plain.num_vertices(); ++v) {
    const auto want = plain.neighbors(v);
    ASSERT_EQ(packed.neighbors(v), std::vector<V>(want.begin(), want.end())) << "vertex " << v;
    ASSERT_EQ(packed.degree(v), plain.degree(v)) << "vertex " << v;
    ASSERT_EQ(packed.input_tuple_degree(v), plain.input_tuple_degree(v)) << "vertex " << v;
    ASSERT_EQ(packed.internal_id(v), plain.internal_id(v)) << "vertex " << v;
  }
  EXPECT_EQ(packed.reordered(), plain.reordered());
}

template <class V>
class CompressedBuild : public ::testing::Test {};
using VertexTypes = ::testing::Types<std::uint32_t, std::uint64_t>;
TYPED_TEST_SUITE(CompressedBuild, VertexTypes);

TYPED_TEST(CompressedBuild, MatchesThePlainGraphInOneOrManyPasses) {
  const PackedEdgeList drawn = testing::pack(testing::kDrawnGraphBits, testing::drawn_graph());
  const PackedEdgeList kronecker = testing::pack(12, testing::kronecker_edges(12, 16, 5));
  for (const CsrOrder order : {CsrOrder::kInput, CsrOrder::kDegree}) {
    for (const PackedEdgeList* list : {&drawn, &kronecker}) {
      const Csr<TypeParam> plain = build_csr<TypeParam>(*list, order);
      // The default passes, a few, and as many as there may be (255; one pass per vertex
      // where there are fewer, a hub's range holding more than a pass).
      for (const std::uint64_t pass_entries : {std::uint64_t{0}, std::uint64_t{20000}, std::uint64_t{1}}) {
        SCOPED_TRACE(::testing::Message() << "order " << static_cast<int>(order) << ", pass entries " << pass_entries);
        expect_same_graph(plain, build_compressed_csr<TypeParam>(*list, order, pass_entries));
      }
    }
  }
}

TEST(CompressedBuild, ProducedTuplesAreReadOncePerPass) {
  const std::vector<Edge> edges = testing::kronecker_edges(11, 8, 9);
  const PackedEdgeList stored = testing::pack(11, edges);
  std::uint64_t reads = 0;
  const InputEdges produced(2048, edges.size(), [&](std::uint64_t first, std::span<Edge> out) {
    std::atomic_ref<std::uint64_t>(reads).fetch_add(out.size());
    std::copy_n(edges.begin() + static_cast<std::ptrdiff_t>(first), out.size(), out.begin());
  });
  const Csr<std::uint32_t> plain = build_csr<std::uint32_t>(stored, CsrOrder::kDegree);
  // About 2^15 entries: 4 passes of 2^13, and the count.
  const CompressedCsr<std::uint32_t> packed = build_compressed_csr<std::uint32_t>(produced, CsrOrder::kDegree, 8192);
  expect_same_graph(plain, packed);
  EXPECT_GE(reads, 4 * edges.size());
  EXPECT_LE(reads, 7 * edges.size());
  EXPECT_EQ(reads % edges.size(), 0U);
}

TEST(CompressedBuild, BlockedPlacementOfAWideRange) {
  // 2^21 vertices: one pass places its rows by blocks (graph/list_placement.hpp).
  const CounterRng rng(3, RandomStream::kSyntheticGraphs);
  const std::uint64_t n = std::uint64_t{1} << 21;
  std::vector<Edge> edges(100000);
  for (std::uint64_t i = 0; i < edges.size(); ++i) {
    edges[i] = {std::min(uniform_below(rng(4 * i), n), uniform_below(rng(4 * i + 1), n)),
                std::min(uniform_below(rng(4 * i + 2), n), uniform_below(rng(4 * i + 3), n))};
  }
  const PackedEdgeList stored = testing::pack(21, edges);
  expect_same_graph(build_csr<std::uint32_t>(stored, CsrOrder::kDegree),
                    build_compressed_csr<std::uint32_t>(stored, CsrOrder::kDegree));
}

TEST(CompressedBuild, RefusesWhatItCannotBuild) {
  const InputEdges outside(16, 3, [](std::uint64_t first, std::span<Edge> out) {
    const Edge all[] = {{0, 1}, {1, 16}, {2, 3}};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = all[first + i];
  });
  EXPECT_THROW((void)build_compressed_csr<std::uint32_t>(outside), Error);
}

TEST(CompressedBuild, KroneckerListsTakeLessThanHalfThePlainBytes) {
  const PackedEdgeList list = testing::pack(14, testing::kronecker_edges(14, 16, 2));
  const Csr<std::uint32_t> plain = build_csr<std::uint32_t>(list, CsrOrder::kDegree);
  const CompressedCsr<std::uint32_t> packed = build_compressed_csr<std::uint32_t>(list, CsrOrder::kDegree);
  const double per_entry = static_cast<double>(packed.list_bytes()) / static_cast<double>(plain.num_directed_edges());
  EXPECT_LT(per_entry, 2.0);
  // The estimate memory checks use covers what was built.
  EXPECT_GE(
      compressed_csr_bytes(plain.num_vertices(), list.size(), 4,
                           compressed_bytes_per_entry(plain.num_vertices(), list.size(), true), CsrOrder::kDegree),
      packed.adjacency_bytes() + packed.table_bytes());
}

// A uniform graph's gaps are about n over the mean degree: the estimate for graphs that
// are not skewed covers one.
TEST(CompressedBuild, UniformGraphsAreEstimatedByTheirMeanGap) {
  const CounterRng rng(5, RandomStream::kSyntheticGraphs);
  const std::uint64_t n = std::uint64_t{1} << 18;
  std::vector<Edge> edges(2 * n);
  for (std::uint64_t i = 0; i < edges.size(); ++i) {
    edges[i] = {uniform_below(rng(2 * i), n), uniform_below(rng(2 * i + 1), n)};
  }
  const PackedEdgeList list = testing::pack(18, edges);
  const CompressedCsr<std::uint32_t> packed = build_compressed_csr<std::uint32_t>(list, CsrOrder::kDegree);
  const double per_entry = compressed_bytes_per_entry(n, edges.size(), false);
  EXPECT_GE(static_cast<double>(packed.list_bytes()), 0.5 * per_entry * 2 * static_cast<double>(edges.size()));
  EXPECT_GE(compressed_csr_bytes(n, edges.size(), 4, per_entry, CsrOrder::kDegree),
            packed.adjacency_bytes() + packed.table_bytes());
  // The skewed figure would not: a mean gap of n / 4 takes three bytes.
  EXPECT_GT(per_entry, compressed_bytes_per_entry(n, edges.size(), true));
}

}  // namespace
}  // namespace zbfs
