// zbfs_route_patterns: the access patterns of the aggregation literature on a
// DistributedArray, printing one JSON line per pattern, route and dedup setting on rank 0.
// The graph is built once per launch; --pattern and --route take a comma-separated list
// or `all`, --dedup on|off|both (--no-dedup: off).
//
//   mpirun -np 16 zbfs_route_patterns --graph kronecker --scale 16 --pattern neighbours --route grid2
//   mpirun -np 16 zbfs_route_patterns --graph gnm --pattern all --route all --dedup both
//
// Graphs (1D blocks of vertices, built with kernel 1's code):
//   kronecker  Graph500's generator (hubs: many ranks read the same elements)
//   gnm        n vertices, m = edgefactor * n uniformly random edges
//   geometric  a random geometric graph in the unit square: cells of side r in row-major
//              order, each holding the same number of points (ids in cell order), edges
//              between points closer than r; a rank's block is a band of cells, so most
//              neighbours are its own or its neighbour's
// Patterns (one batched step of reads, executed together):
//   neighbours  every vertex reads each neighbour's value
//   doubling    one step of pointer doubling: p[v] = smallest of v and its neighbours,
//               every v reads p[p[v]]
//   overload    every rank reads every element of rank 0
// Per run: the slowest rank's time (median of the repeats), start-ups per rank (max,
// mean), bytes sent over all hops, items merged away, and bytes per hop.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/core/packed_edge_list.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/generator/counter_rng.hpp"
#include "zbfs/generator/kronecker.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/mpi/environment.hpp"
#include "zbfs/topology/process_grid.hpp"
#include "zbfs/wire/routed/distributed_array.hpp"
#include "zbfs/wire/routed/route_choice.hpp"

namespace zbfs {
namespace {

constexpr const char* kPatterns[] = {"neighbours", "doubling", "overload"};

struct Options {
  std::string graph = "kronecker";
  std::vector<std::string> patterns{"neighbours"};
  int scale = 14;
  std::uint64_t edgefactor = 16;
  std::uint64_t seed = 1;
  std::vector<RouteKind> routes{RouteKind::kDirect};
  std::vector<bool> dedups{true};
  int repeats = 3;
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t end = text.find(',');; end = text.find(',', start)) {
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

[[noreturn]] void usage(const std::string& message) { throw Error(ExitCode::kUsage, message); }

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--no-dedup") {
      o.dedups = {false};
      continue;
    }
    if (i + 1 >= argc) usage(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--graph") {
      o.graph = value;
    } else if (flag == "--pattern") {
      o.patterns =
          value == "all" ? std::vector<std::string>(std::begin(kPatterns), std::end(kPatterns)) : split_commas(value);
      for (const std::string& pattern : o.patterns) {
        if (std::find(std::begin(kPatterns), std::end(kPatterns), pattern) == std::end(kPatterns)) {
          usage("unknown pattern '" + pattern + "'");
        }
      }
    } else if (flag == "--scale") {
      o.scale = std::atoi(value.c_str());
    } else if (flag == "--edgefactor") {
      o.edgefactor = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--seed") {
      o.seed = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--repeats") {
      o.repeats = std::atoi(value.c_str());
    } else if (flag == "--route") {
      o.routes.clear();
      for (const std::string& name : value == "all"
                                         ? std::vector<std::string>{"direct", "sparse", "grid2", "gridk", "hypercube"}
                                         : split_commas(value)) {
        const auto kind = parse_route_kind(name);
        if (!kind) usage("unknown route '" + name + "'");
        o.routes.push_back(*kind);
      }
    } else if (flag == "--dedup") {
      if (value == "on") {
        o.dedups = {true};
      } else if (value == "off") {
        o.dedups = {false};
      } else if (value == "both") {
        o.dedups = {true, false};
      } else {
        usage("--dedup takes on, off or both");
      }
    } else {
      usage("unknown option " + flag);
    }
  }
  if (o.graph != "kronecker" && o.graph != "gnm" && o.graph != "geometric") usage("unknown graph '" + o.graph + "'");
  if (o.scale < 4 || o.scale > 30) usage("--scale must be in [4, 30]");
  if (o.edgefactor < 1 || o.edgefactor > 256) usage("--edgefactor must be in [1, 256]");
  if (o.repeats < 1) usage("--repeats must be at least 1");
  return o;
}

