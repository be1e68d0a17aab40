// Distributed SSSP against a plain Dijkstra over the whole weighted list: the same
// distances bit for bit on every layout (1D, 2D on every grid, hybrid), codec and route,
// every tree accepted by both validators with the same traversed-edge count; and the
// distributed SSSP validator rejecting each rule's corruption as the one-process one does.
#include "zbfs/sssp/distributed_sssp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "zbfs/codec/codec_cost.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/mpi/environment.hpp"
#include "zbfs/validate/distributed_validator.hpp"
#include "zbfs/validate/reference_sssp.hpp"
#include "zbfs/validate/sssp_validator.hpp"
#include "zbfs/wire/exchanger_factory.hpp"

namespace zbfs {
namespace {

GraphSpec weighted_spec() {
  GraphSpec spec;
  spec.scale = 9;
  spec.edgefactor = 8;
  spec.seed = 5;
  return spec;
}

// The whole weighted list, on every rank (the truth the tests compare with).
struct WholeGraph {
  PackedEdgeList edges;
  LargeArray<float> weights;
  std::vector<Edge> edge_vector;
  std::uint64_t n = 0;
  explicit WholeGraph(const GraphSpec& spec) {
    edges = generate_graph_slice(spec, 0, 1);
    weights = generate_weight_slice(spec, 0, 1, edges);
    n = graph_vertices(spec);
    for (std::uint64_t i = 0; i < edges.size(); ++i) edge_vector.push_back(edges.get(i));
  }
  [[nodiscard]] InputEdges input() const {
    InputEdges in(edges, n);
    in.attach_weights(weights.data());
    return in;
  }
};

// This rank's slice and weights, the graph built from them, and the piece's tree.
struct RankGraph {
  PackedEdgeList slice;
  LargeArray<float> weights;
  std::optional<DistributedGraph<std::uint32_t>> graph;
  RankGraph(const ProcessGrid& grid, const GraphSpec& spec) {
    slice = generate_graph_slice(spec, grid.rank(), grid.size());
    weights = generate_weight_slice(spec, grid.rank(), grid.size(), slice);
    graph.emplace(grid, slice, false, std::uint64_t{1} << 12, std::span<const float>(weights.span()));
  }
  [[nodiscard]] InputEdges input(std::uint64_t n) const {
    InputEdges in(slice, n);
    in.attach_weights(weights.data());
    return in;
  }
};

// Every rank's piece of distances gathered into one array, in vertex order (rank w holds
// piece piece_of_rank(w)).
std::vector<float> gather_distances(const ProcessGrid& grid, std::span<const float> mine) {
  std::vector<std::uint32_t> bits(mine.size());
  for (std::size_t i = 0; i < mine.size(); ++i) bits[i] = std::bit_cast<std::uint32_t>(mine[i]);
  std::vector<std::uint32_t> all(mine.size() * static_cast<std::size_t>(grid.size()));
  grid.world().allgather(std::span<const std::uint32_t>(bits), std::span<std::uint32_t>(all));
  std::vector<float> distances(grid.blocks().num_vertices());
  const std::uint64_t block = grid.blocks().block();
  for (int w = 0; w < grid.size(); ++w) {
    const std::uint64_t first = grid.blocks().first_vertex(grid.shape().piece_of_rank(w));
    for (std::uint64_t o = 0; o < block && first + o < distances.size(); ++o) {
      distances[first + o] = std::bit_cast<float>(all[static_cast<std::uint64_t>(w) * block + o]);
    }
  }
  return distances;
}

std::vector<std::uint64_t> some_roots(const WholeGraph& whole) {
  // Ends of the first tuples that are no self-loops: vertices with edges.
  std::vector<std::uint64_t> roots;
  for (const Edge& e : whole.edge_vector) {
    if (e.u != e.v) roots.push_back(roots.size() % 2 == 0 ? e.u : e.v);
    if (roots.size() == 3) break;
  }
  return roots;
}

// The exchangers a run may have: direct without and with codecs (and the union column
// gather), pipelined, one-sided, and routes with and without merging.
std::vector<std::pair<std::string, std::unique_ptr<Exchanger>>> exchangers() {
  std::vector<std::pair<std::string, std::unique_ptr<Exchanger>>> all;
  all.emplace_back("direct", make_exchanger({}));
  ExchangeSetup bitpack;
  bitpack.codec = MessageCodec(CodecChoice{CodecId::kBitpack}, {});
  all.emplace_back("bitpack", make_exchanger(std::move(bitpack)));
  ExchangeSetup automatic;
  automatic.column_gather = ColumnGather::kUnion;
  automatic.codec = MessageCodec(CodecChoice{}, std::make_shared<const CodecCostModel>(CodecCostModel::calibrate()));
  all.emplace_back("auto, union", make_exchanger(std::move(automatic)));
  ExchangeSetup overlapped;
  overlapped.overlap = true;
  all.emplace_back("overlap", make_exchanger(std::move(overlapped)));
  ExchangeSetup one_sided;
  one_sided.transport = Transport::kRma;
  all.emplace_back("rma", make_exchanger(std::move(one_sided)));
  for (const RouteChoice& route : testing::every_route()) {
    if (route.kind == RouteKind::kDirect) continue;
    ExchangeSetup routed;
    routed.route = route;
    all.emplace_back(std::string(to_string(route.kind)) + (route.dedup ? "" : " no-dedup"),
                     make_exchanger(std::move(routed)));
  }
  return all;
}

TEST(DistributedSssp, DistancesEqualDijkstraOnEveryLayoutCodecAndRoute) {
  const GraphSpec spec = weighted_spec();
  const WholeGraph whole(spec);
  const InputEdges whole_input = whole.input();
  const std::vector<std::uint64_t> roots = some_roots(whole);
  std::vector<std::vector<float>> truth;
  for (const std::uint64_t root : roots) {
    truth.push_back(reference_sssp_distances(whole.n, whole.edge_vector, whole.weights.span(), root));
  }
  for (const testing::Layout& layout : testing::all_layouts(world_size())) {
    PhaseMetrics metrics;
    const ProcessGrid grid(layout.partition, layout.shape, whole.n, &metrics);
    RankGraph mine(grid, spec);
    const InputEdges slice = mine.input(whole.n);
    for (auto& [name, exchanger] : exchangers()) {
      SCOPED_TRACE(std::string(to_string(layout.partition)) + " " + layout.shape.to_string() + " " + name);
      DistributedSssp sssp(grid, *mine.graph, *exchanger, metrics);
      std::vector<std::int64_t> parent(grid.blocks().block());
      std::vector<float> distance(grid.blocks().block());
      for (std::size_t r = 0; r < roots.size(); ++r) {
        const SsspStats stats = sssp.run(roots[r], parent, distance);
        const std::vector<float> all = gather_distances(grid, distance);
        std::uint64_t mismatches = 0;
        std::uint64_t reached = 0;
        for (std::uint64_t v = 0; v < whole.n; ++v) {
          mismatches += std::bit_cast<std::uint32_t>(all[v]) != std::bit_cast<std::uint32_t>(truth[r][v]) ? 1 : 0;
          reached += std::isfinite(truth[r][v]) ? 1 : 0;
        }
        EXPECT_EQ(mismatches, 0U) << "root " << roots[r];
        EXPECT_EQ(stats.reached_vertices, reached);
        const ValidationReport report =
            validate_distributed_sssp_tree(grid, slice, *exchanger, roots[r], parent, distance, metrics, 900);
        EXPECT_TRUE(report.ok()) << (report.messages.empty() ? "" : report.messages.front());
        const std::vector<std::int64_t> all_parents = testing::gather_parents(grid, parent);
        const ValidationReport sequential = validate_sssp_tree(whole_input, roots[r], all_parents, all);
        EXPECT_TRUE(sequential.ok()) << (sequential.messages.empty() ? "" : sequential.messages.front());
        EXPECT_EQ(report.traversed_edges, sequential.traversed_edges);
        EXPECT_EQ(report.reached_vertices, reached);
      }
    }
  }
}

TEST(DistributedSssp, AnyDeltaGivesTheSameDistances) {
  const GraphSpec spec = weighted_spec();
  const WholeGraph whole(spec);
  const std::uint64_t root = some_roots(whole).front();
  const std::vector<float> truth = reference_sssp_distances(whole.n, whole.edge_vector, whole.weights.span(), root);
  PhaseMetrics metrics;
  const ProcessGrid grid(Partition::k1D, {1, world_size()}, whole.n, &metrics);
  RankGraph mine(grid, spec);
  const std::unique_ptr<Exchanger> exchanger = make_exchanger({});
  // Narrow (many buckets, past the window of near ones), default, wider than any weight,
  // and so narrow that a bucket holds one distinct distance at most, billions of empty
  // buckets apart (which cost nothing), or that d / delta overflows 64 bits.
  std::vector<float> sorted = truth;
  std::sort(sorted.begin(), sorted.end());
  const auto distinct = static_cast<std::uint64_t>(std::unique(sorted.begin(), sorted.end()) - sorted.begin());
  for (const std::optional<double> delta :
       {std::optional<double>(1e-4), std::optional<double>(), std::optional<double>(4.0), std::optional<double>(1e-12),
        std::optional<double>(1e-30)}) {
    DistributedSssp sssp(grid, *mine.graph, *exchanger, metrics, delta);
    std::vector<std::int64_t> parent(grid.blocks().block());
    std::vector<float> distance(grid.blocks().block());
    const SsspStats stats = sssp.run(root, parent, distance);
    EXPECT_EQ(gather_distances(grid, distance), truth) << "delta " << sssp.delta();
    EXPECT_LE(stats.buckets, 2 * distinct) << "delta " << sssp.delta();
  }
}

// Light rounds that take a bucket a sub-bucket at a time (on buckets of any size here) find
// the same distances and valid trees, on every layout, with and without a merging codec.
TEST(DistributedSssp, BucketsTakenASubBucketAtATimeGiveTheSameDistances) {
  const GraphSpec spec = weighted_spec();
  const WholeGraph whole(spec);
  const InputEdges whole_input = whole.input();
  const std::vector<std::uint64_t> roots = some_roots(whole);
  for (const testing::Layout& layout : testing::all_layouts(world_size())) {
    PhaseMetrics metrics;
    const ProcessGrid grid(layout.partition, layout.shape, whole.n, &metrics);
    RankGraph mine(grid, spec);
    const InputEdges slice = mine.input(whole.n);
    ExchangeSetup bitpack;
    bitpack.codec = MessageCodec(CodecChoice{CodecId::kBitpack}, {});
    for (const std::unique_ptr<Exchanger>& exchanger : {make_exchanger({}), make_exchanger(std::move(bitpack))}) {
      SCOPED_TRACE(std::string(to_string(layout.partition)) + " " + layout.shape.to_string());
      DistributedSssp whole_buckets(grid, *mine.graph, *exchanger, metrics, {}, {~std::uint64_t{0}, 0});
      DistributedSssp sub_buckets(grid, *mine.graph, *exchanger, metrics, {}, {0, 0});
      // Sub-buckets in the first bucket that holds a vertex, none after it (every bucket
      // relaxes its vertices fewer than 1 + 1e9 times each).
      DistributedSssp first_sub_buckets(grid, *mine.graph, *exchanger, metrics, {}, {0, 1e9});
      std::vector<std::int64_t> parent(grid.blocks().block());
      std::vector<float> distance(grid.blocks().block());
      std::uint64_t rounds_by_sub_buckets = 0;
      std::uint64_t rounds_first_sub_buckets = 0;
      for (const std::uint64_t root : roots) {
        const std::vector<float> truth =
            reference_sssp_distances(whole.n, whole.edge_vector, whole.weights.span(), root);
        const SsspStats at_once = whole_buckets.run(root, parent, distance);
        EXPECT_EQ(gather_distances(grid, distance), truth) << "root " << root;
        const SsspStats by_sub_buckets = sub_buckets.run(root, parent, distance);
        EXPECT_EQ(gather_distances(grid, distance), truth) << "root " << root;
        const ValidationReport report =
            validate_distributed_sssp_tree(grid, slice, *exchanger, root, parent, distance, metrics, 900);
        EXPECT_TRUE(report.ok()) << (report.messages.empty() ? "" : report.messages.front());
        // The same buckets, each in at least as many rounds.
        EXPECT_EQ(by_sub_buckets.buckets, at_once.buckets);
        EXPECT_GE(by_sub_buckets.light_rounds, at_once.light_rounds);
        const SsspStats stopped = first_sub_buckets.run(root, parent, distance);
        EXPECT_EQ(gather_distances(grid, distance), truth) << "root " << root;
        EXPECT_EQ(stopped.buckets, at_once.buckets);
        EXPECT_GE(stopped.light_rounds, at_once.light_rounds);
        EXPECT_LE(stopped.light_rounds, by_sub_buckets.light_rounds);
        rounds_by_sub_buckets += by_sub_buckets.light_rounds;
        rounds_first_sub_buckets += stopped.light_rounds;
      }
      // The buckets after the first are taken whole.
      EXPECT_LT(rounds_first_sub_buckets, rounds_by_sub_buckets);
    }
  }
}

TEST(DistributedSssp, RefusesAnUnweightedGraph) {
  PhaseMetrics metrics;
  const GraphSpec spec = weighted_spec();
  const ProcessGrid grid(Partition::k1D, {1, world_size()}, graph_vertices(spec), &metrics);
  const PackedEdgeList slice = generate_graph_slice(spec, grid.rank(), grid.size());
  DistributedGraph<std::uint32_t> graph(grid, slice);
  const std::unique_ptr<Exchanger> exchanger = make_exchanger({});
  EXPECT_THROW(DistributedSssp(grid, graph, *exchanger, metrics), Error);
}

// Each rule's corruption, applied to the whole arrays, rejected by both validators alike.
class DistributedSsspValidatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grid_.emplace(Partition::k2D, testing::all_layouts(world_size())[1].shape, whole_.n, &metrics_);
    mine_.emplace(*grid_, weighted_spec());
    exchanger_ = make_exchanger({});
    root_ = some_roots(whole_).front();
    DistributedSssp sssp(*grid_, *mine_->graph, *exchanger_, metrics_);
    std::vector<std::int64_t> parent(grid_->blocks().block());
    std::vector<float> distance(grid_->blocks().block());
    sssp.run(root_, parent, distance);
    parent_ = testing::gather_parents(*grid_, parent);
    distance_ = gather_distances(*grid_, distance);
  }

