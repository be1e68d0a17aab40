// Distributed kernel 1 and kernel 2 against independent truth: BFS levels equal to a
// plain sequential BFS for every partitioning, grid shape, direction mode and column
// gather at this rank count, trees that pass both the single-process and the
// distributed validator, and degrees equal to the single-process graph's.
#include "zbfs/bfs/distributed_bfs.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <bit>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../unit/test_graphs.hpp"
#include "mpi_test_support.hpp"
#include "zbfs/codec/codec_cost.hpp"
#include "zbfs/graph/csr_builder.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/graph/peeled_forest.hpp"
#include "zbfs/validate/distributed_validator.hpp"
#include "zbfs/validate/reference_bfs.hpp"
#include "zbfs/validate/validator.hpp"
#include "zbfs/wire/decorators/switching_exchanger.hpp"
#include "zbfs/wire/direct/direct_exchanger.hpp"
#include "zbfs/wire/exchanger_factory.hpp"

namespace zbfs {
namespace {

using testing::Layout;

struct GraphCase {
  int scale;
  std::uint64_t edgefactor;
  std::uint64_t seed;
};

std::string describe(const Layout& layout, const GraphCase& g, Direction direction) {
  return std::string(to_string(layout.partition)) + " grid " + layout.shape.to_string() + " scale " +
         std::to_string(g.scale) + " edgefactor " + std::to_string(g.edgefactor) + " seed " + std::to_string(g.seed) +
         " direction " + std::string(to_string(direction));
}

// Search keys: ends of the first non-self-loop tuples, so small components appear too.
std::vector<std::uint64_t> some_roots(const std::vector<Edge>& edges, std::size_t count) {
  std::vector<std::uint64_t> roots;
  for (std::size_t i = 0; i < edges.size() && roots.size() < count; i += 97) {
    if (edges[i].u != edges[i].v) roots.push_back(edges[i].u);
  }
  return roots;
}

// Vertices that no tuple touches, not even a self-loop.
std::vector<std::uint64_t> edgeless_vertices(std::uint64_t n, const std::vector<Edge>& edges) {
  std::vector<bool> touched(n, false);
  for (const Edge& e : edges) touched[e.u] = touched[e.v] = true;
  std::vector<std::uint64_t> edgeless;
  for (std::uint64_t v = 0; v < n; ++v) {
    if (!touched[v]) edgeless.push_back(v);
  }
  return edgeless;
}

// Runs searches from a few keys and checks them; returns every search's whole parent
// array (for comparisons across configurations). With a route, the BFS and the
// distributed validator both go over it. With `edgeless_keys`, every other search starts
// from a vertex without edges (the bottom-up masks leave such vertices out).
// --overlap on: pipelined top-down folds with this batch size, their sends reordered by
// the test hook when the seed is not 0.
struct Pipelining {
  std::uint64_t batch_bytes = kDefaultBatchBytes;
  std::uint64_t shuffle_seed = 0;
};

template <class V>
std::vector<std::vector<std::int64_t>> check_searches(const Layout& layout, const GraphCase& g, Direction direction,
                                                      ColumnGather gather, std::size_t num_roots,
                                                      CodecChoice codec = CodecChoice{CodecId::kNone},
                                                      const RouteChoice* route = nullptr, bool edgeless_keys = false,
                                                      int prune_rounds = 0,
                                                      std::optional<Pipelining> pipelining = std::nullopt,
                                                      bool compressed = false, bool hypersparse = false) {
  SCOPED_TRACE(describe(layout, g, direction) + " gather " + std::string(to_string(gather)) + " codec " +
               std::string(codec.name()) + " route " + (route != nullptr ? route->describe() : std::string("none")) +
               " pruned in " + std::to_string(prune_rounds) + " rounds" + (hypersparse ? " hypersparse" : "") +
               (pipelining ? " pipelined in batches of " + std::to_string(pipelining->batch_bytes) + " B, shuffle " +
                                 std::to_string(pipelining->shuffle_seed)
                           : std::string()));
  PhaseMetrics metrics;
  const KroneckerGenerator generator(KroneckerParams{g.scale, g.edgefactor, g.seed});
  const ProcessGrid grid(layout.partition, layout.shape, generator.num_vertices(), &metrics);
  // Small rounds, so that construction takes several of them.
  const PackedEdgeList slice = testing::my_slice(generator, grid);
  using SparseRows = typename DistributedGraph<V>::SparseRows;
  const DistributedGraph<V> graph(grid, slice, compressed, 1000, std::nullopt, std::nullopt, {},
                                  hypersparse ? SparseRows::kAlways : SparseRows::kNever);
  EXPECT_EQ(graph.hypersparse(), hypersparse);
  static const auto costs = std::make_shared<const CodecCostModel>(CodecCostModel::calibrate());
  ExchangeSetup setup{gather, MessageCodec(codec, costs), route != nullptr ? std::optional(*route) : std::nullopt};
  if (pipelining) {
    setup.overlap = true;
    setup.batch_bytes = pipelining->batch_bytes;
    setup.overlap_shuffle_seed = pipelining->shuffle_seed;
  }
  const std::unique_ptr<Exchanger> exchanger_owned = make_exchanger(std::move(setup));
  Exchanger& exchanger = *exchanger_owned;
  EXPECT_EQ(exchanger.traits().pipelines_updates, pipelining.has_value());
  std::optional<DistributedForest<V>> forest;
  if (prune_rounds > 0) forest.emplace(grid, graph, exchanger, prune_rounds);
  DistributedBfs<V> bfs(grid, graph, exchanger, metrics, forest ? &*forest : nullptr);
  std::vector<std::vector<std::int64_t>> parents;

  const std::vector<Edge> edges = testing::kronecker_edges(g.scale, g.edgefactor, g.seed);
  const PackedEdgeList packed = testing::pack(g.scale, edges);
  std::vector<std::int64_t> owned(grid.blocks().block());
  BfsOptions options;
  options.direction = direction;
  std::vector<std::uint64_t> roots = some_roots(edges, num_roots);
  if (edgeless_keys) {
    const std::vector<std::uint64_t> edgeless = edgeless_vertices(generator.num_vertices(), edges);
    EXPECT_GE(edgeless.size(), roots.size());
    std::vector<std::uint64_t> mixed;
    for (std::size_t i = 0; i < roots.size() && i < edgeless.size(); ++i) {
      mixed.push_back(edgeless[edgeless.size() * i / roots.size()]);
      mixed.push_back(roots[i]);
    }
    roots = mixed;
  }
  if (prune_rounds > 0) {
    // Peeled keys too: leaves (one neighbour), whose chains lead to the core or end in a
    // tree component.
    std::vector<std::uint64_t> degree(generator.num_vertices(), 0);
    for (const Edge& e : edges) {
      if (e.u != e.v) ++degree[e.u], ++degree[e.v];
    }
    for (std::uint64_t v = 0, leaves = 0; v < degree.size() && leaves < num_roots; v += 7) {
      if (degree[v] == 1) roots.push_back(v), ++leaves;
    }
    // Leaves whose neighbour has one other: chains of two peeled vertices or more.
    std::size_t long_chains = 0;
    for (const Edge& e : edges) {
      for (const auto& [leaf, by] : {std::pair{e.u, e.v}, std::pair{e.v, e.u}}) {
        if (long_chains < num_roots && degree[leaf] == 1 && degree[by] == 2) roots.push_back(leaf), ++long_chains;
      }
    }
  }
  for (const std::uint64_t root : roots) {
    SCOPED_TRACE("root " + std::to_string(root));
    const BfsStats stats = bfs.run(root, owned, options);
    std::vector<std::int64_t> parent = testing::gather_parents(grid, owned);
    const std::vector<std::int64_t> want = reference_bfs_levels(generator.num_vertices(), edges, root);
    EXPECT_EQ(levels_from_parents(parent, root), want);
    EXPECT_EQ(stats.levels(), static_cast<std::uint64_t>(*std::max_element(want.begin(), want.end())) + 1);
    const ValidationReport sequential = validate_bfs_tree(packed, root, parent);
    EXPECT_TRUE(sequential.ok()) << (sequential.messages.empty() ? "" : sequential.messages.front());
    const ValidationReport distributed =
        validate_distributed_bfs_tree(grid, slice, exchanger, root, owned, metrics, 500);
    EXPECT_TRUE(distributed.ok()) << (distributed.messages.empty() ? "" : distributed.messages.front());
    EXPECT_EQ(distributed.traversed_edges, sequential.traversed_edges);
    EXPECT_EQ(distributed.reached_vertices, sequential.reached_vertices);
    // Into the search's own array, which keeps the last tree until it is cleared (here
    // every other time; a search that finds it there clears it first): the same tree.
    bfs.run(root, options);
    const std::span<const std::int64_t> own = bfs.parent();
    EXPECT_EQ(testing::gather_parents(grid, std::vector<std::int64_t>(own.begin(), own.end())), parent);
    if (root % 2 == 0) {
      bfs.clear_parent();
      EXPECT_TRUE(std::all_of(bfs.parent().begin(), bfs.parent().end(), [](std::int64_t p) { return p == -1; }));
    }
    parents.push_back(std::move(parent));
  }
  return parents;
}

int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

TEST(DistributedBfs, LevelsMatchSequentialBfsOnEveryLayout) {
  for (const Layout& layout : testing::all_layouts(world_size())) {
    check_searches<std::uint32_t>(layout, {9, 16, 1}, Direction::kAuto, ColumnGather::kAllgatherv, 3);
  }
}

// Compressed lists (--adjacency compressed) give the trees plain lists give, in every
// direction, pipelined or not.
TEST(DistributedBfs, CompressedListsGiveThePlainTrees) {
  for (const Layout& layout : testing::all_layouts(world_size())) {
    for (const Direction direction : {Direction::kAuto, Direction::kTopDown, Direction::kBottomUp}) {
      for (const bool pipelined : {false, true}) {
        const std::optional<Pipelining> pipelining = pipelined ? std::optional(Pipelining{}) : std::nullopt;
        const auto plain = check_searches<std::uint32_t>(layout, {9, 16, 1}, direction, ColumnGather::kAllgatherv, 3,
                                                         CodecChoice{CodecId::kNone}, nullptr, false, 0, pipelining);
        const auto compressed =
            check_searches<std::uint32_t>(layout, {9, 16, 1}, direction, ColumnGather::kAllgatherv, 3,
                                          CodecChoice{CodecId::kNone}, nullptr, false, 0, pipelining, true);
        EXPECT_EQ(compressed, plain) << describe(layout, {9, 16, 1}, direction);
      }
    }
  }
}

// Hypersparse rows (--hypersparse on: offsets, hubs and reported parents by position)
// give the trees every row's give, plain or compressed, pipelined or not, pruned.
TEST(DistributedBfs, HypersparseRowsGiveTheDenseTrees) {
  const GraphCase g{9, 16, 1};
  for (const Layout& layout : testing::all_layouts(world_size())) {
    for (const Direction direction : {Direction::kAuto, Direction::kTopDown, Direction::kBottomUp}) {
      for (const bool compressed : {false, true}) {
        const auto dense =
            check_searches<std::uint32_t>(layout, g, direction, ColumnGather::kAllgatherv, 3,
                                          CodecChoice{CodecId::kNone}, nullptr, false, 0, std::nullopt, compressed);
        const auto sparse = check_searches<std::uint32_t>(layout, g, direction, ColumnGather::kAllgatherv, 3,
                                                          CodecChoice{CodecId::kNone}, nullptr, false, 0, std::nullopt,
                                                          compressed, true);
        EXPECT_EQ(sparse, dense) << describe(layout, g, direction) << (compressed ? " compressed" : "");
      }
    }
    const auto pipelined = check_searches<std::uint32_t>(layout, g, Direction::kAuto, ColumnGather::kAllgatherv, 3,
                                                         CodecChoice{CodecId::kNone}, nullptr, true, 0,
                                                         std::optional(Pipelining{}), false, true);
    const auto pruned =
        check_searches<std::uint32_t>(layout, g, Direction::kAuto, ColumnGather::kAllgatherv, 3,
                                      CodecChoice{CodecId::kNone}, nullptr, false, 3, std::nullopt, false, true);
    EXPECT_FALSE(pipelined.empty() || pruned.empty());
  }
}

// In a top-down step a vertex found from several parents keeps the smallest, whichever
// thread or arrival found it first. At one rank every discovery is local, so the rule
// fixes the whole tree: on two threads, pipelined or not, it is the tree of smallest
// parents one level up (a claim-then-store once let the first thread win instead).
TEST(DistributedBfs, TopDownTreesKeepTheSmallestParent) {
  if (world_size() != 1) GTEST_SKIP() << "every discovery is local at one rank only";
  const int threads = omp_get_max_threads();
  omp_set_num_threads(2);
  const GraphCase g{9, 16, 1};
  const std::vector<Edge> edges = testing::kronecker_edges(g.scale, g.edgefactor, g.seed);
  const std::uint64_t n = std::uint64_t{1} << g.scale;
  const std::vector<std::uint64_t> roots = some_roots(edges, 3);
  for (const Layout& layout : testing::all_layouts(1)) {
    for (const bool pipelined : {false, true}) {
      const std::optional<Pipelining> pipelining = pipelined ? std::optional(Pipelining{}) : std::nullopt;
      const auto parents =
          check_searches<std::uint32_t>(layout, g, Direction::kTopDown, ColumnGather::kAllgatherv, roots.size(),
                                        CodecChoice{CodecId::kNone}, nullptr, false, 0, pipelining);
      ASSERT_EQ(parents.size(), roots.size());
      for (std::size_t i = 0; i < roots.size(); ++i) {
        const std::vector<std::int64_t> level = reference_bfs_levels(n, edges, roots[i]);
        std::vector<std::int64_t> smallest(n, -1);
        smallest[roots[i]] = static_cast<std::int64_t>(roots[i]);
        for (const Edge& e : edges) {
          for (const auto& [from, to] : {std::pair{e.u, e.v}, std::pair{e.v, e.u}}) {
            if (level[from] < 0 || level[to] != level[from] + 1) continue;
            auto& entry = smallest[to];
            if (entry < 0 || static_cast<std::int64_t>(from) < entry) entry = static_cast<std::int64_t>(from);
          }
        }
        EXPECT_EQ(parents[i], smallest) << describe(layout, g, Direction::kTopDown) << " root " << roots[i]
                                        << (pipelined ? " pipelined" : "");
      }
    }
  }
  omp_set_num_threads(threads);
}

// --codec auto's trial switches the exchanger between searches (a SwitchingExchanger):
// each search takes the path in use when it starts, the coded one (frames, bulk folds) or
// the plain one (no frames, pipelined folds), and finds the sequential levels either way.
TEST(DistributedBfs, EachSearchTakesThePathTheSwitchingExchangerIsOn) {
  static const auto costs = std::make_shared<const CodecCostModel>(CodecCostModel::calibrate());
  const Communicator world = Communicator::world();
  const GraphCase g{9, 16, 1};
  const std::vector<Edge> edges = testing::kronecker_edges(g.scale, g.edgefactor, g.seed);
  const std::vector<std::uint64_t> roots = some_roots(edges, 3);
  for (const Layout& layout : testing::all_layouts(world_size())) {
    SCOPED_TRACE(describe(layout, g, Direction::kAuto));
    PhaseMetrics metrics;
    const KroneckerGenerator generator(KroneckerParams{g.scale, g.edgefactor, g.seed});
    const ProcessGrid grid(layout.partition, layout.shape, generator.num_vertices(), &metrics);
    const DistributedGraph<std::uint32_t> graph(grid, testing::my_slice(generator, grid));
    SwitchingExchanger exchanger(
        make_exchanger({ColumnGather::kAllgatherv, MessageCodec(CodecChoice{CodecId::kBitpack}, costs), std::nullopt}),
        make_exchanger({ColumnGather::kAllgatherv, MessageCodec(), std::nullopt, std::uint64_t{1} << 48, nullptr,
                        Transport::kTwoSided, true}));
    DistributedBfs<std::uint32_t> bfs(grid, graph, exchanger, metrics);
    std::vector<std::int64_t> owned(grid.blocks().block());
    for (std::size_t i = 0; i < 2 * roots.size(); ++i) {
      const ExchangePath path = i % 2 == 0 ? ExchangePath::kCoded : ExchangePath::kPlain;
      exchanger.use(path);
      const std::uint64_t root = roots[i / 2];
      const PhaseMetrics before = metrics;
      bfs.run(root, owned, BfsOptions{});
      const PhaseMetrics during = metrics.since(before);
      EXPECT_EQ(levels_from_parents(testing::gather_parents(grid, owned), root),
                reference_bfs_levels(generator.num_vertices(), edges, root))
          << "root " << root << " on the " << to_string(path) << " path";
      std::uint64_t frames = 0;
      double held = 0;
      for (const PhaseCounters& c : during.all()) {
        for (const std::uint64_t f : c.frames) frames += f;
        held += c.stream_held_s;
      }
      frames = world.allreduce(frames, ReduceOp::kSum);
      held = world.allreduce(held, ReduceOp::kSum);
      if (world.size() == 1) continue;
      EXPECT_EQ(frames > 0, path == ExchangePath::kCoded) << "root " << root;
      if (path == ExchangePath::kCoded) {
        EXPECT_EQ(held, 0.0) << "root " << root;
      }
    }
  }
}

TEST(DistributedBfs, SparseGraphWithManyComponentsAndLevels) {
  for (const Layout& layout : testing::all_layouts(world_size())) {
    check_searches<std::uint32_t>(layout, {10, 2, 5}, Direction::kAuto, ColumnGather::kAllgatherv, 4);
  }
}

TEST(DistributedBfs, FixedDirections) {
  const int p = world_size();
  for (const Layout& layout : {Layout{Partition::k1D, {1, p}}, Layout{Partition::k2D, most_square_grid(p)}}) {
    for (const Direction direction : {Direction::kTopDown, Direction::kBottomUp}) {
      check_searches<std::uint32_t>(layout, {8, 8, 3}, direction, ColumnGather::kAllgatherv, 3);
    }
  }
}

// A search key without edges is visited by its owner alone; the searches after it must
// start from fresh masks.
TEST(DistributedBfs, SearchKeysWithoutEdgesInEveryDirection) {
  for (const Layout& layout : testing::all_layouts(world_size())) {
    for (const Direction direction : {Direction::kAuto, Direction::kTopDown, Direction::kBottomUp}) {
      check_searches<std::uint32_t>(layout, {9, 4, 7}, direction, ColumnGather::kAllgatherv, 2,
                                    CodecChoice{CodecId::kNone}, nullptr, true);
    }
  }
}

// Passes everything to a DirectExchanger and notes, for each bitmap gather, the
// communicator and the positions this rank's slice of the mask selects.
class GatherCounter final : public Exchanger {
 public:
  struct Gather {
    const Communicator* comm;
    std::uint64_t positions;
  };
  IncomingIds all_to_all(const Communicator& comm, const OutgoingIds& outgoing, IdsAre kind) override {
    return direct_.all_to_all(comm, outgoing, kind);
  }
  std::vector<std::uint64_t> gather_ids(const Communicator& comm, std::span<const std::uint64_t> mine) override {
    return direct_.gather_ids(comm, mine);
  }
  void gather_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine, std::span<std::uint64_t> all,
                     std::span<const std::uint64_t> mask) override {
    std::uint64_t positions = mine.size() * 64;
    if (!mask.empty()) {
      positions = 0;
      for (const std::uint64_t w : mask.subspan(static_cast<std::size_t>(comm.rank()) * mine.size(), mine.size())) {
        positions += static_cast<std::uint64_t>(std::popcount(w));
      }
    }
    gathers.push_back({&comm, positions});
    direct_.gather_bitmap(comm, mine, all, mask);
  }
  [[nodiscard]] ExchangeTraits traits() const override { return direct_.traits(); }
  void shift_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine,
                    std::span<std::uint64_t> received) override {
    shifts.push_back(&comm);
    direct_.shift_bitmap(comm, mine, received);
  }
  std::vector<KeyedItem> update(const Communicator& comm, std::span<const KeyedItem> items,
                                std::span<const std::uint64_t> counts) override {
    return direct_.update(comm, items, counts);
  }
  std::vector<std::uint64_t> read_batch(const Communicator& comm, std::span<const std::uint64_t> keys,
                                        std::span<const std::uint64_t> counts, std::size_t width,
                                        const ReadBatchAnswer& answer) override {
    return direct_.read_batch(comm, keys, counts, width, answer);
  }
  std::vector<Gather> gathers;
  std::vector<const Communicator*> shifts;