// This rank's tuples of the chosen graph (any rank may hold any tuple: kernel 1
// distributes them).
PackedEdgeList edge_slice(const Options& o, const ProcessGrid& grid) {
  const std::uint64_t n = std::uint64_t{1} << o.scale;
  if (o.graph == "kronecker") {
    const KroneckerGenerator generator(KroneckerParams{o.scale, o.edgefactor, o.seed});
    const EdgeSliceRange range = edge_slice_of(generator.num_edges(), grid.rank(), grid.size());
    return generate_edge_slice(generator, range.first, range.count);
  }
  const CounterRng rng(o.seed, RandomStream::kSyntheticGraphs);
  std::vector<Edge> edges;
  if (o.graph == "gnm") {
    const EdgeSliceRange range = edge_slice_of(o.edgefactor * n, grid.rank(), grid.size());
    for (std::uint64_t e = range.first; e < range.first + range.count; ++e) {
      edges.push_back({uniform_below(rng(2 * e), n), uniform_below(rng(2 * e + 1), n)});
    }
  } else {
    // Cells of side r, k points each, about pi * k neighbours: k = edgefactor * 2 / pi
    // gives the same average degree as the other graphs (2 * edgefactor).
    const auto per_cell =
        static_cast<std::uint64_t>(std::max(1.0, std::round(2.0 * static_cast<double>(o.edgefactor) / M_PI)));
    const auto side = static_cast<std::uint64_t>(
        std::max(1.0, std::floor(std::sqrt(static_cast<double>(n) / static_cast<double>(per_cell)))));
    const std::uint64_t points = side * side * per_cell;  // ids at or past `points` stay isolated
    const double cell = 1.0 / static_cast<double>(side);
    const auto position = [&](std::uint64_t id, int axis) {
      const std::uint64_t c = id / per_cell;
      const std::uint64_t origin = axis == 0 ? c % side : c / side;
      const double offset = static_cast<double>(rng(2 * id + static_cast<std::uint64_t>(axis)) >> 11) * 0x1.0p-53;
      return (static_cast<double>(origin) + offset) * cell;
    };
    const std::uint64_t first = grid.my_first_vertex();
    const std::uint64_t last = std::min(points, first + grid.blocks().block());
    for (std::uint64_t u = first; u < last; ++u) {
      const auto cx = static_cast<std::int64_t>((u / per_cell) % side);
      const auto cy = static_cast<std::int64_t>((u / per_cell) / side);
      for (std::int64_t dy = -1; dy <= 1; ++dy) {
        for (std::int64_t dx = -1; dx <= 1; ++dx) {
          const std::int64_t x = cx + dx;
          const std::int64_t y = cy + dy;
          if (x < 0 || y < 0 || x >= static_cast<std::int64_t>(side) || y >= static_cast<std::int64_t>(side)) continue;
          const std::uint64_t c = static_cast<std::uint64_t>(y) * side + static_cast<std::uint64_t>(x);
          for (std::uint64_t v = c * per_cell; v < (c + 1) * per_cell; ++v) {
            if (v <= u) continue;  // each pair once
            const double ex = position(u, 0) - position(v, 0);
            const double ey = position(u, 1) - position(v, 1);
            if (ex * ex + ey * ey < cell * cell) edges.push_back({u, v});
          }
        }
      }
    }
  }
  PackedEdgeList slice(o.scale, edges.size());
  for (std::size_t i = 0; i < edges.size(); ++i) slice.set(i, edges[i]);
  return slice;
}

