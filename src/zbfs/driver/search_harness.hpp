// The benchmark's search loop, one for every backend, in GAPBS's shape (a kernel, its
// statistics, its verifier): for each search key the kernel runs, timed; the tree's
// traversed edges and reached vertices are counted; the Graph500 validator checks the
// tree, timed separately, and must count the same traversed edges; the backend completes
// the search's record. A backend (the shared-memory kernel, the distributed one, the
// coming GPU one) supplies those steps; the loop, the timing discipline and the
// validation-failure errors are here once. Collective when the backend's steps are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "zbfs/backend/search_factory.hpp"
#include "zbfs/bfs/bfs_stats.hpp"
#include "zbfs/driver/progress.hpp"
#include "zbfs/driver/run_config.hpp"
#include "zbfs/driver/runner.hpp"
#include "zbfs/metrics/energy_meter.hpp"
#include "zbfs/validate/validator.hpp"

namespace zbfs {

// What a search's tree holds, over the whole graph (all ranks).
struct TreeCounts {
  std::uint64_t traversed_edges = 0;  // input tuples inside the searched component
  std::uint64_t reached_vertices = 0;
};

// Which kernel a loop runs: BFS (Graph500's kernel 2) or SSSP (kernel 3).
enum class SearchKernel { kBfs, kSssp };

struct SearchBackend {
  int rank = 0;  // this process's rank (--fail-on-rank)
  // Kernel 2 from `root`: what is timed.
  std::function<BfsStats(std::uint64_t root)> search;
  // Kernel 3 from `root` (a loop of SearchKernel::kSssp): what is timed.
  std::function<SsspStats(std::uint64_t root)> search_sssp;
  std::function<TreeCounts()> count;
  // The Graph500 validator on the tree just built.
  std::function<ValidationReport(std::uint64_t root)> validate;
  // Before each timed part (a barrier over ranks; nothing on one process).
  std::function<void()> synchronize = [] {};
  // A time over ranks: the slowest (one process: the time itself).
  std::function<double(double)> slowest = [](double seconds) { return seconds; };
  // Around each search: before it, after it (before validation: result files), and once
  // its record is complete but for the backend's part (the phases over ranks).
  std::function<void(std::size_t index)> before_search = [](std::size_t) {};
  std::function<void(std::size_t index, const SearchResult& search)> after_search = [](std::size_t,
                                                                                       const SearchResult&) {};
  std::function<void(std::size_t index, SearchResult& search)> finish_search = [](std::size_t, SearchResult&) {};
  // This rank's energy meter (none: nothing read): read at the timed parts' edges, after
  // the synchronisation before them and the slowest time after them, so that a node's
  // counters cover its ranks' whole part (metrics/energy_meter.hpp).
  EnergyMeter* energy = nullptr;
};

// The factory of the run's searches (backend/search_factory.hpp), from its flags:
// --backend, --force, --device-exchange, --delta, and how a distributed device search's
// id lists cross PCIe (--codec: with a codec on the wire as device frames too; under
// auto, each where the device's own calibration prices the frame lower). `device`: this
// rank's device under --backend cuda.
SearchFactory search_factory(const RunConfig& config, int device = 0);

// Says what setting up a device's search does (the graph's upload), before it does it.
void announce_search_setup(const RunConfig& config, const Progress& progress);

// Runs every search of `roots` with `kernel` and appends their records to `searches`.
// Throws Error (exit status 3, on every rank alike) when a tree fails validation.
void run_search_loop(const RunConfig& config, SearchKernel kernel, const std::vector<std::uint64_t>& roots,
                     const SearchBackend& backend, const Progress& progress, std::vector<SearchResult>& searches);

// Keys whose search reached fewer than 1% of the vertices the largest search reached: a
// key in a small component (a Kronecker graph has a giant one and many tiny ones). Such
// a search is over in microseconds and counts a handful of edges, so its TEPS is tiny
// and it weighs on the harmonic mean far beyond the work it stands for.
std::size_t count_small_component_keys(std::span<const SearchResult> searches);

// "64 search keys, 1 in a small component (under 1% of the largest search's vertices);
// TEPS median 6.7e+08, harmonic mean 5.5e+04", or "" without searches.
std::string describe_search_keys(std::span<const SearchResult> searches, double median_teps, double harmonic_mean_teps);

}  // namespace zbfs
