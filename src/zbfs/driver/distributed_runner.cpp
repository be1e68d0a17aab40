#include "zbfs/driver/distributed_runner.hpp"

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
namespace {

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
    std::string graph = "scale " + std::to_string(config.graph.scale);
    if (config.input || config.graph.kind != GraphKind::kKronecker)
      graph = "a graph of " + counted(static_cast<long long>(n), "vertex", "vertices") + " and " +
              counted(static_cast<long long>(m), "edge");
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
int agreed_device(const Communicator& world, std::optional<int> gpus_per_node) {
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

// --write-levels / --write-parents for the first search; levels_of() gives the tree's
// levels (this rank's piece).
template <class LevelsOf>
void write_results(const RunConfig& config, const ProcessGrid& grid, const VertexIds& ids, std::uint64_t root,
                   std::span<const std::int64_t> parent, const LevelsOf& levels_of, const Progress& progress) {
  if (!config.write_parents.empty()) {
    progress.phase("writing the parents of search key " + std::to_string(root) + " to " + config.write_parents);
    write_bfs_output(grid, ids, config.write_parents, BfsOutputKind::kParents, config.write_format, root, parent);
  }
  if (!config.write_levels.empty()) {
    progress.phase("writing the levels of search key " + std::to_string(root) + " to " + config.write_levels);
    const auto level = levels_of();
    write_bfs_output(grid, ids, config.write_levels, BfsOutputKind::kLevels, config.write_format, root,
                     std::span<const std::int64_t>(level.data(), level.size()));
  }
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

// --codec auto's trial (driver/codec_trial.hpp), with the run's first kernel: `search`
// runs one search from a key and leaves nothing the next search would see. Leaves the
// exchanger on the path chosen, and the counters as they were before it.
CodecTrialRecord run_codec_trial(SwitchingExchanger& exchanger, const std::vector<std::uint64_t>& roots,
                                 const std::function<void(std::uint64_t root)>& search, const Communicator& world,
                                 PhaseMetrics& metrics, const Progress& progress) {
  progress.phase("timing --codec auto's paths, coded and plain, from " +
                 counted(static_cast<long long>(std::min(roots.size(), kCodecTrialKeys)), "search key"));
  const PhaseMetrics kept = metrics;
  world.barrier();
  const Stopwatch whole;
  const auto timed = [&](ExchangePath path, std::uint64_t root) {
    exchanger.use(path);
    world.barrier();
    const Stopwatch clock;
    search(root);
    return slowest(world, clock.elapsed_s());
  };
  CodecTrialRecord record;
  timed(ExchangePath::kCoded, roots.front());
  timed(ExchangePath::kPlain, roots.front());
  for (std::size_t i = 0; i < kCodecTrialKeys; ++i) {
    const std::uint64_t root = roots[i % roots.size()];
    record.roots.push_back(root);
    // The order alternates, so that neither path always runs on the other's warm caches.
    if (i % 2 == 0) {
      record.plain_s.push_back(timed(ExchangePath::kPlain, root));
      record.coded_s.push_back(timed(ExchangePath::kCoded, root));
    } else {
      record.coded_s.push_back(timed(ExchangePath::kCoded, root));
      record.plain_s.push_back(timed(ExchangePath::kPlain, root));
    }
  }
  // Every rank has the same (slowest-rank) times; rank 0's verdict is everyone's anyway.
  int coded = coded_path_wins(record.coded_s, record.plain_s) ? 1 : 0;
  world.broadcast(std::span<int>(&coded, 1), 0);
  record.chose_coded = coded == 1;
  exchanger.settle(record.chose_coded ? ExchangePath::kCoded : ExchangePath::kPlain);
  metrics = kept;
  record.time_s = slowest(world, whole.elapsed_s());
  double sums[2] = {0, 0};
  for (std::size_t i = 0; i < record.roots.size(); ++i) sums[0] += record.coded_s[i], sums[1] += record.plain_s[i];
  progress.phase(fmt::format("--codec auto takes the {} path: {:.3f} ms coded, {:.3f} ms plain over {}",
                             record.chose_coded ? "coded" : "plain", 1e3 * sums[0], 1e3 * sums[1],
                             counted(static_cast<long long>(record.roots.size()), "search", "searches")));
  return record;
}

// The tree's traversed edges (input tuples with both ends reached, each counted from its
// two endpoints) and reached vertices over the job. Collective.
TreeCounts count_tree(const Communicator& world, std::span<const std::int64_t> parent,
                      std::span<const std::uint64_t> tuple_degree) {
  std::uint64_t endpoints = 0;
  std::uint64_t reached = 0;
  const auto owned = static_cast<std::int64_t>(parent.size());
#pragma omp parallel for schedule(static) reduction(+ : endpoints, reached)
  for (std::int64_t o = 0; o < owned; ++o) {
    if (parent[static_cast<std::size_t>(o)] < 0) continue;
    endpoints += tuple_degree[static_cast<std::size_t>(o)];
    ++reached;
  }
  std::uint64_t counts[2] = {endpoints, reached};
  world.allreduce(std::span<std::uint64_t>(counts), ReduceOp::kSum);
  return TreeCounts{counts[0] / 2, counts[1]};
}

// Kernel 3 from the same keys, after every BFS (as the Graph500 reference runs them).
void run_sssp_searches(const RunConfig& config, const ProcessGrid& grid, DistributedGraph<std::uint32_t>& graph,
                       Exchanger& exchanger, const InputEdges& validation_edges, const LoadedGraph& input,
                       const std::vector<std::uint64_t>& roots, PhaseMetrics& metrics, const Progress& progress,
                       SwitchingExchanger* trial, MessageRecorder* recorder, RunResult& result) {
  const Communicator& world = grid.world();
  // --dump-frontiers holds the job's first search: SSSP's first when no BFS ran before it.
  const bool dumps = recorder != nullptr && !config.kernels.bfs;
  if (recorder != nullptr) recorder->set_enabled(false);
  world.barrier();
  Stopwatch clock;
  std::optional<DistributedSssp> sssp;
  {
    const ScopedPhase phase(metrics, Phase::kConstruction);
    sssp.emplace(grid, graph, exchanger, metrics, config.delta);
  }
  result.construction_time_s += slowest(world, clock.elapsed_s());
  const std::uint64_t block = grid.blocks().block();
  LargeArray<std::int64_t> parent(block);
  LargeArray<float> distance(block);
  // Without BFS searches before, the trial times SSSP's (a search sets every entry).
  if (trial != nullptr && !result.codec_trial && !roots.empty()) {
    result.codec_trial = run_codec_trial(
        *trial, roots, [&](std::uint64_t root) { sssp->run(root, parent.span(), distance.span()); }, world, metrics,
        progress);
  }
  const std::span<const std::uint64_t> tuple_degree = graph.owned_tuple_degree();
  PhaseMetrics before;
  SearchBackend backend;
  backend.rank = grid.rank();
  backend.search_sssp = [&](std::uint64_t root) { return sssp->run(root, parent.span(), distance.span()); };
  backend.count = [&] { return count_tree(world, parent.span(), tuple_degree); };
  backend.validate = [&](std::uint64_t root) {
    if (world.size() == 1) {
      const ScopedPhase phase(metrics, Phase::kValidation);
      return validate_sssp_tree(validation_edges, root, parent.span().first(input.num_vertices),
                                std::span<const float>(distance.data(), input.num_vertices));
    }
    return validate_distributed_sssp_tree(grid, validation_edges, exchanger, root, parent.span(), distance.span(),
                                          metrics);
  };
  backend.synchronize = [&] { world.barrier(); };
  backend.slowest = [&](double seconds) { return slowest(world, seconds); };
  backend.before_search = [&](std::size_t i) {
    before = metrics;
    if (dumps) recorder->set_enabled(i == 0);
  };
  backend.after_search = [&](std::size_t i, const SearchResult& search) {
    if (i != 0 || config.write_distances.empty()) return;
    progress.phase("writing the distances of search key " + std::to_string(search.root) + " to " +
                   config.write_distances);
    write_distance_output(grid, input.ids, config.write_distances, config.write_format, search.root, distance.span());
  };
  backend.finish_search = [&](std::size_t i, SearchResult& search) {
    if (dumps && i == 0) {
      recorder->set_enabled(false);
      world.throw_first_error(recorder->seal(), ExitCode::kFailure);
      world.throw_first_error(recorder->publish(), ExitCode::kFailure);
    }
    search.phases = summarize_over_ranks(world, metrics.since(before));
  };
  run_search_loop(config, SearchKernel::kSssp, roots, backend, progress, result.sssp_searches);
}

// Kernel 1's output for the searches: the graph, and the edges validation reads (the
// rank's slice, with its SSSP weights, or the generator's share again).
template <class V>
struct BuiltGraph {
  LargeArray<float> tuple_weights;
  std::optional<DistributedGraph<V>> graph;
  std::optional<InputEdges> validation_edges;
};

// Kernel 1 from each rank's slice, timed into the result. With --edge-list regenerate,
// the slice goes once kernel 1 is built, and the generator produces the rank's share
// again for validation. auto keeps it: here kernel 1 holds the whole slice at its peak
// anyway, so keeping it costs no peak memory.
template <class V>
void build_graph(const RunConfig& config, const ProcessGrid& grid, LoadedGraph& input, PhaseMetrics& metrics,
                 const Progress& progress, RunResult& result, BuiltGraph<V>& built) {
  const Communicator& world = grid.world();
  PackedEdgeList& slice = input.slice;
  if constexpr (!std::is_same_v<V, std::uint32_t>) {
    if (config.kernels.sssp)
      throw_usage_error("--kernels sssp numbers a rank's vertex groups in 32 bits: use more ranks");
  }
  // SSSP's weights travel with the tuples in kernel 1 (and stay for a kept slice's
  // validation).
  if (config.kernels.sssp) built.tuple_weights = slice_weights(config, world, input);
  progress.phase("kernel 1: distributing the graph (" + std::string(to_string(config.partition)) + ", grid " +
                 grid.shape().to_string() + ")");
  world.barrier();
  const Stopwatch clock;
  {
    const ScopedPhase phase(metrics, Phase::kConstruction);
    built.graph.emplace(
        grid, slice, config.adjacency == AdjacencyChoice::kCompressed, std::uint64_t{1} << 20,
        config.kernels.sssp ? std::optional<std::span<const float>>(built.tuple_weights.span()) : std::nullopt,
        config.route ? std::optional<RoutePlan>(config.route->plan_for(world.size())) : std::nullopt);
  }
  const DistributedGraph<V>& graph = *built.graph;
  result.construction_time_s = slowest(world, clock.elapsed_s());
  // --adjacency auto holds plain lists here: construction peaks with plain lists and the
  // received pairs whichever the lists end as, so plain fits wherever compressed does.
  result.adjacency_compressed = graph.forward().compressed();
  result.adjacency_bytes = world.allreduce(graph.list_bytes(), ReduceOp::kSum);
  std::optional<InputEdges> regenerated = config.input || config.edge_list != EdgeListPolicy::kRegenerate
                                              ? std::nullopt
                                              : regenerated_graph_slice(config.graph, world.rank(), world.size());
  result.edge_list_kept = !regenerated;
  if (!config.validate || regenerated) {
    slice = PackedEdgeList();
    built.tuple_weights = LargeArray<float>();
  }
  built.validation_edges.emplace(regenerated ? std::move(*regenerated) : InputEdges(slice, input.num_vertices));
  if (config.kernels.sssp && !regenerated) built.validation_edges->attach_weights(built.tuple_weights.data());
  result.num_graph_edges = graph.global_directed_edges() / 2;
}

// The run's exchanger, and for --codec auto on measured links the switch between it and
// a plain one that the codec trial flips.
struct RunExchanger {
  std::unique_ptr<Exchanger> owned;
  SwitchingExchanger* trial = nullptr;
};

RunExchanger build_run_exchanger(const RunConfig& config, const Communicator& world, MessageCodec message_codec,
                                 std::uint64_t max_ids, MessageRecorder* recorder) {
  RunExchanger built;
  built.owned = make_exchanger({config.column_gather, std::move(message_codec), config.route, max_ids, recorder,
                                config.transport, pipelines_folds(config), config.batch_bytes});
  if (runs_codec_trial(config, world.size())) {
    std::unique_ptr<Exchanger> plain =
        make_exchanger({config.column_gather, MessageCodec(), config.route, max_ids, nullptr, config.transport,
                        pipelines_folds(plain_path_config(config)), config.batch_bytes});
    auto switching = std::make_unique<SwitchingExchanger>(std::move(built.owned), std::move(plain));
    built.trial = switching.get();
    built.owned = std::move(switching);
  }
  return built;
}

// What a distributed run searches with: the CPU's DistributedBfs, or a device backend's
// DeviceDistributedBfs (32-bit local ids), whose parents come to host memory untimed,
// for the counts, the result files and the validator.
template <class V>
class DistributedSearcher {
 public:
  // Collective. A device's set-up and warm-up are timed into kernel 1, as the CPU's
  // forest is (the CPU search's hubs, built with it, are not: they were not before).
  DistributedSearcher(const RunConfig& config, const ProcessGrid& grid, const DistributedGraph<V>& graph,
                      Exchanger& exchanger, PhaseMetrics& metrics, const DistributedForest<V>* forest, int device_index,
                      MessageRecorder* recorder, RunResult& result) {
    if (config.backend == Backend::kCpu) {
      cpu_.emplace(grid, graph, exchanger, metrics, forest);
      return;
    }
    if constexpr (std::is_same_v<V, std::uint32_t>) {
      const Communicator& world = grid.world();
      world.barrier();
      const Stopwatch clock;
      // With a codec on the wire the id lists cross PCIe as device frames too; under
      // auto, each where the device's own calibration prices the frame lower.
      const cuda_backend::IdTransfer transfer = config.codec.is_auto() ? cuda_backend::IdTransfer::kPriced
                                                : config.codec.fixed != CodecId::kNone
                                                    ? cuda_backend::IdTransfer::kFrames
                                                    : cuda_backend::IdTransfer::kRaw;
      device_ = std::make_unique<DeviceDistributedBfs>(config.backend, device_index, grid, graph, exchanger, metrics,
                                                       config.force, transfer, config.device_exchange);
      // The warm-up's messages are no search's: the frontier dump starts with the first.
      if (recorder != nullptr) recorder->set_enabled(false);
      device_->warm_up();
      result.construction_time_s += slowest(world, clock.elapsed_s());
      result.device = DeviceRecord{};
      result.device->name = device_->device_name();
      result.device->construction = device_->traffic();
      device_parent_ = LargeArray<std::int64_t>(grid.blocks().block());
    } else {
      throw_usage_error("--backend " + std::string(to_string(config.backend)) +
                        " numbers a rank's vertex groups in 32 bits: use more ranks");
    }
  }

  BfsStats run(std::uint64_t root, const BfsOptions& options) {
    return device_ ? device_->run(root, options) : cpu_->run(root, options);
  }
  // The last search's parents, owned vertices in original order (a device's copied here).
  std::span<const std::int64_t> parents() {
    if (!device_) return cpu_->parent();
    device_->copy_parents(device_parent_.span());
    return device_parent_.span();
  }
  // Done with the last tree: the CPU search's next starts from a cleared array and
  // touches only what it reaches (untimed, as a fresh array would be).
  void clear() {
    if (cpu_) cpu_->clear_parent();
  }
  // The CPU search, for the codec trial (none on a device).
  DistributedBfs<V>* cpu() { return cpu_ ? &*cpu_ : nullptr; }

  // The device's traffic over the searches, and its lists' framed and raw bytes over
  // the job (collective; nothing on the CPU).
  void record_device(const Communicator& world, RunResult& result) const {
    if (!device_) return;
    const HostDeviceTraffic total = device_->traffic();
    result.device->searches = {total.to_device - result.device->construction.to_device,
                               total.to_host - result.device->construction.to_host};
    result.device->id_transfer = std::string(to_string(device_->id_transfer()));
    result.device->exchange = std::string(to_string(device_->exchange()));
    result.device->pcie = device_->pcie_costs();
    const auto [framed, raw] = device_->lists_framed_and_raw();
    std::uint64_t lists[2] = {framed, raw};
    world.allreduce(std::span<std::uint64_t>(lists), ReduceOp::kSum);
    result.device->lists_framed = lists[0];
    result.device->lists_raw = lists[1];
  }

 private:
  std::optional<DistributedBfs<V>> cpu_;
  std::unique_ptr<DeviceDistributedBfs> device_;
  LargeArray<std::int64_t> device_parent_;
};

// The BFS search loop's hooks over a searcher: search, count, validate, write the first
// tree and the frontier dump, and each search's phases over the ranks.
template <class V>
SearchBackend bfs_search_backend(const RunConfig& config, const ProcessGrid& grid, const LoadedGraph& input,
                                 const DistributedGraph<V>& graph, const InputEdges& validation_edges,
                                 Exchanger& exchanger, DistributedSearcher<V>& searcher, PhaseMetrics& metrics,
                                 MessageRecorder* recorder, const Progress& progress, PhaseMetrics& before,
                                 std::span<const std::int64_t>& parent) {
  const Communicator& world = grid.world();
  SearchBackend backend;
  backend.rank = grid.rank();
  backend.search = [&](std::uint64_t root) { return searcher.run(root, config.bfs); };
  backend.count = [&] {
    parent = searcher.parents();
    return count_tree(world, parent, graph.owned_tuple_degree());
  };
  backend.validate = [&](std::uint64_t root) {
    if (world.size() == 1) {
      // One rank holds the whole tree and list: the one-process validator checks the same
      // rules without the distributed one's rounds of reads, several times faster.
      const ScopedPhase phase(metrics, Phase::kValidation);
      return validate_bfs_tree(validation_edges, root, parent.first(input.num_vertices));
    }
    return validate_distributed_bfs_tree(grid, validation_edges, exchanger, root, parent, metrics);
  };
  backend.synchronize = [&] { world.barrier(); };
  backend.slowest = [&](double seconds) { return slowest(world, seconds); };
  backend.before_search = [&, recorder](std::size_t i) {
    before = metrics;
    // The dump holds the first search (validation included): representative and small.
    if (recorder != nullptr) recorder->set_enabled(i == 0);
  };
  backend.after_search = [&](std::size_t i, const SearchResult& search) {
    if (i == 0) {
      write_results(
          config, grid, input.ids, search.root, parent,
          [&] { return bfs_tree_levels(grid, exchanger, search.root, parent); }, progress);
    }
  };
  backend.finish_search = [&, recorder](std::size_t i, SearchResult& search) {
    searcher.clear();
    // The dump is complete now. Every rank's file takes its name once all are sealed, or
    // the job ends with the first rank's write error (the partial files go with the
    // recorders).
    if (recorder != nullptr && i == 0) {
      world.throw_first_error(recorder->seal(), ExitCode::kFailure);
      world.throw_first_error(recorder->publish(), ExitCode::kFailure);
    }
    search.phases = summarize_over_ranks(world, metrics.since(before));
  };
  return backend;
}

// The RMA transport's windows, the largest over the ranks (collective).
void record_transport(const Communicator& world, const Exchanger& exchanger, RunResult& result) {
  const TransportStats transport = exchanger.transport_stats();
  std::uint64_t windows[2] = {transport.window_bytes, transport.window_growths};
  world.allreduce(std::span<std::uint64_t>(windows), ReduceOp::kMax);
  result.rma_window_bytes = windows[0];
  result.rma_window_growths = windows[1];
}

// The distributed run after its input: kernel 1, the exchanger, the searcher, the codec
// trial, the BFS and SSSP searches, and what the record takes from them.
template <class V>
void run_searches(const RunConfig& config, const ProcessGrid& grid, LoadedGraph& input, MessageCodec message_codec,
                  int device_index, PhaseMetrics& metrics, const Progress& progress, RunResult& result) {
  const Communicator& world = grid.world();
  BuiltGraph<V> built;
  build_graph(config, grid, input, metrics, progress, result, built);
  const DistributedGraph<V>& graph = *built.graph;
  const std::vector<std::uint64_t> roots = choose_roots(config, grid, input, graph.owned_tuple_degree(), progress);

  // No message carries more ids than there are edge endpoints and vertices, or than
  // validation's replies: a level and a parent for both ends of every input tuple.
  const std::uint64_t max_ids =
      std::max(2 * graph.global_directed_edges() + input.num_vertices, 4 * input.num_input_edges) + 1;
  std::optional<MessageRecorder> recorder;
  if (!config.dump_frontiers.empty()) recorder.emplace(config.dump_frontiers, grid.rank());
  MessageRecorder* const dump = recorder ? &*recorder : nullptr;
  RunExchanger run_exchanger = build_run_exchanger(config, world, std::move(message_codec), max_ids, dump);
  Exchanger& exchanger = *run_exchanger.owned;
  // Forest pruning's peeled trees are part of kernel 1.
  std::optional<DistributedForest<V>> forest;
  if (config.prune) {
    world.barrier();
    const Stopwatch clock;
    {
      const ScopedPhase phase(metrics, Phase::kConstruction);
      forest.emplace(grid, graph, exchanger);
    }
    result.construction_time_s += slowest(world, clock.elapsed_s());
  }
  DistributedSearcher<V> searcher(config, grid, graph, exchanger, metrics, forest ? &*forest : nullptr, device_index,
                                  dump, result);
  PhaseMetrics before;  // the counters when the current search started
  std::span<const std::int64_t> parent;
  const SearchBackend backend = bfs_search_backend(config, grid, input, graph, *built.validation_edges, exchanger,
                                                   searcher, metrics, dump, progress, before, parent);
  if (run_exchanger.trial != nullptr && searcher.cpu() != nullptr && config.kernels.bfs && !roots.empty()) {
    DistributedBfs<V>& bfs = *searcher.cpu();
    result.codec_trial = run_codec_trial(
        *run_exchanger.trial, roots,
        [&](std::uint64_t root) {
          bfs.run(root, config.bfs);
          bfs.clear_parent();
        },
        world, metrics, progress);
  }
  if (config.kernels.bfs) run_search_loop(config, SearchKernel::kBfs, roots, backend, progress, result.searches);
  if constexpr (std::is_same_v<V, std::uint32_t>) {
    if (config.kernels.sssp) {
      run_sssp_searches(config, grid, *built.graph, exchanger, *built.validation_edges, input, roots, metrics, progress,
                        run_exchanger.trial, dump, result);
    }
  }
  record_transport(world, exchanger, result);
  searcher.record_device(world, result);
}

}  // namespace

void check_job_openmp_threads(const Communicator& world) {
  check_openmp_threads(world.allreduce(static_cast<std::uint64_t>(omp_get_max_threads()), ReduceOp::kMax));
}

RunResult run_distributed_benchmark(const RunConfig& given) {
  const int ranks = world_size();
  const int rank = world_rank();
  validate_config(given, ranks);

  PhaseMetrics metrics;
  const Progress progress(!given.quiet && rank == 0);
  RunResult result;
  result.num_processes = ranks;
  LoadedGraph input;
  int node_ranks = 1;
  RunConfig config = given;
  int device_index = 0;  // --backend cuda: this rank's device
  {
    Communicator world = Communicator::world();
    world.observe(&metrics);
    // Before any work: every rank has a device, or the job ends on all of them.
    if (config.backend == Backend::kCuda) device_index = agreed_device(world, config.gpus_per_node);
    // The same library on every rank: the same answer, so every rank refuses alike.
    require_device_wire(config.device_exchange, config.backend);
    node_ranks = ranks_on_this_node(world);
    // A 2D run without --grid takes its grid from where its ranks are.
    const bool one_node = world.allreduce(std::uint64_t{node_ranks == ranks ? 0U : 1U}, ReduceOp::kMax) == 0;
    if (config.partition == Partition::k2D && !config.grid) config.grid = default_grid(ranks, one_node);
    if (config.partition == Partition::kHybrid) config.grid = hybrid_grid_of_job(config, world, node_ranks);
    result.config = config;
    choose_threads(config, node_ranks);
    check_job_openmp_threads(world);
    result.threads = omp_get_max_threads();
    input = load_graph(config, world, node_ranks, progress, metrics, result);
  }
  ProcessGrid grid(config.partition, grid_for(config, ranks), input.num_vertices, &metrics);
  result.grid = grid.shape();
  result.num_vertices = input.num_vertices;
  result.num_input_edges = input.num_input_edges;
  // A generated graph was checked before it was generated; a file's size is known now.
  if (config.input) check_memory(config, grid.world(), node_ranks, input.num_vertices, input.num_input_edges, result);

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
  grid.attach_nodes(nodes);
  metrics.price_links(result.network.intra_node, result.network.inter_node);
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
    run_searches<std::uint32_t>(config, grid, input, std::move(message_codec), device_index, metrics, progress, result);
  } else {
    result.vertex_id_bits = 64;
    run_searches<std::uint64_t>(config, grid, input, std::move(message_codec), device_index, metrics, progress, result);
  }
  result.phases = summarize_over_ranks(grid.world(), metrics);
  std::uint64_t peaks[2] = {peak_rss_bytes(), peak_share_bytes()};
  grid.world().allreduce(std::span<std::uint64_t>(peaks), ReduceOp::kMax);
  result.peak_rss_bytes = peaks[0];
  result.peak_share_bytes = peaks[1];
  result.result_block = make_result_block(result);
  return result;
}

RunResult run_shared_benchmark(const RunConfig& config) {
  if (!config.input && config.write_levels.empty() && config.write_parents.empty() && config.write_distances.empty()) {
    return run_benchmark(config);
  }
  validate_config(config, world_size());
  if (config.threads > 0) omp_set_num_threads(config.threads);
  const Communicator world = Communicator::world();
  const Progress progress(!config.quiet);
  std::optional<LoadedEdges> loaded;
  VertexIds ids;
  std::uint64_t num_vertices = config.input ? 0 : graph_vertices(config.graph);
  if (config.input) {
    GraphFileSpec spec = *config.input;
    spec.memory_per_rank = memory_per_rank(config, 1);
    spec.weights = config.kernels.sssp && config.weights.value_or(TupleWeightSource::kFile) == TupleWeightSource::kFile;
    progress.phase(reading_line(spec) + ", " + counted(omp_get_max_threads(), "thread"));
    const Stopwatch clock;
    LoadedGraph graph = read_graph_file(world, spec);
    loaded.emplace();
    loaded->read_time_s = clock.elapsed_s();
    loaded->num_vertices = num_vertices = graph.num_vertices;
    loaded->roots = given_roots(config, world, graph.ids, graph.num_vertices);
    loaded->edges = std::move(graph.slice);
    loaded->weights = std::move(graph.weights);
    ids = std::move(graph.ids);
  }
  // The ordered writers' grid: this one rank owns every vertex.
  const ProcessGrid grid(Partition::k1D, GridShape{1, 1}, num_vertices, nullptr);
  const FirstTreeHook write = [&](std::uint64_t root, std::span<const std::int64_t> parent) {
    write_results(
        config, grid, ids, root, parent, [&] { return levels_from_parents(parent, root); }, progress);
  };
  const FirstDistancesHook write_distances = [&](std::uint64_t root, std::span<const std::int64_t>,
                                                 std::span<const float> distance) {
    if (config.write_distances.empty()) return;
    progress.phase("writing the distances of search key " + std::to_string(root) + " to " + config.write_distances);
    write_distance_output(grid, ids, config.write_distances, config.write_format, root, distance);
  };
  return run_benchmark(config, std::move(loaded), write, write_distances);
}

}  // namespace zbfs