 private:
  DirectExchanger direct_{ColumnGather::kAllgatherv};
};

// Forced bottom-up, step t gathers the frontier of level t along the expand group. A
// rank's slice sends only its open positions: its vertices with edges that were in no
// earlier frontier, that is, those unreached or at level t or beyond. The fold group
// gathers nothing: its members pass the pieces they search around their ring, size - 1
// shifts per step.
TEST(DistributedBfs, BottomUpGathersSendOnlyOpenPositions) {
  const int p = world_size();
  const GraphCase g{11, 16, 1};
  const std::vector<Edge> edges = testing::kronecker_edges(g.scale, g.edgefactor, g.seed);
  for (const Layout& layout : testing::all_layouts(p)) {
    SCOPED_TRACE(describe(layout, g, Direction::kBottomUp));
    PhaseMetrics metrics;
    const KroneckerGenerator generator(KroneckerParams{g.scale, g.edgefactor, g.seed});
    const ProcessGrid grid(layout.partition, layout.shape, generator.num_vertices(), &metrics);
    const DistributedGraph<std::uint32_t> graph(grid, testing::my_slice(generator, grid));
    GatherCounter exchanger;
    DistributedBfs<std::uint32_t> bfs(grid, graph, exchanger, metrics);
    std::vector<std::int64_t> owned(grid.blocks().block());
    BfsOptions options;
    options.direction = Direction::kBottomUp;
    for (const std::uint64_t root : some_roots(edges, 2)) {
      SCOPED_TRACE("root " + std::to_string(root));
      exchanger.gathers.clear();
      exchanger.shifts.clear();
      const BfsStats stats = bfs.run(root, owned, options);
      const std::vector<std::int64_t> level = reference_bfs_levels(generator.num_vertices(), edges, root);
      const std::span<const std::uint64_t> degree = graph.owned_degree();
      std::vector<std::uint64_t> want;
      for (std::size_t t = 0; t < stats.steps.size(); ++t) {
        std::uint64_t open = 0;
        for (std::size_t i = 0; i < degree.size(); ++i) {
          const std::uint64_t v = grid.my_first_vertex() + i;
          const bool later = v >= generator.num_vertices() || level[v] < 0 || static_cast<std::size_t>(level[v]) >= t;
          open += degree[graph.order().sorted_offset(i)] > 0 && later ? 1 : 0;
        }
        want.push_back(open);
      }
      const TraversalLayout bottom_up = grid.bottom_up();
      std::vector<std::uint64_t> frontier_gathers;
      for (const auto& gather : exchanger.gathers) {
        EXPECT_EQ(gather.comm, bottom_up.expand);
        frontier_gathers.push_back(gather.positions);
      }
      // Communicators of one rank gather nothing.
      EXPECT_EQ(frontier_gathers, bottom_up.expand->size() > 1 ? want : std::vector<std::uint64_t>{});
      EXPECT_EQ(exchanger.shifts.size(), stats.steps.size() * static_cast<std::size_t>(bottom_up.fold->size() - 1));
      for (const Communicator* comm : exchanger.shifts) EXPECT_EQ(comm, bottom_up.fold);
    }
  }
}

