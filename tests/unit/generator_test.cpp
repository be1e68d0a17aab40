#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

#include "test_graphs.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/packed_edge_list.hpp"
#include "zbfs/generator/counter_rng.hpp"
#include "zbfs/generator/feistel_permutation.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/generator/kronecker.hpp"
#include "zbfs/generator/search_roots.hpp"

namespace zbfs {
namespace {

TEST(CounterRng, StreamsAreDeterministicAndDistinct) {
  const CounterRng a(7, RandomStream::kKroneckerBits);
  const CounterRng b(7, RandomStream::kKroneckerBits);
  const CounterRng c(7, RandomStream::kSearchRoots);
  const CounterRng d(8, RandomStream::kKroneckerBits);
  EXPECT_EQ(a(123), b(123));
  EXPECT_NE(a(123), c(123));
  EXPECT_NE(a(123), d(123));
  EXPECT_NE(a(0), a(1));
}

TEST(CounterRng, UniformBelowStaysInRangeAndCoversIt) {
  const CounterRng rng(1, RandomStream::kSearchRoots);
  std::vector<int> hits(10, 0);
  for (std::uint64_t i = 0; i < 10000; ++i) {
    const std::uint64_t x = uniform_below(rng(i), 10);
    ASSERT_LT(x, 10U);
    ++hits[x];
  }
  for (const int h : hits) EXPECT_NEAR(h, 1000, 150);
}

class FeistelDomain : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(FeistelDomain, IsABijectionOnItsDomain) {
  const std::uint64_t n = GetParam();
  const FeistelPermutation perm(n, 42);
  std::vector<bool> seen(n, false);
  std::uint64_t fixed_points = 0;
  for (std::uint64_t x = 0; x < n; ++x) {
    const std::uint64_t y = perm(x);
    ASSERT_LT(y, n);
    ASSERT_FALSE(seen[y]) << "value " << y << " produced twice";
    seen[y] = true;
    fixed_points += (x == y) ? 1 : 0;
  }
  if (n >= 64) {
    EXPECT_LT(fixed_points, n / 8) << "the permutation barely moves anything";
  }
}

TEST_P(FeistelDomain, ApplyGivesWhatOneByOneGives) {
  // The batched form walks the values that land outside the domain in compacted batches;
  // spans of every length up to a few batches, at odd offsets, must agree value by value.
  const std::uint64_t n = GetParam();
  const FeistelPermutation perm(n, 42);
  std::vector<std::uint64_t> values;
  std::vector<std::uint64_t> scratch;
  for (const std::size_t length :
       {std::size_t{1}, std::size_t{3}, std::size_t{64}, std::size_t{65}, std::size_t{300}}) {
    for (std::uint64_t first = 0; first < n; first += length + 7) {
      values.clear();
      for (std::uint64_t x = first; x < std::min(n, first + length); ++x) values.push_back(x);
      scratch.assign(values.size(), 0);
      perm.apply(values, scratch);
      for (std::size_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], perm(first + i)) << "value " << first + i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, FeistelDomain,
                         ::testing::Values(1, 2, 3, 5, 16, 17, 64, 1000, 4096, 8192, 65536, 100003));

TEST(FeistelPermutation, KeysGiveDifferentPermutations) {
  const FeistelPermutation a(1024, 1);
  const FeistelPermutation b(1024, 2);
  int same = 0;
  for (std::uint64_t x = 0; x < 1024; ++x) same += a(x) == b(x) ? 1 : 0;
  EXPECT_LT(same, 32);
}

TEST(Kronecker, RejectsBadParameters) {
  EXPECT_THROW(KroneckerGenerator(KroneckerParams{0, 16, 1}), Error);
  EXPECT_THROW(KroneckerGenerator(KroneckerParams{43, 16, 1}), Error);
  EXPECT_THROW(KroneckerGenerator(KroneckerParams{10, 0, 1}), Error);
  EXPECT_THROW(KroneckerGenerator(KroneckerParams{10, 16, 1, 0.5, 0.5, 0.5}), Error);
}

TEST(Kronecker, InitiatorProbabilitiesAreHonoured) {
  // Before relabelling, each bit level of a draw picks quadrant (row bit, column bit)
  // with probabilities A, B, C, D.
  const KroneckerGenerator gen(KroneckerParams{16, 16, 5});
  std::array<double, 4> quadrant{};
  const std::uint64_t samples = 40000;
  for (std::uint64_t s = 0; s < samples; ++s) {
    const Edge e = gen.kronecker_sample(s);
    for (int bit = 0; bit < 16; ++bit) quadrant[((e.u >> bit) & 1) * 2 + ((e.v >> bit) & 1)] += 1;
  }
  const double total = static_cast<double>(samples) * 16;
  EXPECT_NEAR(quadrant[0] / total, 0.57, 0.005);
  EXPECT_NEAR(quadrant[1] / total, 0.19, 0.005);
  EXPECT_NEAR(quadrant[2] / total, 0.19, 0.005);
  EXPECT_NEAR(quadrant[3] / total, 0.05, 0.005);
}

TEST(Kronecker, EdgeListIsIndependentOfThreadCount) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<Edge> one = testing::kronecker_edges(12, 16, 3);
  omp_set_num_threads(2);
  const std::vector<Edge> two = testing::kronecker_edges(12, 16, 3);
  omp_set_num_threads(4);
  const std::vector<Edge> four = testing::kronecker_edges(12, 16, 3);
  omp_set_num_threads(saved);
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, four);
}

TEST(Kronecker, AnySliceCanBeGeneratedAlone) {
  const KroneckerGenerator gen(KroneckerParams{11, 16, 9});
  const std::vector<Edge> all = testing::kronecker_edges(11, 16, 9);
  ASSERT_EQ(all.size(), gen.num_edges());
  for (const std::uint64_t first : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{777}, gen.num_edges() - 100}) {
    std::vector<Edge> slice(100);
    gen.generate(first, slice);
    for (std::size_t i = 0; i < slice.size(); ++i) ASSERT_EQ(slice[i], all[first + i]) << "position " << first + i;
  }
}

