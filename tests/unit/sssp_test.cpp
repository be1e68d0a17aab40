// Kernel 3 on one process: the tuples' weights, the lists' weights, delta-stepping against
// a plain Dijkstra, and the SSSP validator, which must accept the kernel's trees and catch
// every rule broken on purpose.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "test_graphs.hpp"
#include "zbfs/core/input_edges.hpp"
#include "zbfs/generator/edge_weights.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/generator/kronecker.hpp"
#include "zbfs/graph/csr_builder.hpp"
#include "zbfs/graph/list_weights.hpp"
#include "zbfs/sssp/delta_stepping.hpp"
#include "zbfs/validate/reference_sssp.hpp"
#include "zbfs/validate/sssp_validator.hpp"

namespace zbfs {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// A weighted graph held for a test: the list, its weights, and the input view of both.
struct WeightedList {
  PackedEdgeList edges;
  std::vector<float> weights;
  [[nodiscard]] InputEdges input(std::uint64_t n) const {
    InputEdges in(edges, n);
    in.attach_weights(weights.data());
    return in;
  }
};

WeightedList kronecker_weighted(int scale, std::uint64_t seed) {
  GraphSpec spec;
  spec.scale = scale;
  spec.seed = seed;
  WeightedList out;
  out.edges = generate_graph_slice(spec, 0, 1);
  const LargeArray<float> w = generate_weight_slice(spec, 0, 1, out.edges);
  out.weights.assign(w.data(), w.data() + w.size());
  return out;
}

// A weighted Kronecker graph and what a kernel's test reads of it: its input, its
// degree-ordered lists and their weights, and the tuples for the reference.
struct WeightedGraph {
  WeightedGraph(int scale, std::uint64_t seed)
      : list(kronecker_weighted(scale, seed)),
        n(std::uint64_t{1} << scale),
        in(list.input(n)),
        g(build_csr<std::uint32_t>(in, CsrOrder::kDegree)),
        lw(build_list_weights(g, in)),
        edges(testing::unpack(list.edges)) {}
  WeightedGraph(const WeightedGraph&) = delete;  // `in` reads `list`
  WeightedGraph& operator=(const WeightedGraph&) = delete;