TEST(DistributedBfs, SetUnionColumnGather) {
  const int p = world_size();
  for (const Layout& layout :
       {Layout{Partition::k1D, {1, p}}, Layout{Partition::k2D, most_square_grid(p)}, Layout{Partition::k2D, {p, 1}}}) {
    check_searches<std::uint32_t>(layout, {9, 16, 2}, Direction::kTopDown, ColumnGather::kUnion, 2);
  }
}

// Every codec carries the column, row, predecessor and validation traffic: results must
// not change, on both partitionings and both column gathers.
TEST(DistributedBfs, EveryCodecGivesTheSameLevels) {
  const int p = world_size();
  for (const std::string_view name :
       {"varint", "bitpack", "pfor", "streamvbyte", "roaring", "zstd", "bitmap", "rice", "auto"}) {
    const CodecChoice codec = *parse_codec_choice(name);
    check_searches<std::uint32_t>({Partition::k1D, {1, p}}, {9, 16, 1}, Direction::kAuto, ColumnGather::kAllgatherv, 2,
                                  codec);
    check_searches<std::uint32_t>({Partition::k2D, most_square_grid(p)}, {9, 16, 1}, Direction::kAuto,
                                  ColumnGather::kAllgatherv, 2, codec);
    check_searches<std::uint32_t>({Partition::k2D, most_square_grid(p)}, {9, 16, 2}, Direction::kTopDown,
                                  ColumnGather::kUnion, 1, codec);
  }
}

