#include "zbfs/driver/runner.hpp"

#include <omp.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/device_csr_builder.hpp"
#include "zbfs/backend/search.hpp"
#include "zbfs/backend/search_factory.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/input_edges.hpp"
#include "zbfs/core/large_array.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/core/packed_edge_list.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/driver/progress.hpp"
#include "zbfs/driver/run_energy.hpp"
#include "zbfs/driver/search_harness.hpp"
#include "zbfs/generator/edge_weights.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/generator/search_roots.hpp"
#include "zbfs/graph/compressed_csr_builder.hpp"
#include "zbfs/graph/csr_builder.hpp"
#include "zbfs/graph/peeled_forest.hpp"
#include "zbfs/validate/sssp_validator.hpp"
#include "zbfs/validate/traversed_edges.hpp"
#include "zbfs/validate/validator.hpp"

namespace zbfs {
namespace {

// `n`, `m`: the graph's vertices and input edges.
void check_memory(const RunConfig& config, std::uint64_t n, std::uint64_t m, RunResult& result) {
  const auto available = available_memory_bytes();
  const MemoryPlan plan = plan_memory(config, available, n, m);
  result.edge_list_kept = plan.edge_list_kept;
  result.adjacency_compressed = plan.compressed;
  result.estimated_peak_bytes = plan.estimated_peak_bytes;
  if (available && result.estimated_peak_bytes > *available && !config.force) {
    const std::string graph = graph_in_messages(config, n, m);
    const std::string hint = config.input && !config.input->relabel
                                 ? "use --relabel if its ids are sparse, more nodes, or --force to try anyway"
                                 : "use more nodes, or --force to try anyway";
    throw_usage_error(graph + " needs about " + format_bytes(result.estimated_peak_bytes) + " but only " +
                      format_bytes(*available) + " is available (" + hint + ")");
  }
}

// The time the generator spends producing tuples inside kernel 1 when the list is not
// held, per thread (one padded slot each), so that kernel 1's time leaves it out as
// Graph500 leaves out generation. Kernel 1's passes split the tuples evenly over the
// threads, so the mean over threads is the wall time they spent producing.
class ProductionTimer {
 public:
  ProductionTimer() : slots_(static_cast<std::size_t>(omp_get_max_threads())) {}
  void add(double seconds) {
    slots_[static_cast<std::size_t>(omp_get_thread_num()) % slots_.size()].seconds += seconds;
  }
  [[nodiscard]] double mean_s() const {
    double sum = 0;
    for (const Slot& slot : slots_) sum += slot.seconds;
    return sum / static_cast<double>(slots_.size());
  }

