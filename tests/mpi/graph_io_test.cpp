// Graph files over MPI: generate -> write -> read gives the identical distributed graph
// in every format and partitioning; --relabel keeps the ids' order and maps back; a bad
// line in any rank's share is reported with its file line on every rank; and the levels
// and parents zbfs writes for a file match a plain sequential BFS of that file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "mpi_test_support.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/driver/distributed_runner.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/input/graph_reader.hpp"
#include "zbfs/output/graph_writer.hpp"
#include "zbfs/validate/reference_bfs.hpp"

namespace zbfs {
namespace {

// A path every rank agrees on, distinct per job (ctest runs rank counts side by side).
std::string shared_path(const Communicator& world, const std::string& name) {
  std::uint64_t id = static_cast<std::uint64_t>(::getpid());
  world.broadcast(std::span<std::uint64_t>(&id, 1), 0);
  return (std::filesystem::temp_directory_path() /
          ("zbfs_io_" + std::to_string(id) + "_" + std::to_string(world.size()) + "_" + name))
      .string();
}

std::vector<Edge> unpacked(const PackedEdgeList& list) {
  std::vector<Edge> edges(list.size());
  for (std::uint64_t i = 0; i < list.size(); ++i) edges[i] = list.get(i);
  return edges;
}

template <class V>
void expect_same_csr(const LocalCsr<V>& a, const LocalCsr<V>& b) {
  ASSERT_EQ(a.num_rows(), b.num_rows());
  ASSERT_EQ(a.num_entries(), b.num_entries());
  EXPECT_TRUE(std::equal(a.offsets(), a.offsets() + a.num_rows() + 1, b.offsets()));
  EXPECT_TRUE(std::equal(a.neighbor_data(), a.neighbor_data() + a.num_entries(), b.neighbor_data()));
}

TEST(GraphFiles, WriteThenReadBuildsTheIdenticalGraphInEveryFormat) {
  const Communicator world = Communicator::duplicate(MPI_COMM_WORLD);
  GraphSpec spec;
  spec.scale = 9;
  spec.edgefactor = 8;
  const PackedEdgeList generated = generate_graph_slice(spec, world.rank(), world.size());
  const std::vector<Edge> edges = unpacked(generated);
  const GraphFileShape shape{graph_vertices(spec), expected_graph_edges(spec), 0};
  for (const GraphFormat format : {GraphFormat::kBinary, GraphFormat::kEdgeList, GraphFormat::kMatrixMarket}) {
    const std::string path = shared_path(world, std::string("roundtrip.") + to_string(format));
    write_graph_file(world, path, format, edges, shape);
    EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
    for (const bool detect : {false, true}) {
      GraphFileSpec file{path, detect ? std::nullopt : std::optional<GraphFormat>(format), false, {}};
      const LoadedGraph read = read_graph_file(world, file);
      EXPECT_EQ(read.num_input_edges, shape.num_edges) << to_string(format);
      // Edge lists carry no vertex count: the largest id decides (Kronecker's is n - 1 here).
      EXPECT_EQ(read.num_vertices, shape.num_vertices) << to_string(format);
      for (const testing::Layout& layout : testing::all_layouts(world.size())) {
        const ProcessGrid grid(layout.partition, layout.shape, shape.num_vertices, nullptr);
        const DistributedGraph<std::uint32_t> from_generator(grid, generated);
        const DistributedGraph<std::uint32_t> from_file(grid, read.slice);
        expect_same_csr(from_file.forward(), from_generator.forward());
        EXPECT_TRUE(std::equal(from_file.owned_tuple_degree().begin(), from_file.owned_tuple_degree().end(),
                               from_generator.owned_tuple_degree().begin()));
      }
    }
    world.barrier();
    if (world.rank() == 0) std::filesystem::remove(path);
  }
}

TEST(GraphFiles, RelabelKeepsTheOrderOfSparseIdsAndMapsBack) {
  const Communicator world = Communicator::duplicate(MPI_COMM_WORLD);
  // A path 0 - 1 - ... - 29 in sparse ids, increasing with k.
  const auto id = [](std::uint64_t k) { return (k + 1) * 1000003ULL + (k % 3); };
  std::vector<Edge> mine;
  for (std::uint64_t k = static_cast<std::uint64_t>(world.rank()); k + 1 < 30;
       k += static_cast<std::uint64_t>(world.size()))
    mine.push_back({id(k + 1), id(k)});
  const std::string path = shared_path(world, "sparse.txt");
  const std::uint64_t m = world.allreduce(std::uint64_t{mine.size()}, ReduceOp::kSum);
  write_graph_file(world, path, GraphFormat::kEdgeList, mine, GraphFileShape{id(29) + 1, m, 0});
  const LoadedGraph read = read_graph_file(world, GraphFileSpec{path, GraphFormat::kEdgeList, true, {}});
  EXPECT_EQ(read.num_vertices, 30U);
  EXPECT_TRUE(read.ids.relabelled());
  // Internal ids follow the file's order: internal k is id(k).
  std::vector<std::uint64_t> all(30);
  for (std::uint64_t k = 0; k < 30; ++k) all[k] = k;
  const std::vector<std::uint64_t> source = read.ids.to_source(world, all);
  for (std::uint64_t k = 0; k < 30; ++k) EXPECT_EQ(source[k], id(k));
  // Every edge (id(k + 1), id(k)) became (k + 1, k), whichever rank read it.
  const std::vector<Edge> internal = unpacked(read.slice);
  EXPECT_EQ(world.allreduce(std::uint64_t{internal.size()}, ReduceOp::kSum), 29U);
  for (const Edge& e : internal) EXPECT_EQ(e.u, e.v + 1);
  const std::vector<std::uint64_t> asked{id(7), 12345, id(0)};
  const auto back = read.ids.to_internal(world, asked, read.num_vertices);
  EXPECT_EQ(back[0], std::optional<std::uint64_t>(7));
  EXPECT_FALSE(back[1]);
  EXPECT_EQ(back[2], std::optional<std::uint64_t>(0));
  world.barrier();
  if (world.rank() == 0) std::filesystem::remove(path);
}

TEST(GraphFiles, AMalformedLineInAnyRanksShareIsReportedWithItsLineEverywhere) {
  const Communicator world = Communicator::duplicate(MPI_COMM_WORLD);
  const std::string path = shared_path(world, "bad.mtx");
  // 400 good entries, then a bad one near the end: it falls in the last rank's share.
  if (world.rank() == 0) {
    std::ofstream out(path);
    out << "%%MatrixMarket matrix coordinate integer symmetric\n% comment\n100 100 402\n";
    for (int i = 0; i < 400; ++i) out << (i % 100) + 1 << ' ' << ((i * 7) % 100) + 1 << " 3\n";
    out << "5 101 3\n1 2 3\n";  // line 404: id out of range
  }
  world.barrier();
  try {
    (void)read_graph_file(world, GraphFileSpec{path, std::nullopt, false, {}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_EQ(e.scope(), ErrorScope::kAllRanks);
    EXPECT_EQ(std::string(e.what()), path + ":404: id 101 is out of range for the declared size (1..100)");
  }
  world.barrier();
  if (world.rank() == 0) std::filesystem::remove(path);
}

// "vertex value" lines of a --write-levels/--write-parents text file, by vertex.
std::map<std::uint64_t, std::int64_t> read_values(const std::string& path) {
  std::ifstream in(path);
  std::map<std::uint64_t, std::int64_t> values;
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("#")) continue;
    std::istringstream fields(line);
    std::uint64_t v = 0;
    std::int64_t value = 0;
    fields >> v >> value;
    values[v] = value;
  }
  return values;
}

// "vertex value" lines of a --write-distances text file, by vertex.
std::map<std::uint64_t, double> read_distances(const std::string& path) {
  std::ifstream in(path);
  std::map<std::uint64_t, double> values;
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("#")) continue;
    std::istringstream fields(line);
    std::uint64_t v = 0;
    double value = 0;
    fields >> v >> value;
    values[v] = value;
  }
  return values;
}