  WeightedList list;
  std::uint64_t n;
  InputEdges in;
  Csr<std::uint32_t> g;
  LargeArray<float> lw;
  std::vector<Edge> edges;
};

TEST(TupleWeights, AreInTheUnitIntervalAndAFunctionOfSeedAndKey) {
  const TupleWeights a(1);
  const TupleWeights b(2);
  double sum = 0;
  int differ = 0;
  for (std::uint64_t k = 0; k < 10000; ++k) {
    const float w = a(k);
    ASSERT_GE(w, 0.0F);
    ASSERT_LT(w, 1.0F);
    EXPECT_EQ(w, TupleWeights(1)(k));
    EXPECT_EQ(w * 16777216.0F, std::floor(w * 16777216.0F)) << "a multiple of 2^-24";
    sum += w;
    differ += a(k) != b(k) ? 1 : 0;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
  EXPECT_GT(differ, 9900);
}

// The weighted tuples as a multiset, whatever their order.
std::multiset<std::tuple<std::uint64_t, std::uint64_t, float>> weighted_tuples(const InputEdges& in) {
  std::multiset<std::tuple<std::uint64_t, std::uint64_t, float>> out;
  std::vector<Edge> e(in.size());
  std::vector<float> w(in.size());
  in.read(0, e);
  in.read_weights(0, w);
  for (std::size_t i = 0; i < e.size(); ++i) out.emplace(e[i].u, e[i].v, w[i]);
  return out;
}

TEST(TupleWeights, TravelWithTheirTuplesInEverySliceAndOrder) {
  for (const GraphKind kind : {GraphKind::kKronecker, GraphKind::kGnm, GraphKind::kRmat}) {
    GraphSpec spec;
    spec.kind = kind;
    spec.scale = 9;
    spec.seed = 5;
    const std::uint64_t n = graph_vertices(spec);
    // The whole shuffled list with its weights, against the draws produced again.
    const PackedEdgeList whole = generate_graph_slice(spec, 0, 1);
    const LargeArray<float> whole_weights = generate_weight_slice(spec, 0, 1, whole);
    InputEdges stored(whole, n);
    stored.attach_weights(whole_weights.data());
    const auto expected = weighted_tuples(stored);
    EXPECT_EQ(weighted_tuples(*regenerated_graph_slice(spec, 0, 1)), expected) << to_string(kind);
    // Three ranks' slices, stored and produced again, make up the same list.
    std::multiset<std::tuple<std::uint64_t, std::uint64_t, float>> sliced;
    std::multiset<std::tuple<std::uint64_t, std::uint64_t, float>> shares;
    for (int r = 0; r < 3; ++r) {
      const PackedEdgeList slice = generate_graph_slice(spec, r, 3);
      const LargeArray<float> w = generate_weight_slice(spec, r, 3, slice);
      InputEdges in(slice, n);
      in.attach_weights(w.data());
      sliced.merge(weighted_tuples(in));
      shares.merge(weighted_tuples(*regenerated_graph_slice(spec, r, 3)));
    }
    EXPECT_EQ(sliced, expected) << to_string(kind);
    EXPECT_EQ(shares, expected) << to_string(kind);
  }
}

TEST(TupleWeights, RggWeightsFollowTheirPairs) {
  GraphSpec spec;
  spec.kind = GraphKind::kRgg;
  spec.vertices = 600;
  spec.seed = 3;
  std::map<std::pair<std::uint64_t, std::uint64_t>, float> seen;
  for (int r = 0; r < 2; ++r) {
    const PackedEdgeList slice = generate_graph_slice(spec, r, 2);
    const LargeArray<float> w = generate_weight_slice(spec, r, 2, slice);
    for (std::uint64_t i = 0; i < slice.size(); ++i) {
      const Edge e = slice.get(i);
      const auto key = std::minmax(e.u, e.v);
      ASSERT_FALSE(seen.contains(key));
      seen[key] = w[i];
      EXPECT_EQ(w[i], TupleWeights(3)(TupleWeights::pair_key(e.u, e.v, 600)));
    }
  }
  EXPECT_GT(seen.size(), 600U);
}

TEST(ListWeights, TakeTheLightestOfDuplicateTuples) {
  // (0,1) twice, (1,0) once, in three weights; a self-loop; (1,2).
  const std::vector<Edge> edges{{0, 1}, {1, 2}, {1, 0}, {2, 2}, {0, 1}};
  const std::vector<float> w{0.5F, 0.25F, 0.125F, 0.0F, 0.75F};
  const PackedEdgeList list = testing::pack(2, edges);
  InputEdges in(list, 4);
  in.attach_weights(w.data());
  for (const CsrOrder order : {CsrOrder::kInput, CsrOrder::kDegree}) {
    const Csr<std::uint32_t> g = build_csr<std::uint32_t>(in, order);
    const LargeArray<float> lw = build_list_weights(g, in);
    const auto weight = [&](std::uint64_t a, std::uint64_t b) {
      const std::uint64_t u = g.internal_id(a);
      const std::uint64_t v = g.internal_id(b);
      const auto list_u = g.neighbors(u);
      const auto at = std::find(list_u.begin(), list_u.end(), v) - list_u.begin();
      return lw[g.offsets()[u] + static_cast<std::uint64_t>(at)];
    };
    EXPECT_EQ(weight(0, 1), 0.125F);
    EXPECT_EQ(weight(1, 0), 0.125F);
    EXPECT_EQ(weight(1, 2), 0.25F);
    EXPECT_EQ(weight(2, 1), 0.25F);
  }
}

// Kernel 1 places the weights with the entries (build_csr with weights): the same lists
// as without them, and beside each entry the weight build_list_weights finds by search,
// the lightest duplicate's (-0 as +0), in both orders, by the direct placement and by the
// blocked one (2^21 rows and more), from a stored list and from a produced one.
TEST(ListWeights, PlacedWithTheEntriesEqualTheSearchedOnes) {
  const auto check = [](const InputEdges& in, CsrOrder order) {
    LargeArray<float> placed;
    const Csr<std::uint32_t> weighted = build_csr<std::uint32_t>(in, order, &placed);
    const Csr<std::uint32_t> plain = build_csr<std::uint32_t>(in, order);
    ASSERT_EQ(weighted.num_directed_edges(), plain.num_directed_edges());
    ASSERT_EQ(placed.size(), plain.num_directed_edges());
    EXPECT_TRUE(std::equal(plain.offsets(), plain.offsets() + plain.num_vertices() + 1, weighted.offsets()));
    EXPECT_TRUE(std::equal(plain.neighbor_data(), plain.neighbor_data() + plain.num_directed_edges(),
                           weighted.neighbor_data()));
    const LargeArray<float> searched = build_list_weights(plain, in);
    std::uint64_t differ = 0;
    std::uint64_t negative_zeros = 0;
    for (std::uint64_t k = 0; k < placed.size(); ++k) {
      differ += placed[k] == searched[k] ? 0 : 1;
      negative_zeros += std::signbit(placed[k]) ? 1 : 0;
    }
    EXPECT_EQ(differ, 0U);
    EXPECT_EQ(negative_zeros, 0U);
  };
  // Duplicates with different weights, both ways round, a -0 and a +0 on one edge.
  const std::vector<Edge> edges{{0, 1}, {1, 2}, {1, 0}, {2, 2}, {0, 1}, {2, 3}, {3, 2}, {3, 0}};
  const std::vector<float> w{0.5F, 0.25F, 0.125F, 0.0F, 0.75F, -0.0F, 0.0F, 0.375F};
  const PackedEdgeList list = testing::pack(2, edges);
  InputEdges in(list, 4);
  in.attach_weights(w.data());
  for (const CsrOrder order : {CsrOrder::kInput, CsrOrder::kDegree}) check(in, order);
  for (const int scale : {11, 21}) {
    SCOPED_TRACE("scale " + std::to_string(scale));
    GraphSpec spec;
    spec.scale = scale;
    spec.edgefactor = scale == 21 ? 1 : 16;
    spec.seed = 3;
    const PackedEdgeList slice = generate_graph_slice(spec, 0, 1);
    const LargeArray<float> weights = generate_weight_slice(spec, 0, 1, slice);
    InputEdges stored(slice, std::uint64_t{1} << scale);
    stored.attach_weights(weights.data());
    check(stored, CsrOrder::kDegree);
    // Produced chunk by chunk, as kernel 1 reads a list it does not keep.
    InputEdges produced(std::uint64_t{1} << scale, slice.size(), [&slice](std::uint64_t first, std::span<Edge> out) {
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = slice.get(first + i);
    });
    produced.attach_weights([&weights](std::uint64_t first, std::span<float> out) {
      std::copy_n(weights.data() + first, out.size(), out.begin());
    });
    check(produced, CsrOrder::kDegree);
  }
}

// Delta-stepping's distances equal Dijkstra's exactly, and the validator accepts its
// trees, for narrow, default and wide buckets and 1 to 4 threads.
TEST(DeltaStepping, MatchesDijkstraAndPassesTheValidator) {
  const WeightedGraph graph(11, 2);
  const auto& [list, n, in, g, lw, edges] = graph;
  std::vector<std::int64_t> parent(n);
  std::vector<float> distance(n);
  for (const int threads : {1, 4}) {
    omp_set_num_threads(threads);
    for (const std::optional<double> delta : {std::optional<double>(0.001), std::optional<double>(),
                                              std::optional<double>(0.3), std::optional<double>(100.0)}) {
      DeltaStepping sssp(g, lw.span(), delta);
      EXPECT_GT(sssp.delta(), 0.0);
      for (const std::uint64_t root : {std::uint64_t{0}, std::uint64_t{17}, std::uint64_t{1000}}) {
        if (g.degree(g.internal_id(root)) == 0) continue;
        const std::vector<float> truth = reference_sssp_distances(n, edges, list.weights, root);
        const SsspStats stats = sssp.run(root, parent, distance);
        std::uint64_t reached = 0;
        for (std::uint64_t v = 0; v < n; ++v) {
          ASSERT_EQ(distance[v], truth[v]) << "vertex " << v << " root " << root << " delta " << sssp.delta();
          reached += truth[v] != kInf ? 1 : 0;
        }
        EXPECT_EQ(stats.reached_vertices, reached);
        const ValidationReport report = validate_sssp_tree(in, root, parent, distance);
        EXPECT_TRUE(report.ok()) << report.messages.front();
        EXPECT_EQ(report.reached_vertices, reached);
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

// The early buckets (the hubs) push their heavy edges and the late ones pull them, which
// reads far fewer entries than pushing them all, with the same distances as Dijkstra's
// and a tree the validator accepts, on one thread and several.
TEST(DeltaStepping, PullsLateBucketsAndPushesEarlyOnes) {
  const WeightedGraph graph(13, 5);
  const auto& [list, n, in, g, lw, edges] = graph;
  std::vector<std::int64_t> parent(n);
  std::vector<float> distance(n);
  for (const int threads : {1, 3}) {
    omp_set_num_threads(threads);
    DeltaStepping sssp(g, lw.span());
    for (const std::uint64_t root : {list.edges.get(0).u, list.edges.get(9).v}) {
      const SsspStats stats = sssp.run(root, parent, distance);
      EXPECT_GT(stats.pull_buckets, 0U);
      EXPECT_LT(stats.pull_buckets, stats.buckets);
      // Nearly every entry is heavy (the default delta leaves a couple light a vertex).
      EXPECT_LT(stats.heavy_edges, g.num_directed_edges() / 4) << "a pull reads a prefix of few lists";
      EXPECT_EQ(distance, reference_sssp_distances(n, edges, list.weights, root)) << threads << " threads";
      const ValidationReport report = validate_sssp_tree(in, root, parent, distance);
      EXPECT_TRUE(report.ok()) << report.messages.front();
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

// A tiny delta puts a path's vertices billions of buckets apart: the empty buckets cost
// nothing (a search takes a bucket per distinct distance at most), and a delta so small
// that distance / delta overflows 64 bits still gives Dijkstra's distances.
TEST(DeltaStepping, TinyDeltaCostsABucketPerDistanceAtMost) {
  std::vector<Edge> edges;
  std::vector<float> w;
  for (std::uint64_t v = 0; v + 1 < 200; ++v) {
    edges.push_back({v, v + 1});
    w.push_back(static_cast<float>((v * 37 % 101) + 1) / 97.0F);
  }
  const WeightedList list{testing::pack(8, edges), w};
  const InputEdges in = list.input(200);
  const Csr<std::uint32_t> g = build_csr<std::uint32_t>(in, CsrOrder::kDegree);
  const LargeArray<float> lw = build_list_weights(g, in);
  std::vector<std::int64_t> parent(200);
  std::vector<float> distance(200);
  for (const int threads : {1, 3}) {
    omp_set_num_threads(threads);
    for (const double delta : {1e-7, 1e-12, 1e-30}) {
      DeltaStepping sssp(g, lw.span(), delta);
      for (const std::uint64_t root : {0, 57, 199}) {
        const SsspStats stats = sssp.run(root, parent, distance);
        EXPECT_TRUE(validate_sssp_tree(in, root, parent, distance).ok()) << "delta " << delta;
        EXPECT_EQ(std::vector<float>(distance), reference_sssp_distances(200, edges, w, root)) << "delta " << delta;
        EXPECT_LE(stats.buckets, 2 * 200U) << "delta " << delta;
      }
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

TEST(DeltaStepping, ZeroWeightsMakeNoCycles) {
  // A ring and chords, every weight 0 or tiny: many equal distances.
  std::vector<Edge> edges;
  std::vector<float> w;
  for (std::uint64_t v = 0; v < 64; ++v) {
    edges.push_back({v, (v + 1) % 64});
    w.push_back(0.0F);
    edges.push_back({v, (v * 7 + 3) % 64});
    w.push_back(v % 3 == 0 ? 0.0F : 0x1p-24F);
  }
  const PackedEdgeList list = testing::pack(6, edges);
  InputEdges in(list, 64);
  in.attach_weights(w.data());
  const Csr<std::uint32_t> g = build_csr<std::uint32_t>(in, CsrOrder::kDegree);
  const LargeArray<float> lw = build_list_weights(g, in);
  std::vector<std::int64_t> parent(64);
  std::vector<float> distance(64);
  for (const int threads : {1, 3}) {
    omp_set_num_threads(threads);
    DeltaStepping sssp(g, lw.span(), 0.5);
    for (std::uint64_t root = 0; root < 64; root += 9) {
      sssp.run(root, parent, distance);
      const ValidationReport report = validate_sssp_tree(in, root, parent, distance);
      EXPECT_TRUE(report.ok()) << report.messages.front();
      EXPECT_EQ(std::vector<float>(distance), reference_sssp_distances(64, edges, w, root));
    }
  }
  omp_set_num_threads(omp_get_num_procs());
}

// The validator on a tree by hand, broken one rule at a time. The drawn graph with
//   weights (0,1) .5  (1,2) .25  (2,3) .5  (0,4) .125  (1,5) .5  (4,5) .25
//           (6,7) 1  (7,8) 1  (8,6) 1  (3,3) 0  (2,1) .75
// from 0: d 0:0 1:.5 4:.125 5:.375 2:.75 3:1.25, parents 1<-0 4<-0 5<-4 2<-1 3<-2.
class SsspValidator : public ::testing::Test {
 protected:
  SsspValidator() : edges_(testing::pack(testing::kDrawnGraphBits, testing::drawn_graph())) {
    weights_ = {0.5F, 0.25F, 0.5F, 0.125F, 0.5F, 0.25F, 1.0F, 1.0F, 1.0F, 0.0F, 0.75F};
    parent_.assign(16, -1);
    distance_.assign(16, kInf);
    set(0, 0, 0.0F);
    set(1, 0, 0.5F);
    set(4, 0, 0.125F);
    set(5, 4, 0.375F);
    set(2, 1, 0.75F);
    set(3, 2, 1.25F);
  }
  void set(std::uint64_t v, std::int64_t p, float d) {
    parent_[v] = p;
    distance_[v] = d;
  }
  ValidationReport check() const {
    InputEdges in(edges_, 16);
    in.attach_weights(weights_.data());
    return validate_sssp_tree(in, 0, parent_, distance_);
  }

  PackedEdgeList edges_;
  std::vector<float> weights_;
  std::vector<std::int64_t> parent_;
  std::vector<float> distance_;
};

TEST_F(SsspValidator, AcceptsTheTreeAndMatchesDijkstra) {
  const ValidationReport r = check();
  EXPECT_TRUE(r.ok()) << r.messages.front();
  EXPECT_EQ(r.traversed_edges, 7U);
  EXPECT_EQ(r.reached_vertices, 6U);
  EXPECT_EQ(reference_sssp_distances(16, testing::drawn_graph(), weights_, 0), distance_);
}

TEST_F(SsspValidator, Rule1CatchesACycleARootWithAParentAndADistance) {
  set(1, 2, 0.5F);  // 1 <- 2 <- 1
  EXPECT_TRUE(check().violates(ValidationRule::kTreeRootedAtKey));
  set(1, 0, 0.5F);
  set(0, 1, 0.0F);
  EXPECT_TRUE(check().violates(ValidationRule::kTreeRootedAtKey));
  set(0, 0, 0.0625F);
  EXPECT_TRUE(check().violates(ValidationRule::kTreeRootedAtKey));
}

TEST_F(SsspValidator, Rule2CatchesADistanceThatIsNotTheParentsPlusAWeight) {
  set(3, 2, 1.375F);  // 0.75 + 0.5 = 1.25, not 1.375 (the triangle rule holds: 3 is a leaf)
  const ValidationReport r = check();
  EXPECT_TRUE(r.violates(ValidationRule::kTreeEdgeDistance)) << r.messages.front();
  EXPECT_FALSE(r.violates(ValidationRule::kParentIsInputEdge));
  set(3, 2, std::nextafter(1.25F, 2.0F));  // one unit in the last place off
  EXPECT_TRUE(check().violates(ValidationRule::kTreeEdgeDistance));
  set(3, 2, -1.0F);
  EXPECT_TRUE(check().violates(ValidationRule::kTreeEdgeDistance));
}

TEST_F(SsspValidator, Rule3CatchesAnEdgeShorterThanTheDistancesApart) {
  // Through 1 (0.5 + 0.5), 5 would be at 1.0: give the subtree 5 the longer way round.
  set(5, 1, 1.0F);
  const ValidationReport r = check();
  EXPECT_TRUE(r.violates(ValidationRule::kInputEdgeLevels)) << r.messages.front();
}

TEST_F(SsspValidator, Rule4CatchesAnUnreachedVertexOfTheComponent) {
  set(3, -1, kInf);
  EXPECT_TRUE(check().violates(ValidationRule::kSpansComponent));
  set(3, 2, 1.25F);
  set(6, 6, 0.0F);  // a vertex of another component in the tree
  EXPECT_TRUE(check().violates(ValidationRule::kTreeRootedAtKey) || check().violates(ValidationRule::kSpansComponent));
}

TEST_F(SsspValidator, Rule5CatchesAParentThatIsNotAnEdge) {
  set(3, 5, 1.25F);  // (5,3) is no input edge
  const ValidationReport r = check();
  EXPECT_TRUE(r.violates(ValidationRule::kParentIsInputEdge)) << r.messages.front();
}

}  // namespace
}  // namespace zbfs