TEST(Kronecker, BlockGenerationGivesWhatEdgeGives) {
  // generate() runs shuffle, draws and relabelling stage by stage over blocks; edge() is
  // the definition. Odd scales and an edgefactor that is not a power of two make both
  // permutations walk values outside their domains.
  for (const int scale : {1, 2, 5, 12, 13}) {
    for (const std::uint64_t edgefactor : {std::uint64_t{16}, std::uint64_t{5}}) {
      const KroneckerGenerator gen(KroneckerParams{scale, edgefactor, 11});
      const std::uint64_t m = gen.num_edges();
      for (const std::uint64_t first : {std::uint64_t{0}, std::uint64_t{3}, m / 2}) {
        std::vector<Edge> block(std::min<std::uint64_t>(m - first, 700));
        gen.generate(first, block);
        for (std::size_t i = 0; i < block.size(); ++i) {
          ASSERT_EQ(block[i], gen.edge(first + i))
              << "scale " << scale << ", edgefactor " << edgefactor << ", position " << first + i;
        }
      }
    }
  }
}

TEST(Kronecker, DrawsAreTheListInAnotherOrder) {
  // Position p holds draw draw_at(p), so draws [0, m) and positions [0, m) are the same
  // tuples; draw d is relabel(kronecker_sample(d)).
  for (const int scale : {6, 7}) {
    const KroneckerGenerator gen(KroneckerParams{scale, 16, 2});
    std::vector<Edge> positions(gen.num_edges());
    std::vector<Edge> draws(gen.num_edges());
    gen.generate(0, positions);
    gen.generate_draws(0, draws);
    for (const std::uint64_t d : {std::uint64_t{0}, std::uint64_t{5}, gen.num_edges() - 1}) {
      const Edge raw = gen.kronecker_sample(d);
      EXPECT_EQ(draws[d], (Edge{gen.relabel(raw.u), gen.relabel(raw.v)}));
    }
    EXPECT_NE(positions, draws);
    const auto by_ends = [](const Edge& a, const Edge& b) { return a.u != b.u ? a.u < b.u : a.v < b.v; };
    std::sort(positions.begin(), positions.end(), by_ends);
    std::sort(draws.begin(), draws.end(), by_ends);
    EXPECT_EQ(positions, draws);
  }
}