  void expect_rejected(const std::function<void(std::vector<std::int64_t>&, std::vector<float>&)>& corrupt,
                       ValidationRule expected) {
    std::vector<std::int64_t> parent = parent_;
    std::vector<float> distance = distance_;
    corrupt(parent, distance);
    const ValidationReport sequential = validate_sssp_tree(whole_.input(), root_, parent, distance);
    EXPECT_TRUE(sequential.violates(expected));
    const std::uint64_t block = grid_->blocks().block();
    const std::uint64_t first = grid_->my_first_vertex();
    std::vector<std::int64_t> my_parent(block, -1);
    std::vector<float> my_distance(block, std::numeric_limits<float>::infinity());
    for (std::uint64_t o = 0; o < block && first + o < whole_.n; ++o) {
      my_parent[o] = parent[first + o];
      my_distance[o] = distance[first + o];
    }
    const ValidationReport distributed = validate_distributed_sssp_tree(*grid_, mine_->input(whole_.n), *exchanger_,
                                                                        root_, my_parent, my_distance, metrics_, 700);
    EXPECT_FALSE(distributed.ok());
    EXPECT_TRUE(distributed.violates(expected)) << (distributed.messages.empty() ? "" : distributed.messages.front());
    EXPECT_FALSE(distributed.messages.empty());
  }

