#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "flag_values.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/driver/distributed_runner.hpp"
#include "zbfs/driver/json_report.hpp"
#include "zbfs/driver/phase_table.hpp"
#include "zbfs/driver/recorded_run.hpp"
#include "zbfs/driver/result_block.hpp"
#include "zbfs/driver/run_files.hpp"
#include "zbfs/driver/run_report.hpp"
#include "zbfs/driver/runner.hpp"
#include "zbfs/driver/trace_runner.hpp"
#include "zbfs/driver/work_costs_file.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/input/graph_reader.hpp"
#include "zbfs/mpi/communicator.hpp"
#include "zbfs/output/graph_writer.hpp"
#include "zbfs/version.hpp"

namespace zbfs::cli {
namespace {

struct TextOptions {
  std::string direction = "auto";
  std::string partition = "1d";
  std::string backend = "cpu";
  std::string device_exchange = "staged";
  std::string level_loop = "host";
  std::string grid;
  std::string column_gather = "allgatherv";
  std::string transport = "two-sided";
  std::string overlap;  // empty: on where it applies
  std::string codec = "none";
  std::string codec_trial = "on";
  std::string route;
  std::string route_dims;
  bool no_dedup = false;
  bool no_validate = false;
  std::string edge_list = "auto";
  std::string adjacency = "auto";
  std::string hypersparse = "auto";
  std::string network = "measure";
  std::string network_latency;
  std::string network_bandwidth;
  std::optional<int> ranks_per_node;  // unset: the network's default layout
  std::string graph = "kronecker";
  std::string rmat;
  std::string input;
  std::string format;
  std::string write_format = "text";
  std::string kernels = "bfs";
  std::string weights;
  bool relabel = false;
  std::string work_costs;
};

// The graph generator's flags (run and generate).
void add_graph_options(CLI::App& app, RunConfig& config, TextOptions& text) {
  app.add_option("-s,--scale", config.graph.scale, "log2 of the number of vertices (1..42)")->capture_default_str();
  app.add_option("-e,--edgefactor", config.graph.edgefactor, "edges per vertex (1..1024)")->capture_default_str();
  app.add_option("--seed", config.graph.seed, "seed of the generator and of the search keys")->capture_default_str();
  app.add_option("--graph", text.graph,
                 "graph family: kronecker (Graph500), rmat (--rmat a,b,c), gnm (uniform: --vertices, --edges), rgg "
                 "(random geometric: --vertices, --radius or --degree)")
      ->check(CLI::IsMember({"kronecker", "rmat", "gnm", "rgg"}))
      ->capture_default_str();
  app.add_option("--vertices", config.graph.vertices, "gnm, rgg: number of vertices (default 2^scale)");
  app.add_option("--edges", config.graph.edges, "gnm: number of edges (default edgefactor x vertices)");
  app.add_option("--rmat", text.rmat,
                 "rmat: initiator probabilities a,b,c (d = 1 - a - b - c; default 0.45,0.15,0.15)");
  app.add_option("--radius", config.graph.radius, "rgg: connection radius in the unit square");
  app.add_option("--degree", config.graph.degree, "rgg: expected average degree (default 2 x edgefactor)");
}

// The generator's flags into config.graph (the CLI checks names; validate_config ranges).
void apply_graph_options(const TextOptions& text, RunConfig& config) {
  config.graph.kind = *parse_graph_kind(text.graph);
  if (!text.rmat.empty()) {
    if (config.graph.kind != GraphKind::kRmat) throw_usage_error("--rmat applies to --graph rmat");
    double a = 0;
    double b = 0;
    double c = 0;
    char tail = 0;
    if (std::sscanf(text.rmat.c_str(), "%lf,%lf,%lf%c", &a, &b, &c, &tail) != 3)
      throw_usage_error("--rmat must look like 0.45,0.15,0.15, got '" + text.rmat + "'");
    config.graph.a = a;
    config.graph.b = b;
    config.graph.c = c;
  }
}

std::optional<GraphFormat> format_option(const std::string& name, const char* flag) {
  if (name.empty()) return std::nullopt;
  const auto format = parse_graph_format(name);
  if (!format) throw_usage_error(std::string(flag) + " must be edgelist, mtx or binary, got '" + name + "'");
  return format;
}

// Options shared by `run` and `model` that describe a network.
void add_network_options(CLI::App& app, TextOptions& text, const std::string& default_help,
                         const std::string& ranks_per_node_help) {
  app.add_option(
         "--network", text.network,
         "network whose cost model prices the traffic: shm, 1gbe, 10gbe, ib-qdr, ib-hdr, tofu-d, nvlink" + default_help)
      ->capture_default_str();
  app.add_option("--network-latency", text.network_latency, "inter-node latency, e.g. 50us (overrides --network)");
  app.add_option("--network-bandwidth", text.network_bandwidth,
                 "inter-node bandwidth, e.g. 1gbit, 10Gbit/s, 3.2GB/s (overrides --network)");
  app.add_option("--ranks-per-node", text.ranks_per_node, ranks_per_node_help);
}

// The network flags as a choice; the name is checked later (validate_config, model_of),
// because `zbfs model` also accepts "recorded".
// Whether the command line names an option of the MPI exchanges, which only the
// distributed kernels have (so that one rank keeps them when it is asked for them).
bool asks_for_exchanges(const CLI::App& run) {
  for (const char* name : {"--grid", "--transport", "--overlap", "--batch-bytes", "--column-gather", "--codec",
                           "--codec-trial", "--route", "--route-dims", "--no-dedup", "--time-waits", "--dump-frontiers",
                           "--work-costs", "--fail-on-rank", "--device-exchange", "--gpus-per-node"}) {
    if (run.count(name) > 0) return true;
  }
  return false;
}

NetworkChoice network_choice_of(const TextOptions& text) {
  NetworkChoice choice;
  choice.name = text.network;
  if (!text.network_latency.empty()) choice.latency_s = parse_duration_s(text.network_latency, "--network-latency");
  if (!text.network_bandwidth.empty()) {
    choice.bandwidth_bytes_per_s = parse_bandwidth_bytes_per_s(text.network_bandwidth, "--network-bandwidth");
  }
  choice.ranks_per_node = text.ranks_per_node;
  return choice;
}

// The graph (generated or read) and the search keys, and where the first tree goes.
void add_input_options(CLI::App& run, RunConfig& config, TextOptions& text) {
  add_graph_options(run, config, text);
  run.add_option("--input", text.input, "read the graph from this file instead of generating one (any rank count)");
  run.add_option("--format", text.format,
                 "--input's format: edgelist (SNAP-style text), mtx (Matrix Market) or binary (zbfs convert); "
                 "default: recognised from the file's first bytes");
  run.add_flag("--relabel", text.relabel,
               "--input: number the ids that occur 0..n-1 (for sparse ids); results keep the file's ids");
  run.add_option("-r,--roots", config.num_roots,
                 "number of BFS search keys (NBFS); without it 64, or every vertex with edges when the graph has "
                 "fewer")
      ->capture_default_str();
  run.add_option("--root", config.roots,
                 "a search key, in the graph's own ids (repeatable; replaces the sampled ones)");
  run.add_option("--write-levels", config.write_levels, "write every vertex's BFS level from the first search key");
  run.add_option("--write-parents", config.write_parents, "write every vertex's BFS parent from the first search key");
}

// Which kernels search, and how.
void add_kernel_options(CLI::App& run, RunConfig& config, TextOptions& text) {
  run.add_option("--kernels", text.kernels,
                 "which Graph500 kernels run on the graph, from the same search keys: bfs, sssp (single-source "
                 "shortest paths over the tuples' weights, on every partition), or bfs,sssp (every BFS, then every "
                 "SSSP, as graph500_reference_bfs_sssp)")
      ->capture_default_str();
  run.add_option("--weights", text.weights,
                 "--input with --kernels sssp: the tuples' weights from the file (an edge list's third field, a Matrix "
                 "Market file's values; the default) or uniform (drawn in [0, 1) from the seed and each tuple's "
                 "position, as a generated graph's)")
      ->check(CLI::IsMember({"file", "uniform"}));
  run.add_option("--delta", config.delta,
                 "SSSP's bucket width (delta-stepping; edges lighter than it are relaxed within a bucket); default: "
                 "2 x the mean weight / the mean degree");
  run.add_option("--write-distances", config.write_distances,
                 "write every vertex's SSSP distance from the first search key");
  run.add_option("--write-format", text.write_format,
                 "format of --write-levels/--write-parents/--write-distances: text or binary")
      ->check(CLI::IsMember({"text", "binary"}))
      ->capture_default_str();
  run.add_option("-d,--direction", text.direction, "traversal: auto (direction-optimizing), top-down or bottom-up")
      ->check(CLI::IsMember({"auto", "top-down", "bottom-up"}))
      ->capture_default_str();
  run.add_option("--alpha", config.bfs.alpha, "go bottom-up when frontier edges > unexplored edges / alpha")
      ->capture_default_str();
  run.add_option("--beta", config.bfs.beta, "go top-down when the frontier < vertices / beta")->capture_default_str();
  run.add_option("-t,--threads", config.threads,
                 "OpenMP threads per rank, at most 4096 (0: OMP_NUM_THREADS if set, else the node's cores split "
                 "among its ranks)")
      ->capture_default_str();
  run.add_flag("--prune", config.prune,
               "forest pruning: search the graph's 2-core, then attach the trees that hang from it");
  run.add_flag("--no-validate", text.no_validate, "skip Graph500 validation of the BFS trees");
}

// What the run holds in memory, what it reports and writes.
void add_run_control_options(CLI::App& run, RunConfig& config, TextOptions& text) {
  run.add_option("--edge-list", text.edge_list,
                 "whether a generated edge list stays in memory: keep (through kernel 1 and validation), "
                 "regenerate (never whole: kernel 1 on one process reads tuples from the generator as it goes, and "
                 "validation has them produced again), or auto (keep when the run fits in memory with it)")
      ->check(CLI::IsMember({"auto", "keep", "regenerate"}))
      ->capture_default_str();
  run.add_option("--adjacency", text.adjacency,
                 "how the kernels hold their lists: plain, compressed (byte-coded gaps in blocks, about half the "
                 "memory, decoded as the searches read them; not with --prune or a device backend), or auto (one "
                 "process: plain when the run fits in memory with it, else compressed; distributed: plain)")
      ->check(CLI::IsMember({"auto", "plain", "compressed"}))
      ->capture_default_str();
  run.add_option("--hypersparse", text.hypersparse,
                 "whether an MPI rank keeps its lists' offsets (and bottom-up hubs, reported parents) only for the "
                 "rows it has lists in: on, off, or auto (each list set where that halves what its rows cost: 2D at "
                 "many ranks). The searches are the same; SSSP and the device backends keep every row")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  run.add_option("--json", config.json_path, "write a machine-readable record of the run to this file");
  run.add_option("--powercap", config.powercap_root,
                 "where the host's RAPL energy counters are (Linux's powercap tree): the run reports joules per "
                 "phase and TEPS per watt where they (and under --backend cuda the GPU's, through NVML) can be read")
      ->capture_default_str();
  run.add_flag("-q,--quiet", config.quiet, "no progress messages on stderr");
  run.add_flag("--force", config.force, "run even when the memory estimate exceeds available memory");
}

// How the graph is split over ranks and devices.
void add_layout_options(CLI::App& run, RunConfig& config, TextOptions& text) {
  run.add_option("-p,--partition", text.partition,
                 "how the graph is split over MPI ranks: 1d (vertex blocks), 2d (R x C grid of the adjacency "
                 "matrix), hybrid (2d across nodes, 1d among a node's ranks; --ranks-per-node groups them), or "
                 "shared (the single-process kernel; one rank only). Default: shared on one rank (1d when an "
                 "option of the MPI exchanges such as --codec, --route or --grid is given), 1d on more")
      ->check(CLI::IsMember({"1d", "2d", "hybrid", "shared"}));
  run.add_option("--backend", text.backend,
                 "which kernels search: cpu, cuda (the device backend, one GPU per rank; on one rank the default "
                 "partition is shared), or cuda-host (the device backend's code on the CPU, for machines without a "
                 "GPU)")
      ->check(CLI::IsMember({"cpu", "cuda", "cuda-host"}))
      ->capture_default_str();
  run.add_option("--device-exchange", text.device_exchange,
                 "how a distributed device search's messages travel: staged (through pinned host memory and the "
                 "exchanger, every codec and route), cuda-aware (device memory straight to a CUDA-aware MPI) or nccl "
                 "(device memory through NCCL); the last two send ids as they are or as bitpack frames")
      ->check(CLI::IsMember({"staged", "cuda-aware", "nccl"}))
      ->capture_default_str();
  run.add_option("--level-loop", text.level_loop,
                 "who drives a one-process device search's levels: host (reads each level's counts and decides the "
                 "direction), device (the device decides; the host enqueues a level ahead and never waits for one) or "
                 "graph (as device, each level replayed as a captured CUDA graph)")
      ->check(CLI::IsMember({"host", "device", "graph"}))
      ->capture_default_str();
  run.add_option("--gpus-per-node", config.gpus_per_node,
                 "--backend cuda: the devices a node's ranks share (rank r of a node takes device r % N; default: "
                 "every device CUDA_VISIBLE_DEVICES leaves visible)");
  run.add_option("--grid", text.grid,
                 "2D process grid RxC (default: ranks x 1 when every rank is on one node, else the most square "
                 "factorisation of the ranks)");
}

// How the exchanges travel, and what they report.
void add_exchange_options(CLI::App& run, RunConfig& config, TextOptions& text) {
  run.add_option("--transport", text.transport,
                 "how the exchanges' rounds move: two-sided (matched messages) or rma (MPI-3 one-sided puts into "
                 "windows allocated once per run)")
      ->check(CLI::IsMember({"two-sided", "rma"}))
      ->capture_default_str();
  run.add_option(
         "--overlap", text.overlap,
         "pipelined top-down folds: on (each destination's batch of vertex-parent updates leaves as soon as "
         "it fills, while the expansion goes on, and arrivals are claimed between chunks) or off (one "
         "exchange after the expansion; along a --route, relays forward batches as they arrive); default: on for the "
         "CPU backend's MPI exchanges without --codec, --dump-frontiers or --transport rma (the batches are messages), "
         "off otherwise")
      ->check(CLI::IsMember({"on", "off"}));
  run.add_option("--batch-bytes", config.batch_bytes,
                 "--overlap on: the bytes of updates a destination's batch gathers before it leaves")
      ->capture_default_str();
  run.add_option("--column-gather", text.column_gather,
                 "how the top-down frontier is gathered along a processor column: allgatherv or union "
                 "(set-union allreduce)")
      ->check(CLI::IsMember({"allgatherv", "union"}))
      ->capture_default_str();
  run.add_option(
         "--codec", text.codec,
         "how exchanges are encoded: none, varint, bitpack, pfor, streamvbyte, roaring, zstd, bitmap, rice, or auto "
         "(per message, by the cost model of this machine's codecs and the --network)")
      ->check(CLI::IsMember(
          {"none", "varint", "bitpack", "pfor", "streamvbyte", "roaring", "zstd", "bitmap", "rice", "auto"}))
      ->capture_default_str();
  run.add_option("--codec-trial", text.codec_trial,
                 "--codec auto on links the run measures: on (before the timed searches, search from the first "
                 "keys once with the codec's paths and once without, and keep the faster) or off (the codec's "
                 "paths throughout)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  run.add_option("--route", text.route,
                 "route sparse exchanges (1D updates as vertex-parent pairs, the 2D predecessor reduction, "
                 "validation lookups) with merging on the way: direct (alltoallv), sparse (no count exchange), grid2 "
                 "(two-level relay grid), gridk (k-dimensional grid, --route-dims) or hypercube (default: the plain "
                 "id exchanges)")
      ->check(CLI::IsMember({"direct", "sparse", "grid2", "gridk", "hypercube"}));
  run.add_option("--route-dims", text.route_dims,
                 "gridk's dimensions for the whole job, e.g. 4x2x2 (default: a balanced factorisation into three)");
  run.add_flag("--no-dedup", text.no_dedup, "routed exchanges keep duplicate keys instead of merging them on the way");
  run.add_flag("--time-waits", config.time_waits,
               "time a barrier before every collective, so the phase table and JSON report waiting for late ranks "
               "(wait_s) apart from time in the collective itself (mpi_s); adds one barrier per collective");
  run.add_option("--dump-frontiers", config.dump_frontiers,
                 "write the messages of the first search (before encoding) to DIR/rank-R.zbfsdump, for "
                 "bench/codec_bench");
  run.add_option("--work-costs", text.work_costs,
                 "simulated-cluster build: charge each rank's counted work to its simulated clock at the per-unit "
                 "costs in FILE (zbfs-lab calibrate writes it; zbfs-lab simulate --compute counted passes it)");
}

void add_run_options(CLI::App& run, RunConfig& config, TextOptions& text) {
  add_input_options(run, config, text);
  add_kernel_options(run, config, text);
  add_run_control_options(run, config, text);
  add_layout_options(run, config, text);
  add_exchange_options(run, config, text);
  run.add_option("--fail-on-rank", config.fail_on_rank,
                 "testing aid: make this rank fail at the first search (the job must end with an error)")
      ->group("Testing");
  add_network_options(run, text, ", or measure (a ping-pong at start-up)",
                      "consecutive ranks that share a node, in the network model (default: 1 for a preset, the real "
                      "layout for measure) and in --partition hybrid (default: the ranks that share a machine)");
}

// Completes `config` from the run options' text (zbfs run's and zbfs trace's) and checks
// it for a job of `ranks` ranks.
void finish_run_config(RunConfig& config, const TextOptions& text, const CLI::App& app, int ranks) {
  if (!text.input.empty()) {
    for (const char* flag :
         {"--scale", "--edgefactor", "--graph", "--vertices", "--edges", "--rmat", "--radius", "--degree"}) {
      if (app.count(flag) > 0) throw_usage_error(std::string(flag) + " describes a generated graph; --input reads one");
    }
    config.input = GraphFileSpec{text.input, format_option(text.format, "--format"), text.relabel, {}};
  } else if (!text.format.empty() || text.relabel) {
    throw_usage_error(std::string(text.relabel ? "--relabel" : "--format") + " needs --input");
  }
  apply_graph_options(text, config);
  if (!config.roots.empty() && app.count("--roots") == 0) config.num_roots = config.roots.size();
  config.roots_at_most_eligible = app.count("--roots") == 0;
  if (app.count("--write-format") > 0 && config.write_levels.empty() && config.write_parents.empty() &&
      config.write_distances.empty())
    throw_usage_error("--write-format needs --write-levels, --write-parents or --write-distances");
  const std::optional<KernelChoice> kernels = parse_kernel_choice(text.kernels);
  if (!kernels) throw_usage_error("--kernels must be bfs, sssp or bfs,sssp, got '" + text.kernels + "'");
  config.kernels = *kernels;
  if (!text.weights.empty()) config.weights = parse_tuple_weight_source(text.weights);
  config.write_format = *parse_bfs_output_format(text.write_format);
  config.bfs.direction = *parse_direction(text.direction);
  config.validate = !text.no_validate;
  config.edge_list = *parse_edge_list_policy(text.edge_list);
  config.adjacency = *parse_adjacency_choice(text.adjacency);
  config.hypersparse = *parse_hypersparse_choice(text.hypersparse);
  config.backend = *parse_backend(text.backend);
  config.device_exchange = *parse_device_exchange(text.device_exchange);
  config.level_loop = *parse_level_loop(text.level_loop);
  // One rank searches with the one-process kernel by default: the fastest, and it reads
  // every graph source and writes every result. An option of the MPI exchanges asks for
  // the MPI kernels (a device backend's run on one rank has none to ask for).
  const bool one_process =
      app.count("--partition") == 0 && ranks == 1 && (config.backend != Backend::kCpu || !asks_for_exchanges(app));
  const std::string partition = one_process ? std::string("shared") : text.partition;
  config.shared_memory = partition == "shared";
  if (!config.shared_memory) config.partition = *parse_partition(partition);
  config.column_gather = *parse_column_gather(text.column_gather);
  config.transport = *parse_transport(text.transport);
  if (!text.overlap.empty()) config.overlap = text.overlap == "on";
  config.codec = *parse_codec_choice(text.codec);
  config.codec_trial = text.codec_trial == "on";
  if (!text.route.empty()) {
    RouteChoice route;
    route.kind = *parse_route_kind(text.route);
    route.dedup = !text.no_dedup;
    if (!text.route_dims.empty()) {
      const auto dims = parse_route_dims(text.route_dims);
      if (!dims)
        throw_usage_error("--route-dims must look like 4x2x2 with positive sizes, got '" + text.route_dims + "'");
      route.dims = *dims;
    }
    config.route = route;
  }
  if (config.route && !text.route_dims.empty() && config.route->kind != RouteKind::kGridK) {
    throw_usage_error("--route-dims needs --route gridk");
  }
  if (!config.route && (!text.route_dims.empty() || text.no_dedup)) {
    throw_usage_error(std::string(text.no_dedup ? "--no-dedup" : "--route-dims") + " needs --route");
  }
  if (!text.grid.empty()) {
    config.grid = parse_grid_shape(text.grid);
    if (!config.grid) throw_usage_error("--grid must look like RxC with positive R and C, got '" + text.grid + "'");
  }
  config.network = network_choice_of(text);
  if (!text.work_costs.empty()) {
    config.work_costs = read_work_costs(text.work_costs);
    config.work_costs_path = text.work_costs;
  }
  validate_config(config, ranks);
}

int run_command(RunConfig config, const TextOptions& text, const CLI::App& app, int ranks) {
  const Communicator world = Communicator::world();
  finish_run_config(config, text, app, ranks);
  check_run_files(config, world);  // fail now rather than after a long run
  const RunResult result = config.shared_memory ? run_shared_benchmark(config) : run_distributed_benchmark(config);
  report_run(result, world);
  return 0;
}

struct ModelOptions {
  std::string record;
  int ranks = 0;
  std::string grid;
  std::string transport;  // empty: the recorded run's
  TextOptions text;
};

int model_command(ModelOptions options, int rank) {
  // The flags are checked before the record is read, so that a bad flag says so.
  if (options.ranks < 1) throw_usage_error("--ranks must be at least 1");
  const NetworkChoice choice = network_choice_of(options.text);
  if (choice.ranks_per_node && *choice.ranks_per_node < 1) throw_usage_error("--ranks-per-node must be at least 1");
  const RecordedRun run = read_recorded_run(options.record);
  ProjectionTarget target;
  target.ranks = options.ranks;
  if (!options.grid.empty()) {
    if (run.partition != Partition::k2D) throw_usage_error("--grid needs a recorded 2d run");
    const auto grid = parse_grid_shape(options.grid);
    if (!grid) throw_usage_error("--grid must look like RxC with positive R and C, got '" + options.grid + "'");
    target.grid = *grid;
    if (target.grid.size() != target.ranks) {
      throw_usage_error("--grid " + options.grid + " has " + std::to_string(target.grid.size()) + " ranks, not " +
                        std::to_string(target.ranks));
    }
  } else {
    switch (run.partition) {
      case Partition::k1D: target.grid = GridShape{1, target.ranks}; break;
      case Partition::k2D: target.grid = most_square_grid(target.ranks); break;
      case Partition::kHybrid: {
        const int per_node = choice.ranks_per_node.value_or(1);
        const auto grid = hybrid_grid(target.ranks, per_node);
        if (!grid) {
          throw_usage_error("a hybrid run needs whole nodes: --ranks-per-node " + std::to_string(per_node) +
                            " does not divide --ranks " + std::to_string(target.ranks));
        }
        target.grid = *grid;
        break;
      }
    }
  }
  if (choice.name == "recorded") {
    target.network = run.network;
    apply_inter_node_overrides(choice, target.network);
  } else if (choice.measure()) {
    throw_usage_error("zbfs model cannot measure a network; name a preset, 'recorded', or give figures");
  } else if (!network_preset(choice.name)) {
    std::string known;
    for (const std::string& n : network_preset_names()) known += n + ", ";
    throw_usage_error("--network: unknown network '" + choice.name + "' (known: " + known + "recorded)");
  } else {
    target.network = model_of(choice);
  }
  target.ranks_per_node = choice.ranks_per_node.value_or(1);
  target.one_sided = options.transport.empty() ? run.one_sided : options.transport == "rma";
  const Projection projection = project_run(run, target);
  if (rank == 0) std::fputs(format_projection(options.record, run, target, projection).c_str(), stdout);
  return 0;
}

struct FileOptions {
  std::string in;
  std::string out;
  std::string format;  // convert: IN's format (default: by content)
  std::string to;      // OUT's format (default: by OUT's name, else binary)
  bool quiet = false;  // no "wrote ..." line
};

GraphFormat output_format(const FileOptions& files) {
  if (const auto chosen = format_option(files.to, "--to")) return *chosen;
  return format_of_name(files.out, GraphFormat::kBinary);
}

void report_written(const Communicator& world, const FileOptions& files, GraphFormat format,
                    const GraphFileShape& shape, double seconds) {
  if (world.rank() != 0 || files.quiet) return;
  std::printf("zbfs: wrote %s (%s): %llu vertices, %llu edges, in %.3f s\n", files.out.c_str(), to_string(format),
              static_cast<unsigned long long>(shape.num_vertices), static_cast<unsigned long long>(shape.num_edges),
              seconds);
}

int generate_command(RunConfig config, const TextOptions& text, const FileOptions& files) {
  apply_graph_options(text, config);
  const GraphSpec& spec = config.graph;
  validate_graph_spec(spec);
  const GraphFormat format = output_format(files);
  const Communicator world = Communicator::world();
  require_writable_output(files.out, world);
  check_job_openmp_threads(world);
  // This rank's share: packed, unpacked (16 bytes an edge) and formatted (up to 40).
  const std::uint64_t needed = expected_graph_edges(spec) / static_cast<std::uint64_t>(world.size()) * 64;
  const auto available = available_memory_bytes();
  if (available && needed > *available) {
    throw_usage_error("writing this graph needs about " + format_bytes(needed) + " per rank, more than the " +
                      format_bytes(*available) + " available (use more ranks)");
  }
  Stopwatch clock;
  const PackedEdgeList slice = generate_graph_slice(spec, world.rank(), world.size());
  std::vector<Edge> edges(slice.size());
  for (std::uint64_t i = 0; i < slice.size(); ++i) edges[i] = slice.get(i);
  const GraphFileShape shape{graph_vertices(spec), world.allreduce(std::uint64_t{edges.size()}, ReduceOp::kSum), 0};
  write_graph_file(world, files.out, format, edges, shape);
  report_written(world, files, format, shape, world.allreduce(clock.elapsed_s(), ReduceOp::kMax));
  return 0;
}

int convert_command(const FileOptions& files) {
  const Communicator world = Communicator::world();
  const GraphFormat format = output_format(files);
  refuse_shared_paths({{"the input", files.in}, {"the output", files.out}}, world);
  require_writable_output(files.out, world);
  check_job_openmp_threads(world);
  Stopwatch clock;
  const FileEdges read = read_file_edges(
      world, GraphFileSpec{files.in, format_option(files.format, "--format"), false, available_memory_bytes()});
  const GraphFileShape shape{read.num_vertices, read.num_input_edges, read.id_base};
  write_graph_file(world, files.out, format, read.edges, shape);
  report_written(world, files, format, shape, world.allreduce(clock.elapsed_s(), ReduceOp::kMax));
  return 0;
}

// The generator's sizes hold 0 for "the default"; an explicit 0 is an error, not that.
void refuse_explicit_zero_sizes(const CLI::App& app, const RunConfig& config) {
  const GraphSpec& g = config.graph;
  if (app.count("--vertices") > 0 && g.vertices == 0) throw_usage_error("--vertices must be at least 2");
  if (app.count("--edges") > 0 && g.edges == 0) throw_usage_error("--edges must be at least 1");
  if (app.count("--radius") > 0 && g.radius == 0) throw_usage_error("--radius must be in (0, 1.414]");
  if (app.count("--degree") > 0 && g.degree == 0) throw_usage_error("--degree must be a positive number");
}

// zbfs trace: zbfs run's options, and the planned job's.
struct TraceCommand {
  RunConfig config;
  TextOptions text;
  TraceOptions options;
};

CLI::App* add_trace_command(CLI::App& app, TraceCommand& command) {
  CLI::App* trace = app.add_subcommand(
      "trace",
      "plan a P-rank job's searches on this one process and write them as SimGrid time-independent traces "
      "(smpirun -replay; zbfs-lab replay), with the searches' per-phase traffic as JSON");
  add_run_options(*trace, command.config, command.text);
  trace->add_option("-P,--ranks", command.options.ranks, "ranks of the planned job")->required();
  trace->add_option("--trace-dir", command.options.trace_dir,
                    "write the traces into this new folder (one file a rank and traces.txt); without it, the summary "
                    "only");
  trace->add_option("--host-speed", command.options.host_speed_flops,
                    "the simulated hosts' speed in flops, which turns counted work (--work-costs) into compute "
                    "actions (default: 1e9, zbfs-lab's platforms)");
  trace->add_option("--probe-cost", command.options.probe_s,
                    "seconds the simulator charges a probe, paid once a peer by each probed exchange (zbfs-lab's "
                    "smpi/iprobe; default 0)");
  return trace;
}

// One process plans; the other ranks of a launch, if any, have nothing to do.
int run_trace_command(TraceCommand& command, const CLI::App& app) {
  if (app.count("--partition") == 0) command.text.partition = "2d";
  // A trace prices counted work itself, outside any simulated clock.
  const std::string costs = std::exchange(command.text.work_costs, {});
  finish_run_config(command.config, command.text, app, command.options.ranks);
  if (!costs.empty()) {
    command.config.work_costs = read_work_costs(costs);
    command.config.work_costs_path = costs;
  }
  run_trace(command.config, command.options);
  return 0;
}

}  // namespace

int run_cli(int argc, char** argv, int rank, int ranks) {
  CLI::App app{"zbfs: Graph500 breadth-first search with compressed communication"};
  app.set_version_flag("--version", std::string("zbfs ") + kVersion);
  app.require_subcommand(1);
  RunConfig config;
  TextOptions text;
  CLI::App* run = app.add_subcommand("run", "run the Graph500 BFS benchmark and print the official result block");
  add_run_options(*run, config, text);
  ModelOptions model_options;
  model_options.text.network = "recorded";
  CLI::App* model = app.add_subcommand(
      "model",
      "project a recorded run's per-phase traffic to another rank count and network, and print the predicted "
      "breakdown");
  model->add_option("record", model_options.record, "a run's JSON record (zbfs run --json FILE)")->required();
  model->add_option("-P,--ranks", model_options.ranks, "ranks to project to")->required();
  model->add_option("--grid", model_options.grid, "2D grid RxC to project to (default: the most square)");
  add_network_options(*model, model_options.text, ", or recorded (the model the run used)",
                      "consecutive ranks that share a node in the projected job: in the network model, and for a "
                      "recorded hybrid run in its grid of nodes (default: 1)");
  model
      ->add_option("--transport", model_options.transport,
                   "how the exchanges' rounds are priced: two-sided (a latency per message) or rma (one-sided: four "
                   "latencies per round and three posted operations per piece; default: the recorded run's)")
      ->check(CLI::IsMember({"two-sided", "rma"}));
  TraceCommand trace_command;
  CLI::App* trace = add_trace_command(app, trace_command);
  RunConfig generate_config;
  TextOptions generate_text;
  FileOptions generate_files;
  CLI::App* generate = app.add_subcommand("generate", "write a generated graph to a file (binary, edgelist or mtx)");
  generate->add_option("out", generate_files.out, "the file to write")->required();
  add_graph_options(*generate, generate_config, generate_text);
  generate->add_option("--to", generate_files.to,
                       "format: binary, edgelist or mtx (default: by the name, else binary)");
  generate->add_flag("-q,--quiet", generate_files.quiet, "no 'wrote ...' line");
  FileOptions convert_files;
  CLI::App* convert = app.add_subcommand(
      "convert", "convert a graph file (edgelist, mtx) to zbfs's binary edge list, which reloads much faster");
  convert->add_option("in", convert_files.in, "the graph file to read")->required();
  convert->add_option("out", convert_files.out, "the file to write")->required();
  convert->add_option("--format", convert_files.format, "IN's format: edgelist, mtx or binary (default: by content)");
  convert->add_option("--to", convert_files.to,
                      "OUT's format: binary, edgelist or mtx (default: by the name, else binary)");
  convert->add_flag("-q,--quiet", convert_files.quiet, "no 'wrote ...' line");
  require_decimal_integers(app);
  refuse_empty_values(app);
  if (argc > 1 && argv[1][0] != '-' &&
      app.get_subcommands([&](CLI::App* sub) { return sub->get_name() == argv[1]; }).empty()) {
    throw_usage_error(std::string("unknown command '") + argv[1] +
                      "' (commands: run, model, trace, generate, convert; see 'zbfs --help')");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (rank == 0) std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::CallForVersion&) {
    if (rank == 0) std::printf("zbfs %s\n", kVersion);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    if (message.find("subcommand") != std::string::npos) message += " (see 'zbfs --help')";
    throw_usage_error(message);
  }
  if (run->parsed()) {
    refuse_explicit_zero_sizes(*run, config);
    return run_command(config, text, *run, ranks);
  }
  if (generate->parsed()) {
    refuse_explicit_zero_sizes(*generate, generate_config);
    return generate_command(generate_config, generate_text, generate_files);
  }
  if (trace->parsed()) return rank == 0 ? run_trace_command(trace_command, *trace) : 0;
  if (convert->parsed()) return convert_command(convert_files);
  if (model->parsed()) return model_command(model_options, rank);
  return 0;
}

}  // namespace zbfs::cli
