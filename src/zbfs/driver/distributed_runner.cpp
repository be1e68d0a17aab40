#include "zbfs/driver/distributed_runner.hpp"

#include <mpi.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "zbfs/bfs/distributed_bfs.hpp"
#include "zbfs/codec/codec_cost.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/driver/progress.hpp"
#include "zbfs/exchange/exchanger.hpp"
#include "zbfs/generator/kronecker.hpp"
#include "zbfs/generator/packed_edge_list.hpp"
#include "zbfs/generator/search_roots.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/metrics/rank_aggregation.hpp"
#include "zbfs/network/network_probe.hpp"
#include "zbfs/topology/process_grid.hpp"
#include "zbfs/validate/distributed_validator.hpp"

namespace zbfs {
namespace {

// How many ranks of the job share this rank's node (collective).
int ranks_on_this_node(const Communicator& world) {
  MPI_Comm node_handle = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(world.handle(), MPI_COMM_TYPE_SHARED, world.rank(), MPI_INFO_NULL, &node_handle),
            "MPI_Comm_split_type");
  int node_ranks = 1;
  MPI_Comm_size(node_handle, &node_ranks);
  MPI_Comm_free(&node_handle);
  return node_ranks;
}

// Without --threads or OMP_NUM_THREADS, ranks sharing a node split its cores instead of
// each starting one thread per core: oversubscribed OpenMP barriers spin for whole
// scheduler time slices.
void choose_threads(const RunConfig& config, int node_ranks) {
  if (config.threads > 0) {
    omp_set_num_threads(config.threads);
    return;
  }
  if (std::getenv("OMP_NUM_THREADS") != nullptr) return;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  const int visible = sched_getaffinity(0, sizeof(mask), &mask) == 0 ? CPU_COUNT(&mask) : omp_get_num_procs();
  const auto on_node = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  omp_set_num_threads(std::max(1, std::min(visible, on_node / node_ranks)));
}

// Ranks on one node share its memory, so each may use its share of what is available.
void check_memory(const RunConfig& config, const Communicator& world, int node_ranks, RunResult& result) {
  result.estimated_peak_bytes = estimate_rank_peak_memory_bytes(config, world.size());
  const auto available = available_memory_bytes();
  const std::uint64_t needed = result.estimated_peak_bytes * static_cast<std::uint64_t>(node_ranks);
  const std::uint64_t short_of = available && needed > *available && !config.force ? 1 : 0;
  if (world.allreduce(short_of, ReduceOp::kMax) != 0) {
    throw_usage_error("scale " + std::to_string(config.scale) + " needs about " +
                      format_bytes(result.estimated_peak_bytes) + " per rank on " + std::to_string(world.size()) +
                      " ranks, more than this node's available memory allows (use more ranks, or --force)");
  }
}

double slowest(const Communicator& world, double seconds) { return world.allreduce(seconds, ReduceOp::kMax); }

template <class V>
void run_searches(const RunConfig& config, const ProcessGrid& grid, const KroneckerGenerator& generator,
                  MessageCodec message_codec, PhaseMetrics& metrics, const Progress& progress, RunResult& result) {
  const Communicator& world = grid.world();
  progress.phase("generating the Kronecker edge list (scale " + std::to_string(config.scale) + ", edgefactor " +
                 std::to_string(config.edgefactor) + ") on " + std::to_string(world.size()) + " ranks, " +
                 std::to_string(result.threads) + " threads each");
  world.barrier();
  Stopwatch clock;
  // Each rank keeps its slice: kernel 1 is built from it and validation reads it again.
  const EdgeSliceRange range = edge_slice_of(generator.num_edges(), grid.rank(), grid.size());
  PackedEdgeList slice;
  {
    const ScopedPhase phase(metrics, Phase::kGeneration);
    slice = generate_edge_slice(generator, range.first, range.count);
  }
  result.generation_time_s = slowest(world, clock.elapsed_s());

  progress.phase("kernel 1: distributing the graph (" + std::string(to_string(config.partition)) + ", grid " +
                 grid.shape().to_string() + ")");
  world.barrier();
  clock.restart();
  std::optional<DistributedGraph<V>> built;
  {
    const ScopedPhase phase(metrics, Phase::kConstruction);
    built.emplace(grid, slice);
  }
  const DistributedGraph<V>& graph = *built;
  result.construction_time_s = slowest(world, clock.elapsed_s());
  if (!config.validate) slice = PackedEdgeList();
  result.num_graph_edges = graph.global_directed_edges() / 2;

  const std::span<const std::uint64_t> degree = graph.owned_degree();
  std::uint64_t eligible = 0;
  for (const std::uint64_t d : degree) eligible += d > 0 ? 1 : 0;
  eligible = world.allreduce(eligible, ReduceOp::kSum);
  const std::vector<std::uint64_t> roots =
      sample_search_roots_batched(generator.num_vertices(), eligible, config.num_roots, config.seed,
                                  [&](std::span<const std::uint64_t> candidates, std::span<std::uint8_t> flags) {
                                    std::vector<std::uint64_t> mine(candidates.size(), 0);
                                    for (std::size_t i = 0; i < candidates.size(); ++i) {
                                      if (grid.owns(candidates[i]))
                                        mine[i] = degree[candidates[i] - grid.my_first_vertex()] > 0 ? 1 : 0;
                                    }
                                    world.allreduce(std::span<std::uint64_t>(mine), ReduceOp::kMax);
                                    for (std::size_t i = 0; i < candidates.size(); ++i) flags[i] = mine[i] != 0 ? 1 : 0;
                                  });

  // No message carries more ids than there are edge endpoints and vertices, or than
  // validation's replies: a level and a parent for both ends of every input tuple.
  const std::uint64_t max_ids =
      std::max(2 * graph.global_directed_edges() + generator.num_vertices(), 4 * generator.num_edges()) + 1;
  // Routed exchanges encode their hops with a codec of their own (auto learns per codec).
  MessageCodec hop_codec = message_codec;
  DirectExchanger exchanger(config.column_gather, std::move(message_codec), max_ids);
  const RouteChoice* route = config.route ? &*config.route : nullptr;
  std::optional<ValidationRoute> validation_route;
  if (route != nullptr)
    validation_route = ValidationRoute{route->plan_for(world.size()), route->merge(), &hop_codec, max_ids};
  std::optional<MessageRecorder> recorder;
  if (!config.dump_frontiers.empty()) {
    recorder.emplace(config.dump_frontiers, grid.rank());
    exchanger.set_recorder(&*recorder);
  }
  DistributedBfs<V> bfs(grid, graph, exchanger, metrics, route, &hop_codec, max_ids);
  LargeArray<std::int64_t> parent(grid.blocks().block());
  const std::span<const std::uint64_t> tuple_degree = graph.owned_tuple_degree();
  for (std::size_t i = 0; i < roots.size(); ++i) {
    if (i == 0 && grid.rank() == config.fail_on_rank) {
      throw Error(ExitCode::kFailure, "injected failure on rank " + std::to_string(grid.rank()) + " (--fail-on-rank)");
    }
    const PhaseMetrics before = metrics;
    SearchResult search;
    search.root = roots[i];
    // The dump holds the first search (validation included): representative and small.
    if (recorder) recorder->set_enabled(i == 0);
    world.barrier();
    clock.restart();
    search.stats = bfs.run(search.root, parent.span(), config.bfs);
    search.time_s = slowest(world, clock.elapsed_s());

    std::uint64_t endpoints = 0;
    std::uint64_t reached = 0;
    const auto owned = static_cast<std::int64_t>(parent.size());
#pragma omp parallel for schedule(static) reduction(+ : endpoints, reached)
    for (std::int64_t o = 0; o < owned; ++o) {
      if (parent[static_cast<std::size_t>(o)] < 0) continue;
      endpoints += tuple_degree[static_cast<std::size_t>(o)];
      ++reached;
    }
    std::uint64_t counts[2] = {endpoints, reached};  // tuple endpoints in the tree, reached vertices
    world.allreduce(std::span<std::uint64_t>(counts), ReduceOp::kSum);
    search.traversed_edges = counts[0] / 2;
    search.reached_vertices = counts[1];
    search.teps = static_cast<double>(search.traversed_edges) / search.time_s;

    if (config.validate) {
      world.barrier();
      clock.restart();
      const ValidationReport report = validate_distributed_bfs_tree(
          grid, slice, exchanger, search.root, parent.span(), metrics, validation_route ? &*validation_route : nullptr);
      search.validate_time_s = slowest(world, clock.elapsed_s());
      search.validated = true;
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
    search.phases = summarize_over_ranks(world, metrics.since(before));
    result.searches.push_back(std::move(search));
    progress.count("BFS", i + 1, roots.size());
  }
}

}  // namespace

RunResult run_distributed_benchmark(const RunConfig& config) {
  int ranks = 1;
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &ranks), "MPI_Comm_size");
  int rank = 0;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  validate_config(config, ranks);

  PhaseMetrics metrics;
  const KroneckerGenerator generator(KroneckerParams{config.scale, config.edgefactor, config.seed});
  ProcessGrid grid(config.partition, grid_for(config, ranks), generator.num_vertices(), &metrics);
  const int node_ranks = ranks_on_this_node(grid.world());
  choose_threads(config, node_ranks);
  RunResult result;
  result.config = config;
  result.threads = omp_get_max_threads();
  result.num_processes = ranks;
  result.grid = grid.shape();
  result.num_vertices = generator.num_vertices();
  result.num_input_edges = generator.num_edges();
  check_memory(config, grid.world(), node_ranks, result);

  const Progress progress(!config.quiet && rank == 0);
  // Presets price the job as if every rank had a node of its own unless told otherwise;
  // a measurement follows the real layout.
  const std::vector<int> nodes = node_of_world_ranks(
      grid.world(), config.network.ranks_per_node ? config.network.ranks_per_node
                                                  : (config.network.measure() ? std::nullopt : std::optional<int>(1)));
  result.num_nodes = *std::max_element(nodes.begin(), nodes.end()) + 1;
  if (config.network.measure() && ranks > 1) {
    progress.phase("measuring the network (ping-pong)");
    result.network_probe = measure_network(grid.world(), nodes);
  }
  result.network = network_model_for(config.network, result.network_probe ? &*result.network_probe : nullptr);
  grid.attach_network(&result.network, nodes);
  grid.time_waits(config.time_waits);
  std::shared_ptr<const CodecCostModel> codec_costs;
  if (config.codec.is_auto()) {
    progress.phase("calibrating the codecs' speed and ratio on this machine");
    codec_costs = std::make_shared<const CodecCostModel>(CodecCostModel::calibrate());
  }
  MessageCodec message_codec(config.codec, codec_costs);
  const std::uint64_t largest_group = std::max(grid.row_group().local_size(), grid.col_group().local_size());
  if (largest_group <= (std::uint64_t{1} << 32)) {
    result.vertex_id_bits = 32;
    run_searches<std::uint32_t>(config, grid, generator, std::move(message_codec), metrics, progress, result);
  } else {
    result.vertex_id_bits = 64;
    run_searches<std::uint64_t>(config, grid, generator, std::move(message_codec), metrics, progress, result);
  }
  result.phases = summarize_over_ranks(grid.world(), metrics);
  result.peak_rss_bytes = grid.world().allreduce(peak_rss_bytes(), ReduceOp::kMax);
  result.result_block = make_result_block(result);
  return result;
}

}  // namespace zbfs