 private:
  struct alignas(64) Slot {
    double seconds = 0;
  };
  std::vector<Slot> slots_;
};

// Kernel 1 in degree order, into plain or compressed lists: on the device backends'
// target where they search it (32-bit plain lists; `on_target`: its report, the lists left
// there among it), else on the CPU. With `weights`, plain 32-bit lists get their SSSP weights
// placed with the entries (on the CPU: SSSP runs there).
template <class Graph>
Graph build_graph(const RunConfig& config, const InputEdges& input, LargeArray<float>* weights,
                  std::optional<DeviceKernel1Report>& on_target) {
  using V = typename Graph::Vertex;
  if constexpr (std::is_same_v<Graph, Csr<std::uint32_t>>) {
    if (config.backend != Backend::kCpu && weights == nullptr) {
      on_target.emplace();
      return build_csr_on_target(config.backend, input, config.force, *on_target, true);
    }
  }
  if constexpr (std::is_same_v<Graph, Csr<V>>) {
    return build_csr<V>(input, CsrOrder::kDegree, weights);
  } else {
    return build_compressed_csr<V>(input, CsrOrder::kDegree);
  }
}

// Kernel 1's tuples: the kept list, or the generator's list produced again in its
// cheapest order (kernel 1 does not depend on the tuples' order), with the time spent
// producing them noted in `production`; with their weights where SSSP runs.
InputEdges kernel1_input(const RunConfig& config, const PackedEdgeList& edges, const LargeArray<float>& tuple_weights,
                         const std::optional<InputEdges>& produced, bool kept, std::uint64_t num_vertices,
                         ProductionTimer& production) {
  InputEdges input = kept ? InputEdges(edges, num_vertices)
                          : InputEdges(num_vertices, produced->size(),
                                       [&produced, &production](std::uint64_t first, std::span<Edge> out) {
                                         const Stopwatch produce;
                                         produced->read(first, out);
                                         production.add(produce.elapsed_s());
                                       });
  if (config.kernels.sssp && kept) input.attach_weights(tuple_weights.data());
  if (config.kernels.sssp && !kept) {
    input.attach_weights([&produced, &production](std::uint64_t first, std::span<float> out) {
      const Stopwatch produce;
      produced->read_weights(first, out);
      production.add(produce.elapsed_s());
    });
  }
  return input;
}

// The search keys: --root's (each a vertex with edges), or drawn from the vertices with
// edges.
template <class Graph>
std::vector<std::uint64_t> search_keys(const RunConfig& config, const Graph& graph,
                                       const std::vector<std::uint64_t>& given_roots, const Progress& progress) {
  std::uint64_t eligible = 0;
  const auto n = static_cast<std::int64_t>(graph.num_vertices());
#pragma omp parallel for reduction(+ : eligible)
  for (std::int64_t v = 0; v < n; ++v) eligible += graph.degree(static_cast<std::uint64_t>(v)) > 0 ? 1 : 0;
  const auto has_edges = [&](std::uint64_t v) { return graph.degree(graph.internal_id(v)) > 0; };
  std::vector<std::uint64_t> roots = given_roots;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    // Named as the user wrote it (a file's own id: 1-based in Matrix Market, sparse under
    // --relabel), not by the list's id it maps to.
    const std::string named = std::to_string(i < config.roots.size() ? config.roots[i] : roots[i]);
    if (roots[i] >= graph.num_vertices()) throw_usage_error("--root " + named + " is not a vertex of the graph");
    if (!has_edges(roots[i])) {
      throw_usage_error("--root " + named + " has no edges (a search from it traverses none)");
    }
  }
  if (roots.empty()) {
    const std::uint64_t count = roots_to_draw(config, eligible);
    if (count < config.num_roots) progress.phase(fewer_search_keys(count, config.num_roots));
    roots = sample_search_roots(graph.num_vertices(), eligible, count, config.graph.seed, has_edges);
  }
  return roots;
}

// A tree's traversed edges and reached vertices.
template <class Graph>
TreeCounts count_tree(const Graph& graph, std::span<const std::int64_t> parent) {
  std::uint64_t reached = 0;
  const auto n = static_cast<std::int64_t>(parent.size());
#pragma omp parallel for reduction(+ : reached)
  for (std::int64_t v = 0; v < n; ++v) reached += parent[static_cast<std::size_t>(v)] >= 0 ? 1 : 0;
  return TreeCounts{count_traversed_edges(graph, parent), reached};
}

// One process: a search is all local work, and nothing travels.
PhaseBreakdown one_rank_phases(const SearchResult& search, PhaseMetrics metrics = {}) {
  metrics.add_time(Phase::kLocalExpansion, search.time_s);
  metrics.add_time(Phase::kValidation, search.validate_time_s);
  return PhaseBreakdown::of_one_rank(metrics);
}

// The BFS search loop's hooks over a search: search, count, validate, hand the first
// tree over, clear it and book the search's phases, a device's copies included: during
// the search, and the tree coming back ("other").
template <class Graph>
SearchBackend bfs_search_backend(const RunConfig& config, const Graph& graph, BfsSearch& search,
                                 const InputEdges& input, const FirstTreeHook& first_tree,
                                 std::span<const std::int64_t>& parent) {
  // The copies so far when the current search started, and when it ended.
  auto copies = std::make_shared<std::pair<HostDeviceTraffic, HostDeviceTraffic>>();
  SearchBackend backend;
  backend.before_search = [&search, copies](std::size_t) { copies->first = search.traffic(); };
  backend.search = [&config, &search](std::uint64_t root) { return search.run(root, config.bfs); };
  backend.count = [&graph, &search, &parent, copies] {
    copies->second = search.traffic();
    parent = search.parents();
    return count_tree(graph, parent);
  };
  backend.validate = [&input, &parent](std::uint64_t root) { return validate_bfs_tree(input, root, parent); };
  backend.after_search = [&first_tree, &parent](std::size_t index, const SearchResult& result) {
    if (index == 0 && first_tree) first_tree(result.root, parent);
  };
  backend.finish_search = [&search, copies](std::size_t, SearchResult& result) {
    search.clear();
    const auto& [before, after] = *copies;
    const HostDeviceTraffic done = search.traffic();
    PhaseMetrics metrics;
    metrics.add_device_copies(Phase::kLocalExpansion, after.to_device - before.to_device,
                              after.to_host - before.to_host);
    metrics.add_device_copies(Phase::kOther, done.to_device - after.to_device, done.to_host - after.to_host);
    result.phases = one_rank_phases(result, metrics);
  };
  return backend;
}

// Kernel 3 from the same keys, after every BFS (as the Graph500 reference runs them).
void run_sssp_searches(const RunConfig& config, const Csr<std::uint32_t>& graph, SsspSearch& sssp,
                       const std::vector<std::uint64_t>& roots, const InputEdges& input,
                       const FirstDistancesHook& first_distances, const Progress& progress, EnergyMeter& energy,
                       RunResult& result) {
  LargeArray<std::int64_t> parent(graph.num_vertices());
  LargeArray<float> distance(graph.num_vertices());
  const std::span<const std::int64_t> tree(parent.data(), parent.size());
  const std::span<const float> distances(distance.data(), distance.size());
  SearchBackend shortest;
  shortest.search_sssp = [&](std::uint64_t root) { return sssp.run(root, parent.span(), distance.span()); };
  shortest.count = [&] { return count_tree(graph, tree); };
  shortest.validate = [&](std::uint64_t root) { return validate_sssp_tree(input, root, tree, distances); };
  shortest.after_search = [&](std::size_t index, const SearchResult& search) {
    if (index == 0 && first_distances) first_distances(search.root, tree, distances);
  };
  shortest.finish_search = [](std::size_t, SearchResult& search) { search.phases = one_rank_phases(search); };
  shortest.energy = &energy;
  run_search_loop(config, SearchKernel::kSssp, roots, shortest, progress, result.sssp_searches);
}

// `edges`: the generated list when it is kept (else empty), and `tuple_weights` its
// weights when SSSP runs (else empty); `produced`: the generator's list produced again,
// with its weights, for the families that can (else nullopt, and the list is kept).
// `Graph`: Csr<V> or CompressedCsr<V> (--adjacency), which the device backends and
// pruning do not read (validate_config refuses them together).
// `given_roots`: --root's keys in the list's ids; `first_tree`: where the first search's
// tree goes once counted, before it is validated (empty: nowhere), and `first_distances`
// the first SSSP's.
template <class Graph>
void run_searches(const RunConfig& config, PackedEdgeList edges, const LargeArray<float>& tuple_weights,
                  const std::optional<InputEdges>& produced, const std::vector<std::uint64_t>& given_roots,
                  const FirstTreeHook& first_tree, const FirstDistancesHook& first_distances, const Progress& progress,
                  EnergyMeter& energy, RunResult& result) {
  using V = typename Graph::Vertex;
  constexpr bool kPlain = std::is_same_v<Graph, Csr<V>>;
  constexpr bool kWeighted = kPlain && std::is_same_v<V, std::uint32_t>;
  const bool kept = result.edge_list_kept;
  const std::string lists = kPlain ? "" : " in compressed lists";
  progress.phase(kept ? "kernel 1: building the graph" + lists
                      : "kernel 1: building the graph" + lists +
                            " from tuples the generator produces as it goes (the edge list is not held)");
  if (config.kernels.sssp && !kWeighted) {
    throw_usage_error("--kernels sssp takes graphs of fewer than 2^32 vertices on plain lists");
  }
  ProductionTimer production;
  const InputEdges tuples =
      kernel1_input(config, edges, tuple_weights, produced, kept, result.num_vertices, production);
  const double device_open_s = open_device(config.backend, 0);
  const Stopwatch clock;
  // Kernel 1: the lists, SSSP's weights beside them (placed with the entries) and its
  // workspace, and the search's own structures (the peeled forest, hubs, the edgeless
  // bitmap).
  LargeArray<float> list_weights;
  std::optional<DeviceKernel1Report> on_target;
  const Graph graph =
      build_graph<Graph>(config, tuples, kWeighted && config.kernels.sssp ? &list_weights : nullptr, on_target);
  SearchFactory factory = search_factory(config);
  if (on_target) factory.device_lists = std::move(on_target->resident);
  std::unique_ptr<SsspSearch> sssp;
  if constexpr (kWeighted) {
    if (config.kernels.sssp) sssp = factory.sssp(graph, std::move(list_weights));
  }
  announce_search_setup(config, progress);
  std::unique_ptr<BfsSearch> search;
  PeeledForest<V> forest;
  if constexpr (kPlain) {
    if (config.prune) forest = PeeledForest<V>(graph.offsets(), graph.neighbor_data(), graph.num_vertices());
    search = factory.bfs(graph, config.prune ? &forest : nullptr);
  } else {
    search = factory.bfs(graph);
  }
  result.construction_time_s = clock.elapsed_s();
  if (!kept) {
    // Producing the tuples is generation, not kernel 1, wherever it happens.
    result.generation_time_s = production.mean_s();
    result.construction_time_s = std::max(0.0, result.construction_time_s - result.generation_time_s);
  }
  energy.enter(EnergyPhase::kOther);
  result.num_graph_edges = graph.num_directed_edges() / 2;
  result.adjacency_bytes = graph.adjacency_bytes();
  // Without the list, the validator has the generator produce the tuples again (untimed,
  // as the list's reads are).
  InputEdges input = kept ? InputEdges(edges, result.num_vertices) : *produced;
  if (config.kernels.sssp && kept) input.attach_weights(tuple_weights.data());
  const std::vector<std::uint64_t> roots = search_keys(config, graph, given_roots, progress);

  std::span<const std::int64_t> parent;
  SearchBackend backend = bfs_search_backend(config, graph, *search, input, first_tree, parent);
  backend.energy = &energy;
  if (config.kernels.bfs) run_search_loop(config, SearchKernel::kBfs, roots, backend, progress, result.searches);
  result.device = search->device_record();
  if (result.device) result.device->open_s = device_open_s;
  if (result.device && on_target) {
    result.device->construction.to_device += on_target->copies.to_device;
    result.device->construction.to_host += on_target->copies.to_host;
    result.device->kernel1 = on_target->stages;
  }
  if constexpr (kWeighted) {
    if (sssp) run_sssp_searches(config, graph, *sssp, roots, input, first_distances, progress, energy, result);
  }
}

// What a one-process run searches: the edge list (generated and kept, or read from a
// file), SSSP's weights of its tuples, the generator's list produced again where it is
// not kept, and the search keys given.
struct GraphInput {
  PackedEdgeList edges;
  LargeArray<float> tuple_weights;  // the kept list's, for SSSP
  std::optional<InputEdges> produced;
  std::vector<std::uint64_t> roots;
};

// The run's input, with its memory check: a file's edges (`loaded`) or the generator's.
GraphInput graph_input(const RunConfig& config, std::optional<LoadedEdges> loaded, const Progress& progress,
                       RunResult& result) {
  GraphInput in;
  in.roots = config.roots;
  if (loaded) {
    result.num_vertices = loaded->num_vertices;
    result.num_input_edges = loaded->edges.size();
    check_memory(config, result.num_vertices, result.num_input_edges, result);
    result.generation_time_s = loaded->read_time_s;
    if (config.kernels.sssp) {
      // The file's weights, or drawn from the seed and each tuple's place in the file.
      in.tuple_weights = LargeArray<float>(loaded->edges.size());
      const TupleWeights draw(config.graph.seed);
      const bool own = !loaded->weights.empty();
      const auto count = static_cast<std::int64_t>(loaded->edges.size());
#pragma omp parallel for schedule(static)
      for (std::int64_t i = 0; i < count; ++i) {
        const auto at = static_cast<std::size_t>(i);
        in.tuple_weights[at] = own ? loaded->weights[at] : draw(at);
      }
      std::vector<float>().swap(loaded->weights);
    }
    in.edges = std::move(loaded->edges);
    in.roots = std::move(loaded->roots);
    return in;
  }
  const GraphSpec& spec = config.graph;
  result.num_vertices = graph_vertices(spec);
  check_memory(config, result.num_vertices, expected_graph_edges(spec), result);
  in.produced = regenerated_graph_slice(spec, 0, 1);
  if (!result.edge_list_kept) {
    result.num_input_edges = in.produced->size();
    return in;
  }
  progress.phase("generating " + describe_graph_open(spec) + ", " + std::to_string(result.threads) +
                 (result.threads == 1 ? " thread)" : " threads)"));
  const Stopwatch clock;
  in.edges = generate_graph_slice(spec, 0, 1);
  if (config.kernels.sssp) in.tuple_weights = generate_weight_slice(spec, 0, 1, in.edges);
  result.generation_time_s = clock.elapsed_s();
  result.num_input_edges = in.edges.size();
  return in;
}

// The run's phases on one process: generation, kernel 1 and its device copies, and every
// search's time, validation and copies.
PhaseMetrics run_totals(const RunResult& result) {
  PhaseMetrics totals;
  totals.add_time(Phase::kGeneration, result.generation_time_s);
  totals.add_time(Phase::kConstruction, result.construction_time_s);
  for (const SearchResult& s : result.sssp_searches) {
    totals.add_time(Phase::kLocalExpansion, s.time_s);
    totals.add_time(Phase::kValidation, s.validate_time_s);
  }
  for (const SearchResult& s : result.searches) {
    totals.add_time(Phase::kLocalExpansion, s.time_s);
    totals.add_time(Phase::kValidation, s.validate_time_s);
    for (const Phase phase : {Phase::kLocalExpansion, Phase::kOther}) {
      const PhaseSummary& p = s.phases[phase];
      totals.add_device_copies(phase, static_cast<std::uint64_t>(p.to_device_bytes.sum),
                               static_cast<std::uint64_t>(p.to_host_bytes.sum));
    }
  }
  if (result.device) {
    totals.add_device_copies(Phase::kConstruction, result.device->construction.to_device,
                             result.device->construction.to_host);
  }
  return totals;
}

}  // namespace