  // A reached vertex other than the root, whose parent is not the root, by id.
  [[nodiscard]] std::uint64_t deep_vertex() const {
    for (std::uint64_t v = 0; v < whole_.n; ++v) {
      if (v != root_ && parent_[v] >= 0 && static_cast<std::uint64_t>(parent_[v]) != root_) return v;
    }
    ADD_FAILURE() << "no vertex two links below the root";
    return root_;
  }

  // A reached vertex other than the root that is no vertex's parent (the root when none).
  [[nodiscard]] std::uint64_t tree_leaf() const {
    std::vector<bool> has_child(whole_.n, false);
    for (std::uint64_t v = 0; v < whole_.n; ++v) {
      if (parent_[v] >= 0 && static_cast<std::uint64_t>(parent_[v]) != v)
        has_child[static_cast<std::size_t>(parent_[v])] = true;
    }
    for (std::uint64_t v = 0; v < whole_.n; ++v) {
      if (v != root_ && parent_[v] >= 0 && !has_child[v]) return v;
    }
    return root_;
  }

  PhaseMetrics metrics_;
  WholeGraph whole_{weighted_spec()};
  std::optional<ProcessGrid> grid_;
  std::optional<RankGraph> mine_;
  std::unique_ptr<Exchanger> exchanger_;
  std::uint64_t root_ = 0;
  std::vector<std::int64_t> parent_;
  std::vector<float> distance_;
};