TEST(GraphGenerator, RegeneratedSharesMakeUpTheGeneratedList) {
  // For every family that produces edges by index, the ranks' regenerated shares hold the
  // generated slices' tuples, at every rank count; rgg has none.
  const auto by_ends = [](const Edge& a, const Edge& b) { return a.u != b.u ? a.u < b.u : a.v < b.v; };
  for (const GraphKind kind : {GraphKind::kKronecker, GraphKind::kRmat, GraphKind::kGnm, GraphKind::kRgg}) {
    GraphSpec spec;
    spec.kind = kind;
    spec.scale = 9;
    spec.edgefactor = 8;
    spec.seed = 4;
    for (const int ranks : {1, 3, 4}) {
      std::vector<Edge> generated;
      std::vector<Edge> regenerated;
      bool every_rank = true;
      for (int rank = 0; rank < ranks; ++rank) {
        const PackedEdgeList slice = generate_graph_slice(spec, rank, ranks);
        for (std::uint64_t i = 0; i < slice.size(); ++i) generated.push_back(slice.get(i));
        const std::optional<InputEdges> share = regenerated_graph_slice(spec, rank, ranks);
        if (!share) {
          every_rank = false;
          continue;
        }
        EXPECT_EQ(share->num_vertices(), graph_vertices(spec));
        std::vector<Edge> part(share->size());
        share->read(0, part);
        regenerated.insert(regenerated.end(), part.begin(), part.end());
      }
      if (kind == GraphKind::kRgg) {
        EXPECT_FALSE(every_rank);
        continue;
      }
      ASSERT_TRUE(every_rank) << to_string(kind);
      std::sort(generated.begin(), generated.end(), by_ends);
      std::sort(regenerated.begin(), regenerated.end(), by_ends);
      EXPECT_EQ(generated, regenerated) << to_string(kind) << " on " << ranks << " ranks";
    }
  }
}

TEST(Kronecker, SeedsChangeTheGraphAndIdsStayInRange) {
  const std::vector<Edge> a = testing::kronecker_edges(10, 8, 1);
  const std::vector<Edge> b = testing::kronecker_edges(10, 8, 2);
  EXPECT_NE(a, b);
  for (const Edge& e : a) {
    ASSERT_LT(e.u, 1024U);
    ASSERT_LT(e.v, 1024U);
  }
}

TEST(Kronecker, RelabellingSpreadsTheHubs) {
  // Without relabelling, vertex 0 would be the largest hub; the permutation must move it.
  const std::vector<Edge> edges = testing::kronecker_edges(14, 16, 4);
  std::vector<std::uint64_t> degree(1 << 14, 0);
  for (const Edge& e : edges) {
    ++degree[e.u];
    ++degree[e.v];
  }
  const auto hub = static_cast<std::uint64_t>(std::max_element(degree.begin(), degree.end()) - degree.begin());
  EXPECT_NE(hub, 0U);
  EXPECT_GT(degree[hub], 1000U);  // scale-free: the hub is far above the mean degree 32
}