// A Matrix Market file (1-based ids), and the binary file converted from it (which keeps
// the base), read as they are and with --relabel: --root and every written file use the
// file's own ids on every partition (with --relabel, those of the vertices that occur).
TEST(GraphFiles, WrittenLevelsParentsAndDistancesMatchASequentialBfsOfTheFile) {
  const Communicator world = Communicator::duplicate(MPI_COMM_WORLD);
  GraphSpec spec;
  spec.kind = GraphKind::kGnm;
  spec.vertices = 700;
  spec.edges = 900;  // sparse enough for several components and long paths
  const PackedEdgeList slice = generate_graph_slice(spec, world.rank(), world.size());
  const std::vector<Edge> mine = unpacked(slice);
  const std::string mtx_path = shared_path(world, "gnm.mtx");  // 1-based ids in the results
  const std::string zel_path = shared_path(world, "gnm.zel");
  write_graph_file(world, mtx_path, GraphFormat::kMatrixMarket, mine, GraphFileShape{700, 900, 1});
  write_graph_file(world, zel_path, GraphFormat::kBinary, mine, GraphFileShape{700, 900, 1});
  std::vector<std::uint64_t> counts;
  std::vector<std::uint64_t> flat;
  for (const Edge& e : mine) flat.insert(flat.end(), {e.u, e.v});
  const std::vector<std::uint64_t> all_flat = world.allgatherv(std::span<const std::uint64_t>(flat), counts);
  std::vector<Edge> all;
  std::vector<bool> occurs(700, false);
  for (std::size_t i = 0; i < all_flat.size(); i += 2) {
    all.push_back({all_flat[i], all_flat[i + 1]});
    occurs[all_flat[i]] = occurs[all_flat[i + 1]] = true;
  }
  const auto occurring = static_cast<std::size_t>(std::count(occurs.begin(), occurs.end(), true));
  ASSERT_LT(occurring, 700U);  // the relabelled graph is smaller: ids must still match

  const std::string levels_path = shared_path(world, "levels.txt");
  const std::string parents_path = shared_path(world, "parents.txt");
  const std::string distances_path = shared_path(world, "distances.txt");
  std::optional<std::map<std::uint64_t, double>> first_distances;
  for (const std::string& graph_path : {mtx_path, zel_path}) {
    for (const bool relabel : {false, true}) {
      const std::vector<testing::Layout> layouts = testing::all_layouts(world.size());
      for (const testing::Layout& layout : layouts) {
        // SSSP (many small rounds: slow on oversubscribed ranks) on the first layout only.
        const bool sssp = &layout == &layouts.front();
        SCOPED_TRACE(graph_path + (relabel ? ", relabelled, " : ", ") + std::string(to_string(layout.partition)) + " " +
                     layout.shape.to_string());
        RunConfig config;
        config.quiet = true;
        config.partition = layout.partition;
        config.grid = layout.partition == Partition::k2D ? std::optional<GridShape>(layout.shape) : std::nullopt;
        config.input = GraphFileSpec{graph_path, std::nullopt, relabel, {}};
        config.kernels = {true, sssp};
        if (sssp) config.weights = TupleWeightSource::kUniform;
        const std::uint64_t root = all.front().u;
        config.roots = {root + 1, all.back().v + 1};
        config.num_roots = 2;
        config.write_levels = levels_path;
        config.write_parents = parents_path;
        if (sssp) config.write_distances = distances_path;
        const RunResult result = run_distributed_benchmark(config);
        EXPECT_EQ(result.num_vertices, relabel ? occurring : 700U);
        EXPECT_EQ(result.searches.size(), 2U);
        EXPECT_TRUE(result.searches[0].validated);
        const std::vector<std::int64_t> truth = reference_bfs_levels(700, all, root);
        const auto levels = read_values(config.write_levels);
        const auto parents = read_values(config.write_parents);
        const auto distances = sssp ? read_distances(config.write_distances) : std::map<std::uint64_t, double>();
        ASSERT_EQ(levels.size(), result.num_vertices);
        ASSERT_EQ(parents.size(), result.num_vertices);
        if (sssp) {
          ASSERT_EQ(distances.size(), result.num_vertices);
        }
        std::vector<std::int64_t> parent_internal(700, -1);
        for (std::uint64_t v = 0; v < 700; ++v) {
          if (!levels.contains(v + 1)) {
            EXPECT_TRUE(relabel && !occurs[v]) << "vertex " << v + 1 << " missing";
            continue;
          }
          EXPECT_EQ(levels.at(v + 1), truth[v]) << "vertex " << v + 1;
          if (sssp) {
            EXPECT_EQ(distances.at(v + 1) < 0, truth[v] < 0) << "vertex " << v + 1;
          }
          parent_internal[v] = parents.at(v + 1) < 0 ? -1 : parents.at(v + 1) - 1;
        }
        EXPECT_EQ(levels_from_parents(parent_internal, root), truth);
        // The same tuples with the same drawn weights: the same distances, by file id.
        if (sssp && !first_distances) first_distances = distances;
        for (const auto& [v, d] : distances) EXPECT_EQ(first_distances->at(v), d) << "vertex " << v;
        world.barrier();
      }
    }
  }
  if (world.rank() == 0) {
    for (const std::string& path : {mtx_path, zel_path, levels_path, parents_path, distances_path})
      std::filesystem::remove(path);
  }
}

}  // namespace
}  // namespace zbfs