// Every route, with and without merging, on both partitionings: valid trees with the
// sequential BFS's levels, checked by a validator that reads over the same route. With
// merging each vertex gets the smallest parent offered, whatever the path, so every
// route gives the same trees.
TEST(DistributedBfs, EveryRouteGivesValidTreesAndMergedRoutesAgree) {
  const int p = world_size();
  for (const Partition partition : {Partition::k1D, Partition::k2D}) {
    const Layout layout{partition, partition == Partition::k1D ? GridShape{1, p} : most_square_grid(p)};
    std::vector<std::vector<std::int64_t>> merged;
    for (const RouteChoice& route : testing::every_route()) {
      const auto parents = check_searches<std::uint32_t>(
          layout, {9, 16, 1}, Direction::kAuto, ColumnGather::kAllgatherv, 3, CodecChoice{CodecId::kNone}, &route);
      if (!route.dedup) continue;
      if (merged.empty()) {
        merged = parents;
      } else {
        EXPECT_EQ(parents, merged) << route.describe();
      }
    }
    // Top-down only: every level folds over the route.
    RouteChoice grid2;
    grid2.kind = RouteKind::kGrid2;
    check_searches<std::uint32_t>(layout, {10, 2, 5}, Direction::kTopDown, ColumnGather::kAllgatherv, 3,
                                  CodecChoice{CodecId::kNone}, &grid2);
  }
}

