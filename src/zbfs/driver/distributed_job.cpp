#include "zbfs/driver/distributed_job.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>

#include "zbfs/backend/device_distributed_bfs.hpp"
#include "zbfs/backend/device_wire.hpp"
#include "zbfs/bfs/distributed_bfs.hpp"
#include "zbfs/bfs/distributed_forest.hpp"
#include "zbfs/codec/codec_cost.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/core/packed_edge_list.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/core/wording.hpp"
#include "zbfs/driver/codec_trial.hpp"
#include "zbfs/driver/progress.hpp"
#include "zbfs/driver/search_harness.hpp"
#include "zbfs/generator/edge_weights.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/generator/search_roots.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/input/graph_reader.hpp"
#include "zbfs/metrics/rank_aggregation.hpp"
#include "zbfs/mpi/environment.hpp"
#include "zbfs/network/network_probe.hpp"
#include "zbfs/output/bfs_output.hpp"
#include "zbfs/output/message_recorder.hpp"
#include "zbfs/sssp/distributed_sssp.hpp"
#include "zbfs/topology/process_grid.hpp"
#include "zbfs/validate/distributed_validator.hpp"
#include "zbfs/validate/reference_bfs.hpp"
#include "zbfs/validate/sssp_validator.hpp"
#include "zbfs/validate/validator.hpp"
#include "zbfs/wire/decorators/switching_exchanger.hpp"
#include "zbfs/wire/exchanger.hpp"
#include "zbfs/wire/exchanger_factory.hpp"