TEST_F(DistributedSsspValidatorTest, AcceptsTheKernelsTree) {
  const std::uint64_t block = grid_->blocks().block();
  const std::uint64_t first = grid_->my_first_vertex();
  std::vector<std::int64_t> my_parent(block, -1);
  std::vector<float> my_distance(block, std::numeric_limits<float>::infinity());
  for (std::uint64_t o = 0; o < block && first + o < whole_.n; ++o) {
    my_parent[o] = parent_[first + o];
    my_distance[o] = distance_[first + o];
  }
  const ValidationReport report = validate_distributed_sssp_tree(*grid_, mine_->input(whole_.n), *exchanger_, root_,
                                                                 my_parent, my_distance, metrics_);
  EXPECT_TRUE(report.ok()) << (report.messages.empty() ? "" : report.messages.front());
}

TEST_F(DistributedSsspValidatorTest, RootDistanceNotZero) {
  expect_rejected([&](auto&, std::vector<float>& d) { d[root_] = 0.5F; }, ValidationRule::kTreeRootedAtKey);
}

TEST_F(DistributedSsspValidatorTest, ParentCycle) {
  const std::uint64_t v = deep_vertex();
  const auto p = static_cast<std::uint64_t>(parent_[v]);
  expect_rejected([&](std::vector<std::int64_t>& parent, auto&) { parent[p] = static_cast<std::int64_t>(v); },
                  ValidationRule::kTreeRootedAtKey);
}