// Routed hops carry codec frames: the results do not change.
TEST(DistributedBfs, RoutedHopsEncodedByEveryCodec) {
  const int p = world_size();
  RouteChoice route;
  route.kind = RouteKind::kHypercube;
  for (const std::string_view name : {"varint", "bitpack", "rice", "zstd", "auto"}) {
    const CodecChoice codec = *parse_codec_choice(name);
    check_searches<std::uint32_t>({Partition::k1D, {1, p}}, {9, 16, 1}, Direction::kTopDown, ColumnGather::kAllgatherv,
                                  2, codec, &route);
    check_searches<std::uint32_t>({Partition::k2D, most_square_grid(p)}, {9, 16, 1}, Direction::kAuto,
                                  ColumnGather::kAllgatherv, 1, codec, &route);
  }
}

// Forest pruning on every layout and in every direction, with peeled keys and keys in
// tree components, with as many peeling rounds as it takes and with one only.
TEST(DistributedBfs, PrunedSearchesGiveTheSequentialLevels) {
  for (const Layout& layout : testing::all_layouts(world_size())) {
    for (const Direction direction : {Direction::kAuto, Direction::kTopDown, Direction::kBottomUp}) {
      check_searches<std::uint32_t>(layout, {9, 16, 1}, direction, ColumnGather::kAllgatherv, 3,
                                    CodecChoice{CodecId::kNone}, nullptr, false,
                                    DistributedForest<std::uint32_t>::kMaxRounds);
    }
    check_searches<std::uint32_t>(layout, {10, 2, 5}, Direction::kAuto, ColumnGather::kAllgatherv, 4,
                                  CodecChoice{CodecId::kNone}, nullptr, true,
                                  DistributedForest<std::uint32_t>::kMaxRounds);
    check_searches<std::uint32_t>(layout, {10, 2, 5}, Direction::kAuto, ColumnGather::kAllgatherv, 3,
                                  CodecChoice{CodecId::kNone}, nullptr, false, 1);
  }
  const int p = world_size();
  RouteChoice route;
  route.kind = RouteKind::kHypercube;
  check_searches<std::uint32_t>({Partition::k1D, {1, p}}, {9, 4, 3}, Direction::kAuto, ColumnGather::kAllgatherv, 3,
                                *parse_codec_choice("bitpack"), &route, false, 8);
  check_searches<std::uint64_t>({Partition::k2D, most_square_grid(p)}, {9, 4, 3}, Direction::kAuto,
                                ColumnGather::kUnion, 3, *parse_codec_choice("auto"), nullptr, false, 8);
}