namespace zbfs {

// How many ranks of the job share this rank's node (collective).
int ranks_on_this_node(const Communicator& world) { return world.split_shared().size(); }

// The hybrid partition's grid: nodes of --ranks-per-node consecutive ranks, or of the
// ranks that share this machine's memory when every machine has as many. Collective.
GridShape hybrid_grid_of_job(const RunConfig& config, const Communicator& world, int node_ranks) {
  int per_node = node_ranks;
  if (config.network.ranks_per_node) {
    per_node = *config.network.ranks_per_node;
  } else {
    const auto fewest = world.allreduce(static_cast<std::uint64_t>(node_ranks), ReduceOp::kMin);
    const auto most = world.allreduce(static_cast<std::uint64_t>(node_ranks), ReduceOp::kMax);
    if (fewest != most) {
      throw_usage_error("--partition hybrid: the nodes hold " + std::to_string(fewest) + " to " + std::to_string(most) +
                        " ranks each; say how to group them with --ranks-per-node");
    }
  }
  const std::optional<GridShape> grid = hybrid_grid(world.size(), per_node);
  if (!grid) {
    throw_usage_error("--partition hybrid needs whole nodes: " + std::to_string(per_node) +
                      " ranks per node do not divide the job's " + std::to_string(world.size()));
  }
  return *grid;
}

// Without --threads or OMP_NUM_THREADS, ranks sharing a node split its cores instead of
// each starting one thread per core: oversubscribed OpenMP barriers spin for whole
// scheduler time slices.
void choose_threads(const RunConfig& config, int node_ranks) {
#ifdef ZBFS_SIMGRID
  // A simulated rank runs one thread (mpi/environment.cpp), whatever OMP_NUM_THREADS says.
  omp_set_num_threads(1);
  return;
#endif
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

double slowest(const Communicator& world, double seconds) { return world.allreduce(seconds, ReduceOp::kMax); }

// Ranks on one node share its memory, so each may use its share of what is available.
std::optional<std::uint64_t> memory_per_rank(const RunConfig& config, int node_ranks) {
  const auto available = available_memory_bytes();
  if (!available || config.force) return std::nullopt;
  return *available / static_cast<std::uint64_t>(node_ranks);
}

void check_memory(const RunConfig& config, const Communicator& world, int node_ranks, std::uint64_t n, std::uint64_t m,
                  RunResult& result) {
  result.estimated_peak_bytes = estimate_rank_peak_memory_bytes(config, world.size(), n, m);
  const auto budget = memory_per_rank(config, node_ranks);
  const std::uint64_t short_of = budget && result.estimated_peak_bytes > *budget ? 1 : 0;
  if (world.allreduce(short_of, ReduceOp::kMax) != 0) {
    const std::string graph = graph_in_messages(config, n, m);
    const std::string needed = result.estimated_peak_bytes == UINT64_MAX
                                   ? "more than 16 EiB"
                                   : "about " + format_bytes(result.estimated_peak_bytes);
    // What would help: more nodes (each rank's share shrinks), one rank on this node (the
    // one-process kernel holds the graph once, compressed or produced again where that
    // fits), relabelled sparse ids, or --force.
    std::string hint = "use more nodes";
    const auto available = available_memory_bytes();  // known here where the budget is
    if (config.backend == Backend::kCpu && !config.input && available) {
      const MemoryPlan one = plan_memory(config, available, n, m);
      if (one.estimated_peak_bytes <= *available) {
        hint += ", or one rank on this node (zbfs run without mpirun: about " + format_bytes(one.estimated_peak_bytes) +
                ")";
      }
    }
    if (config.input && !config.input->relabel) hint += ", --relabel if its ids are sparse";
    hint += ", or --force to try anyway";
    // A rank whose node could not say what it has available (no budget) still ends with
    // the others, naming what it knows.
    const std::string share = budget && available
                                  ? ", but " + format_bytes(*available) + " available on this node gives each of its " +
                                        counted(node_ranks, "rank") + " " + format_bytes(*budget)
                                  : ", more than another node's available memory allows";
    throw_usage_error(graph + " needs " + needed + " per rank on " + counted(world.size(), "rank") + share + " (" +
                      hint + ")");
  }
}

// "on 4 ranks, 2 threads each", for the progress lines.
std::string job_layout(int ranks, int threads) {
  return "on " + counted(ranks, "rank") + ", " + counted(threads, "thread") + " each";
}

// "reading g.mtx (mtx, relabelled)", for the progress lines.
std::string reading_line(const GraphFileSpec& spec) {
  return "reading " + spec.path + " (" + (spec.format ? to_string(*spec.format) : "format by content") +
         (spec.relabel ? ", relabelled" : "") + ")";
}

// --root's keys (in the source's ids) in the graph's internal ids; a key that is no
// vertex is refused. Collective.
std::vector<std::uint64_t> given_roots(const RunConfig& config, const Communicator& world, const VertexIds& ids,
                                       std::uint64_t num_vertices) {
  const std::vector<std::optional<std::uint64_t>> internal = ids.to_internal(world, config.roots, num_vertices);
  std::vector<std::uint64_t> roots;
  for (std::size_t i = 0; i < internal.size(); ++i) {
    if (!internal[i]) throw_usage_error("--root " + std::to_string(config.roots[i]) + " is not a vertex of the graph");
    roots.push_back(*internal[i]);
  }
  return roots;
}

// The input graph: this rank's slice of a generated graph, or of a file (which is also
// where the file's errors surface, before anything else is allocated).
LoadedGraph load_graph(const RunConfig& config, const Communicator& world, int node_ranks, const Progress& progress,
                       PhaseMetrics& metrics, RunResult& result) {
  LoadedGraph graph;
  Stopwatch clock;
  if (config.input) {
    GraphFileSpec spec = *config.input;
    spec.memory_per_rank = memory_per_rank(config, node_ranks);
    spec.weights = config.kernels.sssp && config.weights.value_or(TupleWeightSource::kFile) == TupleWeightSource::kFile;
    progress.phase(reading_line(spec) + " " + job_layout(world.size(), result.threads));
    world.barrier();
    clock.restart();
    const ScopedPhase phase(metrics, Phase::kGeneration);
    graph = read_graph_file(world, spec);
  } else {
    const GraphSpec& spec = config.graph;
    graph.num_vertices = graph_vertices(spec);
    check_memory(config, world, node_ranks, graph.num_vertices, expected_graph_edges(spec), result);
    progress.phase("generating " + describe_graph_open(spec) + ") " + job_layout(world.size(), result.threads));
    world.barrier();
    clock.restart();
    const ScopedPhase phase(metrics, Phase::kGeneration);
    graph.slice = generate_graph_slice(spec, world.rank(), world.size());
    graph.num_input_edges = world.allreduce(graph.slice.size(), ReduceOp::kSum);
  }
  result.generation_time_s = slowest(world, clock.elapsed_s());
  return graph;
}

// The search keys: the given ones (in the source's ids) after checking that each is a
// vertex with an edge, else the Graph500 draw among the vertices with edges. `tuples`:
// each owned vertex's input tuples other than self-loops, by original offset (a vertex
// has an edge exactly when it has one).
std::vector<std::uint64_t> choose_roots(const RunConfig& config, const ProcessGrid& grid, const LoadedGraph& input,
                                        std::span<const std::uint64_t> tuples, const Progress& progress) {
  const Communicator& world = grid.world();
  const auto has_edges = [&](std::span<const std::uint64_t> candidates, std::span<std::uint8_t> flags) {
    std::vector<std::uint64_t> mine(candidates.size(), 0);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (grid.owns(candidates[i])) mine[i] = tuples[candidates[i] - grid.my_first_vertex()] > 0 ? 1 : 0;
    }
    world.allreduce(std::span<std::uint64_t>(mine), ReduceOp::kMax);
    for (std::size_t i = 0; i < candidates.size(); ++i) flags[i] = mine[i] != 0 ? 1 : 0;
  };
  if (!config.roots.empty()) {
    const std::vector<std::uint64_t> roots = given_roots(config, world, input.ids, input.num_vertices);
    std::vector<std::uint8_t> flags(roots.size());
    has_edges(roots, flags);
    for (std::size_t i = 0; i < roots.size(); ++i) {
      if (flags[i] == 0)
        throw_usage_error("--root " + std::to_string(config.roots[i]) +
                          " has no edges (a search from it traverses none)");
    }
    return roots;
  }
  std::uint64_t eligible = 0;
  for (const std::uint64_t d : tuples) eligible += d > 0 ? 1 : 0;
  eligible = world.allreduce(eligible, ReduceOp::kSum);
  const std::uint64_t count = roots_to_draw(config, eligible);
  if (count < config.num_roots) progress.phase(fewer_search_keys(count, config.num_roots));
  return sample_search_roots_batched(input.num_vertices, eligible, count, config.graph.seed, has_edges);
}

// This rank's device for --backend cuda, agreed on by all ranks (collective): a rank that
// has none (a node without GPUs, --gpus-per-node above what a node sees) ends the job on
// every rank with the same usage error, instead of leaving the others in a collective.
// Another backend uses none: 0, on every rank alike without a collective.
int agreed_device(const Communicator& world, Backend backend, std::optional<int> gpus_per_node) {
  if (backend != Backend::kCuda) return 0;
  const int node_rank = world.split_shared().rank();
  int device = 0;
  std::string why;
  try {
    device = device_for_rank(node_rank, gpus_per_node);
  } catch (const Error& e) {
    why = e.what();
  }
  if (world.allreduce(std::uint64_t{why.empty() ? 0U : 1U}, ReduceOp::kMax) != 0) {
    throw_usage_error(!why.empty() ? why : "--backend cuda: another rank of the job has no CUDA device to use");
  }
  return device;
}

// SSSP's weights of this rank's tuples, in the slice's order: the file's, or drawn from
// the seed and each tuple's place in the file (--weights uniform: the ranks' shares are
// the file's edges in order), or the generator's. Collective.
LargeArray<float> slice_weights(const RunConfig& config, const Communicator& world, LoadedGraph& input) {
  if (!config.input) return generate_weight_slice(config.graph, world.rank(), world.size(), input.slice);
  LargeArray<float> weights(input.slice.size());
  // Decided by the options, which every rank shares, not by this rank's share of the
  // file: a rank that read no tuples must still take part in the collective below.
  if (config.weights.value_or(TupleWeightSource::kFile) == TupleWeightSource::kFile) {
    if (input.weights.size() != input.slice.size())
      throw Error(ExitCode::kFailure, "the file's weights do not match its tuples");
    std::copy(input.weights.begin(), input.weights.end(), weights.data());
    std::vector<float>().swap(input.weights);
    return weights;
  }
  const std::vector<std::uint64_t> sizes = world.allgather_value(std::uint64_t{input.slice.size()});
  std::uint64_t first = 0;
  for (int r = 0; r < world.rank(); ++r) first += sizes[static_cast<std::size_t>(r)];
  const TupleWeights draw(config.graph.seed);
  const auto count = static_cast<std::int64_t>(weights.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    weights[static_cast<std::size_t>(i)] = draw(first + static_cast<std::uint64_t>(i));
  }
  return weights;
}

}  // namespace zbfs
