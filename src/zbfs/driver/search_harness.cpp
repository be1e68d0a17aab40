#include "zbfs/driver/search_harness.hpp"

#include <string>
#include <utility>

#include "zbfs/core/error.hpp"
#include "zbfs/core/timer.hpp"

namespace zbfs {
namespace {

// A tree the validator refused, or whose traversed edges it counts differently: the
// benchmark's result would be wrong, so the run ends (exit status 3).
void require_valid(const ValidationReport& report, const SearchResult& search) {
  const std::string key = "validation failed for search key " + std::to_string(search.root);
  if (!report.ok()) {
    throw Error(ExitCode::kValidationFailed,
                key + " (" + std::to_string(report.error_count) + " errors): " + report.messages.front(),
                ErrorScope::kAllRanks);
  }
  if (report.traversed_edges != search.traversed_edges) {
    throw Error(ExitCode::kValidationFailed,
                key + ": the BFS counted " + std::to_string(search.traversed_edges) +
                    " traversed edges, the edge list has " + std::to_string(report.traversed_edges),
                ErrorScope::kAllRanks);
  }
}

}  // namespace

void run_search_loop(const RunConfig& config, const std::vector<std::uint64_t>& roots, const SearchBackend& backend,
                     const Progress& progress, RunResult& result) {
  Stopwatch clock;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    if (i == 0) fail_if_injected(config, backend.rank);
    backend.before_search(i);
    SearchResult search;
    search.root = roots[i];
    backend.synchronize();
    clock.restart();
    search.stats = backend.search(search.root);
    search.time_s = backend.slowest(clock.elapsed_s());
    const TreeCounts counts = backend.count();
    search.traversed_edges = counts.traversed_edges;
    search.reached_vertices = counts.reached_vertices;
    search.teps = static_cast<double>(search.traversed_edges) / search.time_s;
    backend.after_search(i, search);
    if (config.validate) {
      backend.synchronize();
      clock.restart();
      const ValidationReport report = backend.validate(search.root);
      search.validate_time_s = backend.slowest(clock.elapsed_s());
      search.validated = true;
      require_valid(report, search);
    }
    backend.finish_search(i, search);
    result.searches.push_back(std::move(search));
    progress.count("BFS", i + 1, roots.size());
  }
}

}  // namespace zbfs