// Hand-drawn trees (as in the single-process kernel's test): a core with trees of depth
// 1 to 3, a tree component, an isolated edge, a path longer than twice the rounds, and a
// triangle whose tallest tree holds the root's chain, which the depth must not count:
// two core components, searched in turns.
TEST(DistributedBfs, PrunedSearchesOnHandDrawnTrees) {
  std::vector<Edge> edges{{0, 1},   {1, 2},   {2, 3},   {3, 4},   {4, 0},   {0, 10},  {10, 11}, {11, 12}, {11, 13},
                          {2, 14},  {2, 15},  {15, 16}, {3, 17},  {20, 21}, {20, 22}, {20, 23}, {23, 24}, {24, 25},
                          {30, 31}, {50, 51}, {51, 52}, {52, 50}, {50, 53}, {53, 54}, {54, 55}, {55, 56}, {51, 57}};
  for (std::uint64_t v = 100; v + 1 < 400; ++v) edges.push_back({v, v + 1});
  const PackedEdgeList packed = testing::pack(9, edges);
  for (const Layout& layout : testing::all_layouts(world_size())) {
    for (const int rounds : {64, 2}) {
      SCOPED_TRACE(std::string(to_string(layout.partition)) + " grid " + layout.shape.to_string() + " rounds " +
                   std::to_string(rounds));
      PhaseMetrics metrics;
      const ProcessGrid grid(layout.partition, layout.shape, 512, &metrics);
      const EdgeSliceRange range = edge_slice_of(edges.size(), grid.rank(), grid.size());
      const PackedEdgeList slice =
          testing::pack(9, std::vector<Edge>(edges.begin() + static_cast<std::ptrdiff_t>(range.first),
                                             edges.begin() + static_cast<std::ptrdiff_t>(range.first + range.count)));
      const DistributedGraph<std::uint32_t> graph(grid, slice);
      DirectExchanger exchanger(ColumnGather::kAllgatherv);
      const DistributedForest<std::uint32_t> forest(grid, graph, exchanger, rounds);
      DistributedBfs<std::uint32_t> bfs(grid, graph, exchanger, metrics, &forest);
      std::vector<std::int64_t> owned(grid.blocks().block());
      // Keys in one core component after another reuse the anchors it reached (54 after
      // 56, 12 after 0), and a key in another component gathers them anew (0, 53).
      for (const std::uint64_t root : {56, 54, 0, 12, 53, 57, 16, 17, 25, 31, 30, 100, 250, 399, 40}) {
        SCOPED_TRACE("root " + std::to_string(root));
        const BfsStats stats = bfs.run(root, owned, BfsOptions{});
        const std::vector<std::int64_t> parent = testing::gather_parents(grid, owned);
        const std::vector<std::int64_t> want = reference_bfs_levels(512, edges, root);
        EXPECT_EQ(levels_from_parents(parent, root), want);
        EXPECT_EQ(stats.levels(), static_cast<std::uint64_t>(*std::max_element(want.begin(), want.end())) + 1);
        const ValidationReport report = validate_bfs_tree(packed, root, parent);
        EXPECT_TRUE(report.ok()) << (report.messages.empty() ? "" : report.messages.front());
      }
    }
  }
}

