#include "zbfs/driver/distributed_runner.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/device_csr_builder.hpp"
#include "zbfs/backend/device_wire.hpp"
#include "zbfs/backend/search.hpp"
#include "zbfs/backend/search_factory.hpp"
#include "zbfs/bfs/distributed_forest.hpp"
#include "zbfs/codec/codec_cost.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/core/packed_edge_list.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/core/wording.hpp"
#include "zbfs/driver/codec_trial.hpp"
#include "zbfs/driver/distributed_job.hpp"
#include "zbfs/driver/progress.hpp"
#include "zbfs/driver/run_energy.hpp"
#include "zbfs/driver/search_harness.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/metrics/rank_aggregation.hpp"
#include "zbfs/mpi/environment.hpp"
#include "zbfs/mpi/simulated_compute.hpp"
#include "zbfs/network/network_probe.hpp"
#include "zbfs/output/bfs_output.hpp"
#include "zbfs/output/message_recorder.hpp"
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
                       SwitchingExchanger* trial, MessageRecorder* recorder, EnergyMeter& energy, RunResult& result) {
  const Communicator& world = grid.world();
  // --dump-frontiers holds the job's first search: SSSP's first when no BFS ran before it.
  const bool dumps = recorder != nullptr && !config.kernels.bfs;
  if (recorder != nullptr) recorder->set_enabled(false);
  world.barrier();
  energy.enter(EnergyPhase::kConstruction);
  Stopwatch clock;
  std::unique_ptr<SsspSearch> sssp;
  {
    const ScopedPhase phase(metrics, Phase::kConstruction);
    sssp = search_factory(config).sssp(grid, graph, exchanger, metrics);
  }
  result.construction_time_s += slowest(world, clock.elapsed_s());
  energy.enter(EnergyPhase::kOther);
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
  backend.energy = &energy;
  backend.search_sssp = [&](std::uint64_t root) { return sssp->run(root, parent.span(), distance.span()); };
  backend.count = [&] { return count_tree(world, parent.span(), tuple_degree); };
  backend.validate = [&](std::uint64_t root) {
    if (world.size() == 1) {
      const ScopedPhase phase(metrics, Phase::kValidation);
      return validate_sssp_tree(validation_edges, root, parent.span().first(input.num_vertices),
                                std::span<const float>(distance.data(), input.num_vertices));
    }
    return validate_distributed_sssp_tree(grid, validation_edges, exchanger, root, parent.span(), distance.span(),
                                          metrics, kTuplesPerRound);
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
// A device backend builds the rank's lists on its target (device `device_index`, shared by
// `device_sharers` ranks; 32-bit plain unweighted lists), its copies added to `copies`.
template <class V>
void build_graph(const RunConfig& config, const ProcessGrid& grid, LoadedGraph& input, PhaseMetrics& metrics,
                 const Progress& progress, RunResult& result, BuiltGraph<V>& built, int device_index,
                 int device_sharers, DeviceKernel1Report& on_target) {
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
  LocalListBuilder<V> list_builder;
  if constexpr (std::is_same_v<V, std::uint32_t>) {
    if (config.backend != Backend::kCpu && !config.kernels.sssp) {
      list_builder =
          local_list_builder_on_target(config.backend, device_index, config.force, on_target, device_sharers);
    }
  }
  // SSSP and the device backends read their lists by row.
  using SparseRows = typename DistributedGraph<V>::SparseRows;
  const SparseRows sparse_rows =
      config.hypersparse == HypersparseChoice::kOff || config.kernels.sssp || config.backend != Backend::kCpu
          ? SparseRows::kNever
      : config.hypersparse == HypersparseChoice::kOn ? SparseRows::kAlways
                                                     : SparseRows::kWherePays;
  const Stopwatch clock;
  {
    const ScopedPhase phase(metrics, Phase::kConstruction);
    built.graph.emplace(
        grid, slice, config.adjacency == AdjacencyChoice::kCompressed, kTuplesPerRound,
        config.kernels.sssp ? std::optional<std::span<const float>>(built.tuple_weights.span()) : std::nullopt,
        config.route ? std::optional<RoutePlan>(config.route->plan_for(world.size())) : std::nullopt, list_builder,
        sparse_rows);
    metrics.add_device_copies(Phase::kConstruction, on_target.copies.to_device, on_target.copies.to_host);
  }
  const DistributedGraph<V>& graph = *built.graph;
  result.construction_time_s = slowest(world, clock.elapsed_s());
  // --adjacency auto holds plain lists here: construction peaks with plain lists and the
  // received pairs whichever the lists end as, so plain fits wherever compressed does.
  result.adjacency_compressed = graph.forward().compressed();
  result.adjacency_bytes = world.allreduce(graph.list_bytes(), ReduceOp::kSum);
  result.hypersparse_ranks = world.allreduce(std::uint64_t{graph.hypersparse() ? 1U : 0U}, ReduceOp::kSum);
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

// The run's BFS search, from the factory (collective). Its set-up is timed into kernel 1,
// as the forest is: the CPU's hubs, a device's upload and warm-up search. The set-up's
// messages are no search's: the frontier dump starts with the first.
template <class V>
std::unique_ptr<BfsSearch> build_search(const RunConfig& config, const ProcessGrid& grid,
                                        const DistributedGraph<V>& graph, Exchanger& exchanger, PhaseMetrics& metrics,
                                        const DistributedForest<V>* forest, int device_index, MessageRecorder* recorder,
                                        const Progress& progress, RunResult& result) {
  const Communicator& world = grid.world();
  if (recorder != nullptr) recorder->set_enabled(false);
  announce_search_setup(config, progress);
  world.barrier();
  const Stopwatch clock;
  std::unique_ptr<BfsSearch> search = search_factory(config, device_index).bfs(grid, graph, exchanger, metrics, forest);
  result.construction_time_s += slowest(world, clock.elapsed_s());
  return search;
}

// The BFS search loop's hooks over a search: search, count, validate, write the first
// tree and the frontier dump, and each search's phases over the ranks.
template <class V>
SearchBackend bfs_search_backend(const RunConfig& config, const ProcessGrid& grid, const LoadedGraph& input,
                                 const DistributedGraph<V>& graph, const InputEdges& validation_edges,
                                 Exchanger& exchanger, BfsSearch& search, PhaseMetrics& metrics,
                                 MessageRecorder* recorder, const Progress& progress, PhaseMetrics& before,
                                 std::span<const std::int64_t>& parent) {
  const Communicator& world = grid.world();
  SearchBackend backend;
  backend.rank = grid.rank();
  backend.search = [&](std::uint64_t root) { return search.run(root, config.bfs); };
  backend.count = [&] {
    parent = search.parents();
    return count_tree(world, parent, graph.owned_tuple_degree());
  };
  backend.validate = [&](std::uint64_t root) {
    if (world.size() == 1) {
      // One rank holds the whole tree and list: the one-process validator checks the same
      // rules without the distributed one's rounds of reads, several times faster.
      const ScopedPhase phase(metrics, Phase::kValidation);
      return validate_bfs_tree(validation_edges, root, parent.first(input.num_vertices));
    }
    return validate_distributed_bfs_tree(grid, validation_edges, exchanger, root, parent, metrics, kTuplesPerRound);
  };
  backend.synchronize = [&] { world.barrier(); };
  backend.slowest = [&](double seconds) { return slowest(world, seconds); };
  backend.before_search = [&, recorder](std::size_t i) {
    before = metrics;
    // The dump holds the first search (validation included): representative and small.
    if (recorder != nullptr) recorder->set_enabled(i == 0);
  };
  backend.after_search = [&](std::size_t i, const SearchResult& result) {
    if (i == 0) {
      write_results(
          config, grid, input.ids, result.root, parent,
          [&] { return bfs_tree_levels(grid, exchanger, result.root, parent); }, progress);
    }
  };
  backend.finish_search = [&, recorder](std::size_t i, SearchResult& result) {
    search.clear();
    // The dump is complete now. Every rank's file takes its name once all are sealed, or
    // the job ends with the first rank's write error (the partial files go with the
    // recorders).
    if (recorder != nullptr && i == 0) {
      world.throw_first_error(recorder->seal(), ExitCode::kFailure);
      world.throw_first_error(recorder->publish(), ExitCode::kFailure);
    }
    result.phases = summarize_over_ranks(world, metrics.since(before));
    result.levels = summarize_levels_over_ranks(world, result.stats.level_work);
    result.stats.level_work = {};
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

// The distributed run after its input: kernel 1, the exchanger, the search, the codec
// trial, the BFS and SSSP searches, and what the record takes from them.
template <class V>
void run_searches(const RunConfig& config, const ProcessGrid& grid, LoadedGraph& input, MessageCodec message_codec,
                  int device_index, int device_sharers, PhaseMetrics& metrics, const Progress& progress,
                  EnergyMeter& energy, RunResult& result) {
  const Communicator& world = grid.world();
  BuiltGraph<V> built;
  // Kernel 1's energy: the graph, the forest and the search's set-up (the root choice,
  // the exchanger's and between them too, for they take no time to speak of).
  energy.enter(EnergyPhase::kConstruction);
  DeviceKernel1Report on_target;
  build_graph(config, grid, input, metrics, progress, result, built, device_index, device_sharers, on_target);
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
  const std::unique_ptr<BfsSearch> search = build_search(
      config, grid, graph, exchanger, metrics, forest ? &*forest : nullptr, device_index, dump, progress, result);
  energy.enter(EnergyPhase::kOther);
  PhaseMetrics before;  // the counters when the current search started
  std::span<const std::int64_t> parent;
  SearchBackend backend = bfs_search_backend(config, grid, input, graph, *built.validation_edges, exchanger, *search,
                                             metrics, dump, progress, before, parent);
  backend.energy = &energy;
  if (run_exchanger.trial != nullptr && config.kernels.bfs && !roots.empty()) {
    result.codec_trial = run_codec_trial(
        *run_exchanger.trial, roots,
        [&](std::uint64_t root) {
          search->run(root, config.bfs);
          search->clear();
        },
        world, metrics, progress);
  }
  if (config.kernels.bfs) run_search_loop(config, SearchKernel::kBfs, roots, backend, progress, result.searches);
  if constexpr (std::is_same_v<V, std::uint32_t>) {
    if (config.kernels.sssp) {
      run_sssp_searches(config, grid, *built.graph, exchanger, *built.validation_edges, input, roots, metrics, progress,
                        run_exchanger.trial, dump, energy, result);
    }
  }
  record_transport(world, exchanger, result);
  result.device = search->device_record();
  if (result.device) {
    result.device->construction.to_device += on_target.copies.to_device;
    result.device->construction.to_host += on_target.copies.to_host;
    // Each stage's slowest rank (every rank takes part: the record is rank 0's).
    const cuda_backend::Kernel1Stages& mine = on_target.stages;
    double stages[4] = {mine.send_s, mine.order_s, mine.lists_s, mine.fetch_s};
    world.allreduce(std::span<double>(stages), ReduceOp::kMax);
    if (on_target.copies.to_device > 0) result.device->kernel1 = {stages[0], stages[1], stages[2], stages[3]};
  }
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
  int device_index = 0;    // --backend cuda: this rank's device
  int device_sharers = 1;  // and how many of its node's ranks use it
  double device_open_s = 0;
  // Energy: a node's first rank reads its RAPL counters, and a device's first rank its
  // board (rank r of a node takes device r % gpus).
  const bool on_device = config.backend == Backend::kCuda;
  bool reads_host = false;
  bool reads_device = false;
  std::string energy_why;
  EnergyMeter energy;
  {
    Communicator world = Communicator::world();
    world.observe(&metrics);
    // Before any work: every rank has a device, or the job ends on all of them.
    device_index = agreed_device(world, config.backend, config.gpus_per_node);
    // The same library on every rank: the same answer, so every rank refuses alike.
    require_device_wire(config.device_exchange, config.backend);
    // The device's context before any phase's timer (the slowest rank's time, for the record).
    device_open_s = slowest(world, open_device(config.backend, device_index));
    const int node_rank = world.split_shared().rank();
    reads_host = node_rank == 0;
    reads_device = on_device && node_rank == device_index;
    energy = open_energy_meter(config.powercap_root, reads_host, reads_device ? device_pci_bus_id(device_index) : "",
                               energy_why);
    node_ranks = ranks_on_this_node(world);
    if (on_device) device_sharers = ranks_sharing_device(node_ranks, device_index, config.gpus_per_node);
    // A 2D run without --grid takes its grid from where its ranks are.
    const bool one_node = world.allreduce(std::uint64_t{node_ranks == ranks ? 0U : 1U}, ReduceOp::kMax) == 0;
    if (config.partition == Partition::k2D && !config.grid) config.grid = default_grid(ranks, one_node);
    if (config.partition == Partition::kHybrid) config.grid = hybrid_grid_of_job(config, world, node_ranks);
    result.config = config;
    choose_threads(config, node_ranks);
    check_job_openmp_threads(world);
    result.threads = omp_get_max_threads();
    energy.enter(EnergyPhase::kGeneration);
    input = load_graph(config, world, node_ranks, progress, metrics, result);
    energy.enter(EnergyPhase::kOther);
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
  if (config.work_costs) metrics.charge_work(*config.work_costs, &charge_simulated_compute);
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
    run_searches<std::uint32_t>(config, grid, input, std::move(message_codec), device_index, device_sharers, metrics,
                                progress, energy, result);
  } else {
    result.vertex_id_bits = 64;
    run_searches<std::uint64_t>(config, grid, input, std::move(message_codec), device_index, device_sharers, metrics,
                                progress, energy, result);
  }
  if (result.device) result.device->open_s = device_open_s;
  energy.enter(EnergyPhase::kOther);
  result.energy = summarize_energy(grid.world(), energy, reads_host, reads_device, on_device, energy_why);
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