ResultBlock make_result_block(const RunResult& r) {
  ResultBlock b;
  // A file's or a sized generator's graph reports the scale that holds its vertices and
  // its tuples per vertex, rounded (for Kronecker both are the configured ones).
  b.scale = vertex_bits_for(r.num_vertices);
  b.edgefactor = r.num_vertices == 0 ? 0 : (r.num_input_edges + r.num_vertices / 2) / r.num_vertices;
  b.generation_time_s = r.generation_time_s;
  b.num_processes = r.num_processes;
  b.construction_time_s = r.construction_time_s;
  b.validated = r.config.validate;
  const auto kernel = [&r](const std::vector<SearchResult>& searches, EnergyPhase phase, KernelStatistics& out,
                           SummaryStatistics& nedge) {
    std::vector<double> times;
    std::vector<double> edges;
    std::vector<double> validate_times;
    for (const SearchResult& s : searches) {
      times.push_back(s.time_s);
      edges.push_back(static_cast<double>(s.traversed_edges));
      validate_times.push_back(s.validate_time_s);
    }
    out.time_s = summarize(times);
    out.teps = summarize_teps(edges, times);
    out.validate_time_s = summarize(validate_times);
    nedge = summarize(edges);
    double searching_s = 0;
    for (const double t : times) searching_s += t;
    if (r.energy.measured() && searching_s > 0) out.mean_power_w = r.energy.total(phase) / searching_s;
  };
  // Both kernels search the same keys and count the same edges; the block's nedge lines
  // are the BFS's when it ran.
  if (r.config.kernels.sssp) {
    b.num_searches = r.sssp_searches.size();
    b.sssp.emplace();
    kernel(r.sssp_searches, EnergyPhase::kSssp, *b.sssp, b.nedge);
  }
  if (r.config.kernels.bfs) {
    b.num_searches = r.searches.size();
    b.bfs.emplace();
    kernel(r.searches, EnergyPhase::kBfs, *b.bfs, b.nedge);
  }
  return b;
}