// One pattern over one route: runs it o.repeats times and prints its JSON line.
void measure(const Options& o, const std::string& pattern, const RouteChoice& route, const ProcessGrid& grid,
             const DistributedGraph<std::uint64_t>& graph) {
  const Communicator& world = grid.world();
  const int ranks = grid.size();
  const std::uint64_t n = std::uint64_t{1} << o.scale;
  const TraversalLayout layout = grid.top_down();
  const LocalCsr<std::uint64_t>& csr = graph.for_layout(layout);
  const std::uint64_t first = grid.my_first_vertex();

  DistributedArray array(world, ArrayPlacement::of_vertices(grid), 1, route.plan_for(ranks), route.merge());
  // Values: the element's index, or for pointer doubling the smallest of v and its
  // neighbours (local data: the rows are this rank's vertices).
  for (std::uint64_t v = 0; v < array.local_size(); ++v) {
    std::uint64_t value = first + v;
    if (pattern == "doubling") {
      for (const std::uint64_t w : csr.neighbors(v)) value = std::min(value, layout.target.to_global(w));
    }
    array.local()[v] = value;
  }
  // Queues one step's reads; returns how many.
  const auto queue = [&] {
    std::uint64_t reads = 0;
    if (pattern == "neighbours") {
      for (std::uint64_t v = 0; v < array.local_size(); ++v) {
        for (const std::uint64_t w : csr.neighbors(v)) {
          array.read(layout.target.to_global(w));
          ++reads;
        }
      }
    } else if (pattern == "doubling") {
      for (std::uint64_t v = 0; v < array.local_size(); ++v, ++reads) array.read(array.local()[v]);
    } else {
      for (std::uint64_t i = 0; i < std::min(grid.blocks().block(), n); ++i, ++reads) array.read(i);
    }
    return reads;
  };

  std::vector<double> times;
  RouteStats stats;
  std::uint64_t issued = 0;
  for (int r = 0; r < o.repeats; ++r) {
    issued = queue();
    world.barrier();
    const Stopwatch clock;
    array.execute(world);
    times.push_back(world.allreduce(clock.elapsed_s(), ReduceOp::kMax));
    stats = array.read_stats();
  }
  std::sort(times.begin(), times.end());
  std::vector<std::uint64_t> hop_bytes = stats.hop_bytes;
  world.allreduce(std::span<std::uint64_t>(hop_bytes), ReduceOp::kSum);
  std::uint64_t totals[3] = {stats.startups, stats.sent_bytes, stats.merged_items};
  world.allreduce(std::span<std::uint64_t>(totals), ReduceOp::kSum);
  const std::uint64_t startups_max = world.allreduce(stats.startups, ReduceOp::kMax);
  issued = world.allreduce(issued, ReduceOp::kSum);
  if (world.rank() == 0) {
    std::string hops;
    for (const std::uint64_t b : hop_bytes) {
      if (!hops.empty()) hops += ", ";
      hops += std::to_string(b);
    }
    std::printf(
        "{\"graph\": \"%s\", \"pattern\": \"%s\", \"scale\": %d, \"ranks\": %d, \"route\": \"%s\", \"dedup\": %s, "
        "\"reads\": %llu, \"time_s\": %.6g, \"startups_max\": %llu, \"startups_mean\": %.4g, \"bytes\": %llu, "
        "\"merged\": %llu, \"hop_bytes\": [%s]}\n",
        o.graph.c_str(), pattern.c_str(), o.scale, ranks, std::string(to_string(route.kind)).c_str(),
        route.dedup ? "true" : "false", static_cast<unsigned long long>(issued), times[times.size() / 2],
        static_cast<unsigned long long>(startups_max), static_cast<double>(totals[0]) / ranks,
        static_cast<unsigned long long>(totals[1]), static_cast<unsigned long long>(totals[2]), hops.c_str());
    std::fflush(stdout);
  }
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  PhaseMetrics metrics;
  const int ranks = world_size();
  const ProcessGrid grid(Partition::k1D, {1, ranks}, std::uint64_t{1} << o.scale, &metrics);
  const DistributedGraph<std::uint64_t> graph(grid, edge_slice(o, grid));
  for (const std::string& pattern : o.patterns) {
    for (const RouteKind kind : o.routes) {
      for (const bool dedup : o.dedups) measure(o, pattern, RouteChoice{kind, {}, dedup}, grid, graph);
    }
  }
  return 0;
}

}  // namespace
}  // namespace zbfs

int main(int argc, char** argv) {
  const zbfs::MpiEnvironment environment(argc, argv);
  try {
    return zbfs::run(argc, argv);
  } catch (const zbfs::Error& e) {
    std::fprintf(stderr, "zbfs_route_patterns: %s\n", e.what());
    zbfs::abort_job(static_cast<int>(e.code()));
  }
  return 1;
}
