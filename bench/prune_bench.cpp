// Forest pruning against the whole-graph search, in one process on one graph: for every
// search key the shared-memory kernel runs unpruned and pruned back to back (in turns
// which goes first), so both see the same machine at the same moment; the machines here
// drift by 2x between runs, far more than the difference measured. Prints the forest
// (peeled share, rounds, build time), each repeat's mean search time of both, their
// medians and the ratio. Checks that both searches reach the same vertices at the same
// depth. Usage: zbfs_prune_bench [scale] [threads] [repeats] [roots]
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "zbfs/bfs/direction_optimizing_bfs.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/generator/kronecker.hpp"
#include "zbfs/generator/search_roots.hpp"
#include "zbfs/graph/csr_builder.hpp"
#include "zbfs/graph/peeled_forest.hpp"

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t m = values.size() / 2;
  return values.size() % 2 == 1 ? values[m] : (values[m - 1] + values[m]) / 2;
}

std::uint64_t reached(std::span<const std::int64_t> parent) {
  std::uint64_t count = 0;
  for (std::size_t v = 0; v < parent.size(); ++v) count += parent[v] >= 0 ? 1 : 0;
  return count;
}

int number(int argc, char** argv, int at, int fallback) { return argc > at ? std::atoi(argv[at]) : fallback; }

}  // namespace

int main(int argc, char** argv) {
  using V = std::uint32_t;
  const int scale = number(argc, argv, 1, 20);
  const int threads = number(argc, argv, 2, 1);
  const int repeats = number(argc, argv, 3, 5);
  const int num_roots = number(argc, argv, 4, 64);
  if (scale < 1 || scale > 32 || threads < 1 || repeats < 1 || num_roots < 1) {
    std::fprintf(stderr, "usage: zbfs_prune_bench [scale 1..32] [threads] [repeats] [roots]\n");
    return 2;
  }
  omp_set_num_threads(threads);
  const zbfs::KroneckerGenerator generator(zbfs::KroneckerParams{scale, 16, 1});
  const zbfs::PackedEdgeList edges = zbfs::generate_edge_list(generator);
  const zbfs::Csr<V> graph = zbfs::build_csr<V>(edges, zbfs::CsrOrder::kDegree);
  zbfs::Stopwatch clock;
  const zbfs::PeeledForest<V> forest(graph.offsets(), graph.neighbor_data(), graph.num_vertices());
  const double forest_s = clock.elapsed_s();
  zbfs::DirectionOptimizingBfs<V> full(graph);
  zbfs::DirectionOptimizingBfs<V> pruned(graph, &forest);

  const std::uint64_t with_edges = forest.core_vertices() + forest.num_peeled();
  std::printf(
      "scale %d, %d thread(s): %llu of %llu vertices with edges peeled (%.1f%%) in %zu rounds, forest built in "
      "%.1f ms\n",
      scale, threads, static_cast<unsigned long long>(forest.num_peeled()), static_cast<unsigned long long>(with_edges),
      100.0 * static_cast<double>(forest.num_peeled()) / static_cast<double>(with_edges), forest.num_rounds(),
      1e3 * forest_s);
  const std::vector<std::uint64_t> roots =
      zbfs::sample_search_roots(graph.num_vertices(), with_edges, static_cast<std::uint64_t>(num_roots), 2,
                                [&](std::uint64_t v) { return graph.degree(graph.internal_id(v)) > 0; });

  std::vector<double> full_means;
  std::vector<double> pruned_means;
  std::vector<double> attach_means;
  for (int r = 0; r < repeats; ++r) {
    double full_total = 0;
    double pruned_total = 0;
    double attach_total = 0;
    for (std::size_t i = 0; i < roots.size(); ++i) {
      std::uint64_t counts[2] = {0, 0};
      std::uint64_t levels[2] = {0, 0};
      for (int turn = 0; turn < 2; ++turn) {
        const bool prune = (turn + i + static_cast<std::size_t>(r)) % 2 == 1;
        clock.restart();
        // Into the search's own parents, as zbfs run searches (reset by what they set).
        zbfs::DirectionOptimizingBfs<V>& bfs = prune ? pruned : full;
        const zbfs::BfsStats stats = bfs.run(roots[i], {});
        const double t = clock.elapsed_s();
        (prune ? pruned_total : full_total) += t;
        if (prune) attach_total += stats.attach_time_s;
        counts[prune ? 1 : 0] = reached(bfs.parent());
        levels[prune ? 1 : 0] = stats.levels();
      }
      if (counts[0] != counts[1] || levels[0] != levels[1]) {
        std::fprintf(stderr,
                     "root %llu: the pruned search reached %llu vertices in %llu levels, the full one %llu in %llu\n",
                     static_cast<unsigned long long>(roots[i]), static_cast<unsigned long long>(counts[1]),
                     static_cast<unsigned long long>(levels[1]), static_cast<unsigned long long>(counts[0]),
                     static_cast<unsigned long long>(levels[0]));
        return 1;
      }
    }
    const auto k = static_cast<double>(roots.size());
    full_means.push_back(1e3 * full_total / k);
    pruned_means.push_back(1e3 * pruned_total / k);
    attach_means.push_back(1e3 * attach_total / k);
    std::printf("repeat %d: full %.3f ms, pruned %.3f ms (attach %.3f ms) per search\n", r + 1, full_means.back(),
                pruned_means.back(), attach_means.back());
  }
  const double f = median(full_means);
  const double p = median(pruned_means);
  std::printf("median of %d: full %.3f ms, pruned %.3f ms (attach %.3f ms): pruned is %.3fx as fast\n", repeats, f, p,
              median(attach_means), f / p);
  return 0;
}