RunResult run_benchmark(const RunConfig& config) {
  if (config.input) {
    throw_usage_error("--input with --partition shared reads the file through the MPI build's reader (zbfs run)");
  }
  return run_benchmark(config, std::nullopt, {});
}

RunResult run_benchmark(const RunConfig& config, std::optional<LoadedEdges> loaded, const FirstTreeHook& first_tree,
                        const FirstDistancesHook& first_distances) {
  validate_config(config);
  if (config.threads > 0) omp_set_num_threads(config.threads);
  check_openmp_threads(static_cast<std::uint64_t>(omp_get_max_threads()));
  RunResult result;
  result.config = config;
  result.threads = omp_get_max_threads();

  const Progress progress(!config.quiet);
  // The host's counters, and the device's under --backend cuda. A file read before this
  // call counts as generation but not in its energy.
  const bool on_device = config.backend == Backend::kCuda;
  std::string energy_why;
  EnergyMeter energy = open_energy_meter(config.powercap_root, true, on_device ? device_pci_bus_id(0) : "", energy_why);
  energy.enter(EnergyPhase::kGeneration);
  GraphInput input = graph_input(config, std::move(loaded), progress, result);
  energy.enter(EnergyPhase::kConstruction);
  result.vertex_id_bits = result.num_vertices - 1 <= 0xffffffffULL ? 32 : 64;
  const auto search = [&]<class Graph>() {
    run_searches<Graph>(config, std::move(input.edges), input.tuple_weights, input.produced, input.roots, first_tree,
                        first_distances, progress, energy, result);
  };
  if (result.vertex_id_bits == 32) {
    if (result.adjacency_compressed) {
      search.template operator()<CompressedCsr<std::uint32_t>>();
    } else {
      search.template operator()<Csr<std::uint32_t>>();
    }
  } else if (result.adjacency_compressed) {
    search.template operator()<CompressedCsr<std::uint64_t>>();
  } else {
    search.template operator()<Csr<std::uint64_t>>();
  }
  energy.enter(EnergyPhase::kOther);
  result.energy = record_of(energy, on_device, energy_why);
  result.peak_rss_bytes = peak_rss_bytes();
  result.peak_share_bytes = peak_share_bytes();
  result.phases = PhaseBreakdown::of_one_rank(run_totals(result));
  result.result_block = make_result_block(result);
  return result;
}

}  // namespace zbfs