TEST(Kronecker, EdgesAreRelabelledDrawsInShuffledOrder) {
  const KroneckerGenerator gen(KroneckerParams{10, 4, 1});
  std::vector<bool> drawn(gen.num_edges(), false);
  std::uint64_t in_place = 0;
  for (std::uint64_t i = 0; i < gen.num_edges(); ++i) {
    const std::uint64_t draw = gen.draw_at(i);
    ASSERT_LT(draw, gen.num_edges());
    ASSERT_FALSE(drawn[draw]) << "draw " << draw << " used twice";
    drawn[draw] = true;
    in_place += draw == i ? 1 : 0;
    const Edge raw = gen.kronecker_sample(draw);
    ASSERT_EQ(gen.edge(i), (Edge{gen.relabel(raw.u), gen.relabel(raw.v)}));
  }
  EXPECT_LT(in_place, gen.num_edges() / 16);
  std::uint64_t relabel_fixed = 0;
  for (std::uint64_t v = 0; v < gen.num_vertices(); ++v) relabel_fixed += gen.relabel(v) == v ? 1 : 0;
  EXPECT_LT(relabel_fixed, gen.num_vertices() / 16);
}

class PackedWidth : public ::testing::TestWithParam<int> {};

TEST_P(PackedWidth, RoundTripsEveryEdge) {
  const int bits = GetParam();
  const std::uint64_t max_id = (std::uint64_t{1} << bits) - 1;
  std::vector<Edge> edges = {{0, 0}, {max_id, 0}, {0, max_id}, {max_id, max_id}};
  const CounterRng rng(3, RandomStream::kKroneckerBits);
  for (std::uint64_t i = 0; i < 200; ++i) edges.push_back({rng(2 * i) & max_id, rng(2 * i + 1) & max_id});
  const PackedEdgeList list = testing::pack(bits, edges);
  EXPECT_EQ(list.record_bytes(), static_cast<unsigned>((2 * bits + 7) / 8));
  for (std::size_t i = 0; i < edges.size(); ++i) ASSERT_EQ(list.get(i), edges[i]) << "edge " << i;
}

INSTANTIATE_TEST_SUITE_P(Widths, PackedWidth, ::testing::Values(1, 3, 7, 16, 20, 24, 31, 32, 33, 42, 62));

TEST(SearchRoots, AreDistinctEligibleAndDeterministic) {
  const auto eligible = [](std::uint64_t v) { return v % 3 == 0; };
  const std::vector<std::uint64_t> a = sample_search_roots(3000, 1000, 64, 11, eligible);
  const std::vector<std::uint64_t> b = sample_search_roots(3000, 1000, 64, 11, eligible);
  const std::vector<std::uint64_t> c = sample_search_roots(3000, 1000, 64, 12, eligible);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a.size(), 64U);
  EXPECT_EQ(std::set<std::uint64_t>(a.begin(), a.end()).size(), 64U);
  for (const std::uint64_t r : a) EXPECT_TRUE(eligible(r));
}

TEST(SearchRoots, TooFewEligibleVerticesIsAUsageError) {
  try {
    (void)sample_search_roots(16, 3, 4, 1, [](std::uint64_t v) { return v < 3; });
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
  }
  // No eligible vertex at all is an error, whatever the count (an input run asks for at
  // most as many roots as there are eligible vertices, so for none there).
  for (const std::uint64_t count : {0, 1}) {
    try {
      (void)sample_search_roots(16, 0, count, 1, [](std::uint64_t) { return false; });
      FAIL() << "expected an error for " << count << " roots";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage);
      EXPECT_NE(std::string(e.what()).find("nothing to search"), std::string::npos) << e.what();
    }
  }
  // Exactly as many eligible vertices as roots: all of them are chosen.
  const std::vector<std::uint64_t> all = sample_search_roots(16, 3, 3, 1, [](std::uint64_t v) { return v < 3; });
  EXPECT_EQ(std::set<std::uint64_t>(all.begin(), all.end()), (std::set<std::uint64_t>{0, 1, 2}));
}

}  // namespace
}  // namespace zbfs