// The owners peel exactly the vertices the single-process forest peels, in as many rounds.
TEST(DistributedForest, PeelsWhatTheSingleProcessForestPeels) {
  const GraphCase g{10, 4, 9};
  const KroneckerGenerator generator(KroneckerParams{g.scale, g.edgefactor, g.seed});
  const Csr<std::uint32_t> csr = build_csr<std::uint32_t>(generate_edge_list(generator), CsrOrder::kDegree);
  for (const int rounds : {64, 2}) {
    const PeeledForest<std::uint32_t> whole(csr.offsets(), csr.neighbor_data(), csr.num_vertices(), rounds);
    for (const Layout& layout : testing::all_layouts(world_size())) {
      SCOPED_TRACE(describe(layout, g, Direction::kAuto) + " rounds " + std::to_string(rounds));
      PhaseMetrics metrics;
      const ProcessGrid grid(layout.partition, layout.shape, generator.num_vertices(), &metrics);
      const DistributedGraph<std::uint32_t> graph(grid, testing::my_slice(generator, grid));
      DirectExchanger exchanger(ColumnGather::kAllgatherv);
      const DistributedForest<std::uint32_t> forest(grid, graph, exchanger, rounds);
      EXPECT_EQ(forest.num_rounds(), static_cast<int>(whole.num_rounds()));
      EXPECT_EQ(forest.num_peeled(), whole.num_peeled());
      EXPECT_EQ(forest.core_vertices(), whole.core_vertices());
      EXPECT_EQ(forest.core_directed_edges(), whole.core_directed_edges());
      for (std::uint64_t o = 0; o < grid.blocks().block(); ++o) {
        const std::uint64_t v = grid.my_first_vertex() + graph.order().original_offset(o);
        if (v >= generator.num_vertices()) continue;
        ASSERT_EQ(forest.peeled(o), whole.peeled(csr.internal_id(v))) << "vertex " << v;
      }
    }
  }
}

// --overlap on: top-down folds pipelined in batches, on every layout, in batches of one
// update up to the default, with and without codecs, with sends held back and reordered
// by the test hook: the same levels as the sequential BFS, valid trees.
TEST(DistributedBfs, PipelinedFoldsGiveTheSameLevels) {
  for (const Layout& layout : testing::all_layouts(world_size())) {
    for (const std::uint64_t batch : {std::uint64_t{8}, std::uint64_t{200}, kDefaultBatchBytes}) {
      check_searches<std::uint32_t>(layout, {9, 16, 1}, Direction::kAuto, ColumnGather::kAllgatherv, 2,
                                    CodecChoice{CodecId::kNone}, nullptr, false, 0, Pipelining{batch, 0});
    }
    for (const std::uint64_t seed : {1, 2}) {
      check_searches<std::uint32_t>(layout, {10, 2, 5}, Direction::kTopDown, ColumnGather::kAllgatherv, 2,
                                    CodecChoice{CodecId::kNone}, nullptr, false, 0, Pipelining{64, seed});
    }
  }
  const int p = world_size();
  for (const std::string_view name : {"bitpack", "zstd", "auto"}) {
    check_searches<std::uint32_t>({Partition::k1D, {1, p}}, {9, 16, 3}, Direction::kTopDown, ColumnGather::kAllgatherv,
                                  2, *parse_codec_choice(name), nullptr, false, 0, Pipelining{256, 3});
    check_searches<std::uint32_t>({Partition::k2D, most_square_grid(p)}, {9, 16, 3}, Direction::kAuto,
                                  ColumnGather::kUnion, 1, *parse_codec_choice(name), nullptr, false, 0,
                                  Pipelining{512, 0});
  }
  // Pruned searches, edgeless keys and 64-bit local ids through the pipelined folds.
  check_searches<std::uint32_t>({Partition::k1D, {1, p}}, {10, 2, 5}, Direction::kAuto, ColumnGather::kAllgatherv, 3,
                                CodecChoice{CodecId::kNone}, nullptr, true,
                                DistributedForest<std::uint32_t>::kMaxRounds, Pipelining{128, 4});
  check_searches<std::uint64_t>({Partition::k2D, most_square_grid(p)}, {8, 16, 4}, Direction::kAuto,
                                ColumnGather::kAllgatherv, 2, CodecChoice{CodecId::kNone}, nullptr, false, 0,
                                Pipelining{kDefaultBatchBytes, 5});
}

// With one thread per rank a pipelined search's tree does not depend on when batches
// arrive: a vertex found from several parents in one level keeps the smallest.
TEST(DistributedBfs, PipelinedTreesDoNotDependOnArrivalOrder) {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  for (const Layout& layout :
       {Layout{Partition::k1D, {1, world_size()}}, Layout{Partition::k2D, most_square_grid(world_size())}}) {
    std::vector<std::vector<std::vector<std::int64_t>>> trees;
    for (const std::uint64_t seed : {0, 1, 2}) {
      trees.push_back(check_searches<std::uint32_t>(layout, {10, 8, 6}, Direction::kTopDown, ColumnGather::kAllgatherv,
                                                    3, CodecChoice{CodecId::kNone}, nullptr, false, 0,
                                                    Pipelining{64, seed}));
    }
    EXPECT_EQ(trees[1], trees[0]);
    EXPECT_EQ(trees[2], trees[0]);
    // Along every merging route too: a rank sends each vertex once, with the first
    // parent it found, and the owner keeps the smallest offered, whatever the path.
    for (const RouteChoice& route : testing::every_route()) {
      if (!route.dedup) continue;
      const auto routed =
          check_searches<std::uint32_t>(layout, {10, 8, 6}, Direction::kTopDown, ColumnGather::kAllgatherv, 3,
                                        CodecChoice{CodecId::kNone}, &route, false, 0, Pipelining{64, 7});
      EXPECT_EQ(routed, trees[0]) << route.describe();
    }
  }
  omp_set_num_threads(threads);
}

