// The Graph500 benchmark on one process: generate the edge list, kernel 1 (timed), then
// for each search key kernel 2 (timed) and validation (timed separately), and finally the
// statistics of the official result block. Returns everything the JSON record holds.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zbfs/backend/device_record.hpp"
#include "zbfs/bfs/bfs_stats.hpp"
#include "zbfs/core/packed_edge_list.hpp"
#include "zbfs/driver/codec_trial.hpp"
#include "zbfs/driver/result_block.hpp"
#include "zbfs/driver/run_config.hpp"
#include "zbfs/metrics/energy_meter.hpp"
#include "zbfs/metrics/phase_breakdown.hpp"
#include "zbfs/sssp/sssp_stats.hpp"

namespace zbfs {

struct SearchResult {
  std::uint64_t root = 0;
  double time_s = 0;
  std::uint64_t traversed_edges = 0;
  double teps = 0;
  std::uint64_t reached_vertices = 0;
  BfsStats stats;  // a BFS's
  SsspStats sssp;  // an SSSP's
  bool validated = false;
  double validate_time_s = 0;
  PhaseBreakdown phases;  // the search and its validation, over ranks
  // A distributed BFS's steps' time, counted work and traffic, over ranks, one a step
  // (stats.steps' first levels.size()).
  std::vector<LevelSummary> levels;
};

struct RunResult {
  RunConfig config;
  int threads = 1;
  int vertex_id_bits = 32;  // width of kernel 1's local ids
  int num_processes = 1;
  GridShape grid;  // the process grid (1 x P for 1D)
  std::uint64_t num_vertices = 0;
  std::uint64_t num_input_edges = 0;
  std::uint64_t num_graph_edges = 0;  // distinct undirected edges after kernel 1
  std::uint64_t estimated_peak_bytes = 0;
  std::uint64_t peak_rss_bytes = 0;
  // The largest rank's peak less the shared-memory pages it maps beyond its share of them
  // (core/memory.hpp), at the end of the run: its part of the node's memory, what the
  // estimate is for. At 128 ranks on one node MPI's segments were half a rank's peak.
  std::uint64_t peak_share_bytes = 0;
  // Whether the generated edge list was held (--edge-list); a file's always is.
  bool edge_list_kept = true;
  // Whether the one-process kernel held compressed lists (--adjacency).
  bool adjacency_compressed = false;
  // The one-process graph's lists in bytes (offsets and ids, or starts, degrees and the
  // encoded lists); 0 for a distributed run.
  std::uint64_t adjacency_bytes = 0;
  // Ranks that keep a CSR's rows with lists only (--hypersparse; 0 on one process).
  std::uint64_t hypersparse_ranks = 0;
  double generation_time_s = 0;
  double construction_time_s = 0;
  std::vector<SearchResult> searches;       // BFS (--kernels bfs)
  std::vector<SearchResult> sssp_searches;  // SSSP (--kernels sssp), the same keys
  PhaseBreakdown phases;                    // the whole run, over ranks
  ResultBlock result_block;
  NetworkModel network;                             // the model that priced the traffic
  std::optional<NetworkMeasurement> network_probe;  // --network measure
  int num_nodes = 1;                                // nodes as the model sees them
  // --transport rma: the largest window memory a rank held, and the most growths.
  std::uint64_t rma_window_bytes = 0;
  std::uint64_t rma_window_growths = 0;
  std::optional<DeviceRecord> device;           // the device backend's device
  std::optional<CodecTrialRecord> codec_trial;  // --codec auto's trial, where it ran
  EnergyRecord energy;                          // joules per phase, where measured
};

// Throws Error (exit 2 for bad configuration or too little memory, 3 when a search
// fails validation).
RunResult run_benchmark(const RunConfig& config);

// A graph read before the one-process run (a file, by the MPI build's parallel reader),
// for run_benchmark below.
struct LoadedEdges {
  PackedEdgeList edges;  // ids below num_vertices
  // The tuples' weights in the list's order, when SSSP runs on the file's own weights
  // (else empty: --weights uniform draws them).
  std::vector<float> weights;
  std::uint64_t num_vertices = 0;
  double read_time_s = 0;  // reported as generation, as the distributed runner does
  // --root's keys in the list's ids (config.roots are in the file's).
  std::vector<std::uint64_t> roots;
};

// Called with the first search's tree (parents in the input's ids, -1 unreached) once it
// is counted, before it is validated (as the distributed runner writes its files): where
// --write-levels and --write-parents write from.
using FirstTreeHook = std::function<void(std::uint64_t root, std::span<const std::int64_t> parent)>;
// The same for the first SSSP's tree and distances (+infinity unreached), in the input's
// ids: where --write-distances writes from.
using FirstDistancesHook =
    std::function<void(std::uint64_t root, std::span<const std::int64_t> parent, std::span<const float> distance)>;

// The same run over `loaded` when given (else the generated graph), calling `first_tree`
// (when set) with the first BFS's tree and `first_distances` with the first SSSP's.
RunResult run_benchmark(const RunConfig& config, std::optional<LoadedEdges> loaded, const FirstTreeHook& first_tree,
                        const FirstDistancesHook& first_distances = {});

// The official result block's statistics over a run's searches.
ResultBlock make_result_block(const RunResult& result);

}  // namespace zbfs