TEST_F(DistributedSsspValidatorTest, DistanceOneUlpOff) {
  const std::uint64_t v = deep_vertex();
  expect_rejected([&](auto&, std::vector<float>& d) { d[v] = std::nextafter(d[v], 0.0F); },
                  ValidationRule::kTreeEdgeDistance);
}

TEST_F(DistributedSsspValidatorTest, EdgeShorterThanItsEndsGap) {
  // Raising a leaf's distance by more than the weight to its parent leaves the parent's
  // link unconfirmed and some edge (the parent's) shorter than the gap.
  const std::uint64_t leaf = tree_leaf();
  ASSERT_NE(leaf, root_);
  expect_rejected([&](auto&, std::vector<float>& d) { d[leaf] += 4.0F; }, ValidationRule::kInputEdgeLevels);
}

TEST_F(DistributedSsspValidatorTest, TreeStopsShortOfTheComponent) {
  const std::uint64_t leaf = tree_leaf();
  ASSERT_NE(leaf, root_);
  expect_rejected(
      [&](std::vector<std::int64_t>& parent, std::vector<float>& d) {
        parent[leaf] = -1;
        d[leaf] = std::numeric_limits<float>::infinity();
      },
      ValidationRule::kSpansComponent);
}

TEST_F(DistributedSsspValidatorTest, ParentThatIsNoEdge) {
  const std::uint64_t v = deep_vertex();
  // A reached vertex that is no neighbour of v: the root's parent chain makes a tree still
  // (the root has no parent but itself), but no tuple joins v to it.
  std::vector<bool> neighbour(whole_.n, false);
  for (const Edge& e : whole_.edge_vector) {
    if (e.u == v) neighbour[e.v] = true;
    if (e.v == v) neighbour[e.u] = true;
  }
  std::uint64_t other = whole_.n;
  for (std::uint64_t u = 0; u < whole_.n && other == whole_.n; ++u) {
    if (u != v && !neighbour[u] && parent_[u] >= 0 && distance_[u] < distance_[v]) other = u;
  }
  ASSERT_LT(other, whole_.n);
  // Make sure the new link hangs below the root: `other` must not descend from v.
  expect_rejected([&](std::vector<std::int64_t>& parent, auto&) { parent[v] = static_cast<std::int64_t>(other); },
                  ValidationRule::kParentIsInputEdge);
}

}  // namespace
}  // namespace zbfs