// Pipelined folds along every route, merging or not, in both partitionings: the
// sequential BFS's levels and valid trees, in batches of every size and in shuffled
// orders, with and without a codec on the hops.
TEST(DistributedBfs, PipelinedRoutesGiveTheSameLevels) {
  const int p = world_size();
  for (const Partition partition : {Partition::k1D, Partition::k2D}) {
    const Layout layout{partition, partition == Partition::k1D ? GridShape{1, p} : most_square_grid(p)};
    for (const RouteChoice& route : testing::every_route()) {
      check_searches<std::uint32_t>(layout, {9, 16, 1}, Direction::kAuto, ColumnGather::kAllgatherv, 2,
                                    CodecChoice{CodecId::kNone}, &route, false, 0, Pipelining{kDefaultBatchBytes, 0});
      check_searches<std::uint32_t>(layout, {10, 2, 5}, Direction::kTopDown, ColumnGather::kAllgatherv, 2,
                                    CodecChoice{CodecId::kNone}, &route, false, 0, Pipelining{16, 3});
    }
    RouteChoice grid2;
    grid2.kind = RouteKind::kGrid2;
    for (const std::string_view name : {"bitpack", "auto"}) {
      check_searches<std::uint32_t>(layout, {9, 16, 3}, Direction::kTopDown, ColumnGather::kAllgatherv, 2,
                                    *parse_codec_choice(name), &grid2, false, 0, Pipelining{256, 2});
    }
  }
}

TEST(DistributedBfs, SixtyFourBitLocalIds) {
  check_searches<std::uint64_t>({Partition::k2D, most_square_grid(world_size())}, {8, 16, 4}, Direction::kAuto,
                                ColumnGather::kAllgatherv, 2);
}

TEST(DistributedGraph, OwnersHoldTheSingleProcessDegrees) {
  const GraphCase g{9, 16, 7};
  const KroneckerGenerator generator(KroneckerParams{g.scale, g.edgefactor, g.seed});
  const Csr<std::uint32_t> csr = build_csr<std::uint32_t>(generate_edge_list(generator));
  for (const Layout& layout : testing::all_layouts(world_size())) {
    SCOPED_TRACE(describe(layout, g, Direction::kAuto));
    PhaseMetrics metrics;
    const ProcessGrid grid(layout.partition, layout.shape, generator.num_vertices(), &metrics);
    const DistributedGraph<std::uint32_t> graph(grid, testing::my_slice(generator, grid), false, 4096);
    EXPECT_EQ(graph.global_directed_edges(), csr.num_directed_edges());
    const std::uint64_t first = grid.my_first_vertex();
    for (std::uint64_t o = 0; o < grid.blocks().block(); ++o) {
      const std::uint64_t v = first + o;
      const std::uint64_t degree = v < csr.num_vertices() ? csr.degree(v) : 0;
      const std::uint64_t tuples = v < csr.num_vertices() ? csr.input_tuple_degree(v) : 0;
      // The graph holds its degrees in its degree order.
      // Distinct degrees in the degree order, tuple degrees in the original order.
      const std::uint64_t sorted = graph.order().sorted_offset(o);
      ASSERT_EQ(graph.owned_degree()[sorted], degree) << "vertex " << v;
      ASSERT_EQ(graph.owned_tuple_degree()[o], tuples) << "vertex " << v;
      ASSERT_EQ(graph.order().original_offset(sorted), o);
      if (sorted > 0) {
        const std::uint64_t before = graph.order().original_offset(sorted - 1);
        ASSERT_GE(graph.owned_tuple_degree()[before], tuples) << "vertex " << v;
      }
    }
    // Construction traffic was counted.
    if (grid.size() > 1) {
      EXPECT_GT(grid.world().allreduce(metrics[Phase::kOther].raw_bytes, ReduceOp::kSum), 0U);
    }
  }
}

}  // namespace
}  // namespace zbfs

namespace zbfs {
namespace {

TEST(DistributedBfs, RefusesABadKeyOrParentArrayOnEveryRank) {
  PhaseMetrics metrics;
  const KroneckerGenerator generator(KroneckerParams{8, 4, 1});
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const ProcessGrid grid(Partition::k1D, {1, ranks}, generator.num_vertices(), &metrics);
  const DistributedGraph<std::uint32_t> graph(grid, testing::my_slice(generator, grid));
  DirectExchanger exchanger(ColumnGather::kAllgatherv);
  DistributedBfs<std::uint32_t> bfs(grid, graph, exchanger, metrics);
  std::vector<std::int64_t> parent(grid.blocks().block());
  EXPECT_THROW(bfs.run(256, parent, BfsOptions{}), Error);
  std::vector<std::int64_t> short_parent(grid.blocks().block() - 1);
  EXPECT_THROW(bfs.run(0, short_parent, BfsOptions{}), Error);
}

}  // namespace
}  // namespace zbfs
