#include "zbfs/driver/search_harness.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/core/wording.hpp"

namespace zbfs {
namespace {

// A tree the validator refused, or whose traversed edges it counts differently: the
// benchmark's result would be wrong, so the run ends (exit status 3).
void require_valid(const ValidationReport& report, const SearchResult& search, const char* kernel) {
  const std::string key = std::string(kernel) + " validation failed for search key " + std::to_string(search.root);
  if (!report.ok()) {
    throw Error(ExitCode::kValidationFailed,
                key + " (" + std::to_string(report.error_count) + " errors): " + report.messages.front(),
                ErrorScope::kAllRanks);
  }
  if (report.traversed_edges != search.traversed_edges) {
    throw Error(ExitCode::kValidationFailed,
                key + ": the search counted " + std::to_string(search.traversed_edges) +
                    " traversed edges, the edge list has " + std::to_string(report.traversed_edges),
                ErrorScope::kAllRanks);
  }
}

}  // namespace

SearchFactory search_factory(const RunConfig& config, int device) {
  SearchFactory factory;
  factory.backend = config.backend;
  factory.force = config.force;
  factory.device = device;
  factory.id_transfer = config.codec.is_auto()                 ? cuda_backend::IdTransfer::kPriced
                        : config.codec.fixed != CodecId::kNone ? cuda_backend::IdTransfer::kFrames
                                                               : cuda_backend::IdTransfer::kRaw;
  factory.exchange = config.device_exchange;
  factory.level_loop = config.level_loop;
  factory.delta = config.delta;
  return factory;
}

void announce_search_setup(const RunConfig& config, const Progress& progress) {
  if (config.backend == Backend::kCpu) return;
  progress.phase("uploading the graph to the " +
                 std::string(config.backend == Backend::kCuda ? "device" : "host launcher"));
}

void run_search_loop(const RunConfig& config, SearchKernel kernel, const std::vector<std::uint64_t>& roots,
                     const SearchBackend& backend, const Progress& progress, std::vector<SearchResult>& searches) {
  const char* name = kernel == SearchKernel::kBfs ? "BFS" : "SSSP";
  const auto enter = [&backend](EnergyPhase phase) {
    if (backend.energy != nullptr) backend.energy->enter(phase);
  };
  Stopwatch clock;
  release_free_heap();  // what kernel 1 freed
  for (std::size_t i = 0; i < roots.size(); ++i) {
    if (i == 0) fail_if_injected(config, backend.rank);
    backend.before_search(i);
    SearchResult search;
    search.root = roots[i];
    backend.synchronize();
    enter(kernel == SearchKernel::kBfs ? EnergyPhase::kBfs : EnergyPhase::kSssp);
    clock.restart();
    if (kernel == SearchKernel::kBfs) {
      search.stats = backend.search(search.root);
    } else {
      search.sssp = backend.search_sssp(search.root);
    }
    search.time_s = backend.slowest(clock.elapsed_s());
    enter(EnergyPhase::kOther);
    const TreeCounts counts = backend.count();
    search.traversed_edges = counts.traversed_edges;
    search.reached_vertices = counts.reached_vertices;
    search.teps = static_cast<double>(search.traversed_edges) / search.time_s;
    backend.after_search(i, search);
    if (config.validate) {
      // Untimed: the search's freed buffers go before validation's rounds come, and
      // validation's before the next search.
      release_free_heap();
      backend.synchronize();
      enter(EnergyPhase::kValidation);
      clock.restart();
      const ValidationReport report = backend.validate(search.root);
      search.validate_time_s = backend.slowest(clock.elapsed_s());
      enter(EnergyPhase::kOther);
      search.validated = true;
      require_valid(report, search, name);
      release_free_heap();
    }
    backend.finish_search(i, search);
    searches.push_back(std::move(search));
    progress.count(name, i + 1, roots.size());
  }
}

std::size_t count_small_component_keys(std::span<const SearchResult> searches) {
  std::uint64_t largest = 0;
  for (const SearchResult& s : searches) largest = std::max(largest, s.reached_vertices);
  std::size_t small = 0;
  for (const SearchResult& s : searches) small += s.reached_vertices * 100 < largest ? 1 : 0;
  return small;
}

std::string describe_search_keys(std::span<const SearchResult> searches, double median_teps,
                                 double harmonic_mean_teps) {
  if (searches.empty()) return "";
  const std::size_t small = count_small_component_keys(searches);
  return fmt::format(
      "{}, {} in {} (under 1% of the largest search's vertices); TEPS median {:.4g}, harmonic mean {:.4g}",
      counted(static_cast<long long>(searches.size()), "search key"), small,
      small == 1 ? "a small component" : "small components", median_teps, harmonic_mean_teps);
}

}  // namespace zbfs
