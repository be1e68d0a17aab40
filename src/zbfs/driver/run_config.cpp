#include "zbfs/driver/run_config.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zbfs/backend/cuda/device_bfs.hpp"
#include "zbfs/backend/cuda/device_kernel1.hpp"
#include "zbfs/bfs/direction_optimizing_bfs.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/packed_edge_list.hpp"
#include "zbfs/core/wording.hpp"
#include "zbfs/graph/compressed_csr_builder.hpp"
#include "zbfs/graph/csr_builder.hpp"
#include "zbfs/graph/list_placement.hpp"
#include "zbfs/graph/list_weights.hpp"
#include "zbfs/graph/local_csr.hpp"
#include "zbfs/graph/peeled_forest.hpp"
#include "zbfs/sssp/delta_stepping.hpp"

namespace zbfs {

std::optional<KernelChoice> parse_kernel_choice(std::string_view text) {
  KernelChoice out{false, false};
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view name = text.substr(start, comma - start);
    bool& chosen = name == "bfs" ? out.bfs : out.sssp;
    if ((name != "bfs" && name != "sssp") || chosen) return std::nullopt;
    chosen = true;
    start = comma + 1;
  }
  return out;
}

std::optional<TupleWeightSource> parse_tuple_weight_source(std::string_view name) {
  if (name == "file") return TupleWeightSource::kFile;
  if (name == "uniform") return TupleWeightSource::kUniform;
  return std::nullopt;
}

std::string to_string(const KernelChoice& kernels) {
  if (kernels.bfs && kernels.sssp) return "bfs,sssp";
  return kernels.sssp ? "sssp" : "bfs";
}

// The simulated-cluster build (ZBFS_SIMGRID): SMPI runs the ranks as coroutines of one
// simulator thread, so a rank's OpenMP team would run outside the simulated clock and a
// rank runs one thread; a GPU has no simulated counterpart.
void validate_simulated_config([[maybe_unused]] const RunConfig& c) {
#ifdef ZBFS_SIMGRID
  if (c.threads > 1) {
    throw_usage_error("--threads " + std::to_string(c.threads) +
                      ": a simulated rank runs one thread (SMPI build); leave it out or give 1");
  }
  if (c.backend != Backend::kCpu) {
    throw_usage_error("--backend " + std::string(to_string(c.backend)) +
                      ": the simulated-cluster (SMPI) build has the CPU backend only");
  }
  if (c.work_costs && c.shared_memory) {
    throw_usage_error("--work-costs prices the distributed search's counted work; use --partition 1d, 2d or hybrid");
  }
#else
  if (c.work_costs) {
    throw_usage_error(
        "--work-costs charges counted work to a simulated clock: it needs the simulated-cluster build (make smpi; "
        "zbfs-lab simulate --compute counted)");
  }
#endif
}

namespace {

// The graph, the search keys, and what they are held in.
void validate_graph_and_keys(const RunConfig& c) {
  if (!c.input) validate_graph_spec(c.graph);  // scale, edgefactor and the family's parameters
  if (c.num_roots < 1) throw_usage_error("--roots must be at least 1");
  if (!c.roots.empty() && c.num_roots != c.roots.size())
    throw_usage_error("--roots and --root disagree: --root names the search keys");
  if (c.edge_list == EdgeListPolicy::kRegenerate && (c.input || c.graph.kind == GraphKind::kRgg)) {
    throw_usage_error(std::string("--edge-list regenerate needs a generator that produces edges by index (") +
                      (c.input ? "a file's list is read once" : "rgg generates whole cells") + "); leave it out");
  }
  if (c.adjacency == AdjacencyChoice::kCompressed && c.kernels.sssp) {
    throw_usage_error("--kernels sssp reads plain lists (their weights sit beside them); leave out --adjacency");
  }
  if (c.adjacency == AdjacencyChoice::kCompressed && !compressed_adjacency_applies(c)) {
    throw_usage_error(
        std::string("--adjacency compressed runs the CPU kernels unpruned (") +
        (c.backend != Backend::kCpu ? "the device backends read plain lists" : "--prune peels plain lists") + ")");
  }
  if (c.hypersparse == HypersparseChoice::kOn && (c.kernels.sssp || c.backend != Backend::kCpu)) {
    throw_usage_error(std::string("--hypersparse on: ") +
                      (c.kernels.sssp ? "--kernels sssp reads its" : "the device backends read their") +
                      " lists by row; leave out --hypersparse");
  }
  if (!c.input && !c.roots_at_most_eligible && c.num_roots > graph_vertices(c.graph)) {
    throw_usage_error("--roots " + std::to_string(c.num_roots) + " exceeds the " +
                      std::to_string(graph_vertices(c.graph)) + " vertices of the graph");
  }
}

// A device backend, and how its messages travel.
void validate_backend(const RunConfig& c) {
  if (c.backend != Backend::kCpu) {
    // One process checks its device now; a job's ranks agree on theirs when they open them.
    if (c.shared_memory) {
      require_backend(c.backend);
    } else {
      require_backend_built(c.backend);
    }
    const std::string flag = "--backend " + std::string(to_string(c.backend));
    if (c.graph.scale > 32) throw_usage_error(flag + " numbers vertices in 32 bits: scale 32 at most");
  }
  if (c.level_loop != LevelLoop::kHost) {
    const std::string flag = "--level-loop " + std::string(to_string(c.level_loop));
    if (c.backend == Backend::kCpu) throw_usage_error(flag + " needs --backend cuda or cuda-host");
    if (!c.shared_memory) {
      throw_usage_error(flag + " drives a one-process device search: a distributed search's levels meet in the " +
                        "host's collectives (--partition shared)");
    }
  }
  if (c.device_exchange != DeviceExchange::kStaged) {
    const std::string flag = "--device-exchange " + std::string(to_string(c.device_exchange));
    require_device_exchange(c.device_exchange, c.backend);
    if (c.shared_memory) {
      throw_usage_error(flag + " moves a distributed search's messages: use --partition 1d, 2d or hybrid");
    }
    if (c.codec.is_auto() || (c.codec.fixed != CodecId::kNone && c.codec.fixed != CodecId::kBitpack)) {
      throw_usage_error(flag + " sends ids as they are (--codec none) or as the device's bitpack frames " +
                        "(--codec bitpack)");
    }
  }
}

// Which kernels run, and their parameters.
void validate_kernels(const RunConfig& c) {
  if (!c.kernels.bfs && !c.kernels.sssp) throw_usage_error("--kernels must name bfs, sssp or both");
  if (c.kernels.sssp) {
    if (c.backend != Backend::kCpu) throw_usage_error("--kernels sssp runs on the CPU backend");
    if (graph_vertices(c.graph) > 0xffffffffULL) {
      throw_usage_error("--kernels sssp numbers vertices in 32 bits: fewer than 2^32 vertices (scale 31 at most)");
    }
  }
  if (c.weights && !c.input) {
    throw_usage_error("--weights applies to --input (a generated graph draws its tuples' weights)");
  }
  if (c.weights && !c.kernels.sssp) throw_usage_error("--weights gives SSSP its weights: add --kernels sssp");
  if (c.delta && (!(*c.delta > 0) || !std::isfinite(*c.delta))) throw_usage_error("--delta must be a positive number");
  if (c.delta && !c.kernels.sssp) throw_usage_error("--delta sets SSSP's bucket width: add --kernels sssp");
  if (!c.write_distances.empty() && !c.kernels.sssp) {
    throw_usage_error("--write-distances writes an SSSP tree's distances: add --kernels sssp");
  }
  // Levels and parents are a BFS tree's: under --kernels sssp alone they were never written.
  struct TreeFile {
    const char* flag;
    const std::string& path;
    const char* what;
  };
  for (const TreeFile& f : {TreeFile{"--write-levels", c.write_levels, "levels"},
                            TreeFile{"--write-parents", c.write_parents, "parents"}}) {
    if (!f.path.empty() && !c.kernels.bfs) {
      throw_usage_error(std::string(f.flag) + " writes a BFS tree's " + f.what +
                        ": --kernels sssp runs no BFS (use --kernels bfs,sssp)");
    }
  }
  if (c.gpus_per_node && *c.gpus_per_node < 1) throw_usage_error("--gpus-per-node must be at least 1");
  if (c.gpus_per_node && c.backend != Backend::kCuda) throw_usage_error("--gpus-per-node needs --backend cuda");
  if (!(c.bfs.alpha > 0) || !std::isfinite(c.bfs.alpha)) throw_usage_error("--alpha must be a positive number");
  if (!(c.bfs.beta > 0) || !std::isfinite(c.bfs.beta)) throw_usage_error("--beta must be a positive number");
  if (c.threads < 0 || c.threads > kMaxThreads) {
    throw_usage_error("--threads must be in [0, " + std::to_string(kMaxThreads) + "]");
  }
}

// How the job's ranks are laid out, and its network.
void validate_layout(const RunConfig& c, int ranks) {
  validate_simulated_config(c);
  if (c.shared_memory && ranks != 1) {
    throw_usage_error("--partition shared runs on one process, but the job has " + std::to_string(ranks) +
                      " ranks (use 1d or 2d)");
  }
  if (c.grid && c.partition != Partition::k2D) throw_usage_error("--grid needs --partition 2d");
  if (c.partition == Partition::kHybrid && c.network.ranks_per_node && *c.network.ranks_per_node > 0 &&
      ranks % *c.network.ranks_per_node != 0) {
    throw_usage_error("--partition hybrid needs whole nodes: --ranks-per-node " +
                      std::to_string(*c.network.ranks_per_node) + " does not divide the job's " +
                      counted(ranks, "rank"));
  }
  if (c.grid && c.grid->size() != ranks) {
    throw_usage_error("--grid " + c.grid->to_string() + " has " + counted(c.grid->size(), "rank") +
                      " but the job has " + std::to_string(ranks));
  }
  validate_network_choice(c.network);
}

// How the exchanges travel: options of the MPI exchanges only.
void validate_exchanges(const RunConfig& c, int ranks) {
  if (c.shared_memory && !c.dump_frontiers.empty()) {
    throw_usage_error("--dump-frontiers records MPI exchanges; use --partition 1d or 2d");
  }
  if (c.shared_memory && c.codec.fixed != CodecId::kNone) {
    // Nothing is exchanged by the single-process kernel; say so rather than ignore it.
    throw_usage_error("--codec applies to MPI exchanges; use --partition 1d or 2d");
  }
  if (c.route && c.shared_memory) throw_usage_error("--route applies to MPI exchanges; use --partition 1d or 2d");
  if (c.transport != Transport::kTwoSided && c.shared_memory) {
    throw_usage_error("--transport applies to MPI exchanges; use --partition 1d, 2d or hybrid");
  }
  if (c.overlap.value_or(false)) {
    if (c.shared_memory) throw_usage_error("--overlap on applies to MPI exchanges; use --partition 1d, 2d or hybrid");
    if (c.backend != Backend::kCpu) {
      throw_usage_error("--overlap on pipelines the CPU backend's top-down steps; use --backend cpu or --overlap off");
    }
    if (!c.dump_frontiers.empty()) {
      throw_usage_error("--dump-frontiers records the bulk exchanges' messages; use --overlap off");
    }
  }
  if (c.batch_bytes < kMinBatchBytes || c.batch_bytes > kMaxBatchBytes) {
    throw_usage_error("--batch-bytes must be between " + std::to_string(kMinBatchBytes) + " and " +
                      std::to_string(kMaxBatchBytes) + ", got " + std::to_string(c.batch_bytes));
  }
  if (c.route && c.route->kind == RouteKind::kGridK && !c.route->dims.empty()) {
    const long long product = RoutePlan::dims_product(c.route->dims);
    if (product != ranks) {
      std::string got = std::to_string(product);
      if (product > RoutePlan::kMaxDimsProduct) got = "more than " + std::to_string(RoutePlan::kMaxDimsProduct);
      throw_usage_error("--route-dims " + RoutePlan::describe_dims(c.route->dims) + " multiply to " + got +
                        ", not to the job's " + counted(ranks, "rank"));
    }
  }
  if (c.fail_on_rank && (*c.fail_on_rank < 0 || *c.fail_on_rank >= ranks)) {
    throw_usage_error("--fail-on-rank must name a rank of the job: " +
                      (ranks == 1 ? std::string("0") : "0 to " + std::to_string(ranks - 1)) + ", got " +
                      std::to_string(*c.fail_on_rank));
  }
}

}  // namespace

void validate_config(const RunConfig& c, int ranks) {
  validate_graph_and_keys(c);
  validate_backend(c);
  validate_kernels(c);
  validate_layout(c, ranks);
  validate_exchanges(c, ranks);
}

bool pipelines_folds(const RunConfig& config) {
  if (config.overlap) return *config.overlap;
  // With a codec the bulk folds win on the slow links codecs are for: their sorted id
  // sets compress to a fifth, the pipelined (vertex, parent) words to half at best
  // (docs/performance.md).
  const bool coded = config.codec.is_auto() || config.codec.fixed != CodecId::kNone;
  // Under --transport rma every round is one-sided; pipelined batches are messages.
  return !config.shared_memory && config.backend == Backend::kCpu && config.dump_frontiers.empty() && !coded &&
         config.transport == Transport::kTwoSided;
}

void fail_if_injected(const RunConfig& config, int rank) {
  if (config.fail_on_rank == rank) {
    throw Error(ExitCode::kFailure, "injected failure on rank " + std::to_string(rank) + " (--fail-on-rank)");
  }
}

void check_openmp_threads(std::uint64_t threads) {
  if (threads > static_cast<std::uint64_t>(kMaxThreads)) {
    throw_usage_error("OpenMP would start " + std::to_string(threads) + " threads per rank (OMP_NUM_THREADS); zbfs " +
                      "allows at most " + std::to_string(kMaxThreads) + " (set --threads)");
  }
}

std::uint64_t roots_to_draw(const RunConfig& config, std::uint64_t eligible) {
  return config.roots_at_most_eligible ? std::min(config.num_roots, eligible) : config.num_roots;
}

std::string fewer_search_keys(std::uint64_t count, std::uint64_t asked) {
  return counted(static_cast<long long>(count), "search key") + ", not " + std::to_string(asked) + ": the graph has " +
         "only " + counted(static_cast<long long>(count), "vertex", "vertices") + " with edges";
}

GridShape default_grid(int ranks, bool one_node) { return one_node ? GridShape{ranks, 1} : most_square_grid(ranks); }

GridShape grid_for(const RunConfig& c, int ranks) {
  if (c.partition == Partition::k1D) return {1, ranks};
  return c.grid ? *c.grid : most_square_grid(ranks);
}

std::optional<EdgeListPolicy> parse_edge_list_policy(std::string_view name) {
  if (name == "auto") return EdgeListPolicy::kAuto;
  if (name == "keep") return EdgeListPolicy::kKeep;
  if (name == "regenerate") return EdgeListPolicy::kRegenerate;
  return std::nullopt;
}

const char* to_string(EdgeListPolicy policy) {
  switch (policy) {
    case EdgeListPolicy::kAuto: return "auto";
    case EdgeListPolicy::kKeep: return "keep";
    case EdgeListPolicy::kRegenerate: return "regenerate";
  }
  return "?";
}

std::optional<AdjacencyChoice> parse_adjacency_choice(std::string_view name) {
  if (name == "auto") return AdjacencyChoice::kAuto;
  if (name == "plain") return AdjacencyChoice::kPlain;
  if (name == "compressed") return AdjacencyChoice::kCompressed;
  return std::nullopt;
}

const char* to_string(AdjacencyChoice choice) {
  switch (choice) {
    case AdjacencyChoice::kAuto: return "auto";
    case AdjacencyChoice::kPlain: return "plain";
    case AdjacencyChoice::kCompressed: return "compressed";
  }
  return "?";
}

std::optional<HypersparseChoice> parse_hypersparse_choice(std::string_view name) {
  if (name == "auto") return HypersparseChoice::kAuto;
  if (name == "on") return HypersparseChoice::kOn;
  if (name == "off") return HypersparseChoice::kOff;
  return std::nullopt;
}

const char* to_string(HypersparseChoice choice) {
  switch (choice) {
    case HypersparseChoice::kAuto: return "auto";
    case HypersparseChoice::kOn: return "on";
    case HypersparseChoice::kOff: return "off";
  }
  return "?";
}

bool compressed_adjacency_applies(const RunConfig& c) {
  return c.backend == Backend::kCpu && !c.prune && !c.kernels.sssp;
}

MemoryPlan plan_memory(const RunConfig& c, std::optional<std::uint64_t> available) {
  const GraphSpec& spec = c.graph;
  return plan_memory(c, available, graph_vertices(spec), expected_graph_edges(spec));
}

MemoryPlan plan_memory(const RunConfig& c, std::optional<std::uint64_t> available, std::uint64_t n, std::uint64_t m) {
  const bool fixed_list = c.input || c.graph.kind == GraphKind::kRgg || c.edge_list != EdgeListPolicy::kAuto;
  const bool list_kept = c.input || c.graph.kind == GraphKind::kRgg || c.edge_list != EdgeListPolicy::kRegenerate;
  std::vector<MemoryPlan> candidates;
  // auto compresses one process's lists only: a distributed kernel 1 peaks before its
  // lists are compressed.
  const bool may_compress =
      compressed_adjacency_applies(c) &&
      (c.adjacency == AdjacencyChoice::kCompressed || (c.adjacency == AdjacencyChoice::kAuto && c.shared_memory));
  for (const bool compressed : {false, true}) {
    if (compressed ? !may_compress : c.adjacency == AdjacencyChoice::kCompressed) continue;
    for (const bool kept : {true, false}) {
      if (fixed_list && kept != list_kept) continue;
      candidates.push_back({kept, compressed, estimate_peak_memory_bytes(c, n, m, kept, compressed)});
    }
  }
  if (candidates.empty()) return {list_kept, false, estimate_peak_memory_bytes(c, n, m, list_kept, false)};
  if (!available) return candidates.front();
  for (const MemoryPlan& plan : candidates) {
    if (plan.estimated_peak_bytes <= *available) return plan;
  }
  return *std::min_element(candidates.begin(), candidates.end(), [](const MemoryPlan& a, const MemoryPlan& b) {
    return a.estimated_peak_bytes < b.estimated_peak_bytes;
  });
}

std::uint64_t estimate_peak_memory_bytes(const RunConfig& c, bool edge_list_kept, bool compressed) {
  const GraphSpec& spec = c.graph;
  return estimate_peak_memory_bytes(c, graph_vertices(spec), expected_graph_edges(spec), edge_list_kept, compressed);
}

std::uint64_t estimate_peak_memory_bytes(const RunConfig& c, std::uint64_t n, std::uint64_t m, bool edge_list_kept,
                                         bool compressed) {
  const unsigned vertex_bytes = n - 1 <= 0xffffffffULL ? 4 : 8;
  // Without the list, kernel 1 and the validator hold a chunk of produced tuples per
  // thread (InputEdges::kChunk, a few tens of KiB), within the baseline.
  const std::uint64_t edges = edge_list_kept ? PackedEdgeList::bytes_needed(vertex_bits_for(n), m) : 0;
  const std::uint64_t bfs =
      n * sizeof(std::int64_t) + (vertex_bytes == 4 ? DirectionOptimizingBfs<std::uint32_t>::workspace_bytes(n)
                                                    : DirectionOptimizingBfs<std::uint64_t>::workspace_bytes(n));
  const std::uint64_t validation = c.validate ? n * sizeof(std::int32_t) + n / 8 : 0;
  // SSSP: the kept list's weights, the lists' weights (at most two entries a tuple; kernel
  // 1 places them with the entries, its round buffers a float beside each entry), the
  // kernel's workspace, its tree and distances, and the validator's second bitmap.
  const std::uint64_t sssp = !c.kernels.sssp
                                 ? 0
                                 : (edge_list_kept ? 4 * m : 0) + list_weight_bytes(2 * m) +
                                       weighted_placement_buffer_bytes(n, m) +
                                       DeltaStepping::workspace_bytes(n, 2 * m) + 12 * n + (c.validate ? n / 8 : 0);
  if (compressed) {
    // The build's peak (its last pass) is over before the search's workspace is made.
    const bool skewed = !c.input && (c.graph.kind == GraphKind::kKronecker || c.graph.kind == GraphKind::kRmat);
    const double per_entry = compressed_bytes_per_entry(n, m, skewed);
    const std::uint64_t build = compressed_csr_build_peak_bytes(n, m, vertex_bytes, per_entry, CsrOrder::kDegree);
    const std::uint64_t searching =
        compressed_csr_bytes(n, m, vertex_bytes, per_entry, CsrOrder::kDegree) + bfs + validation;
    return edges + std::max(build, searching) + kProgramBytes;
  }
  // Construction's peak bounds the final graph; BFS and validation come after it.
  const std::uint64_t graph = csr_build_peak_bytes(n, m, vertex_bytes, CsrOrder::kDegree);
  // The peeled forest, and the search's start-visited bitmap and attach tables (a parent
  // and an anchor per peeled vertex, and a vertex-indexed anchor table while they are
  // built) (--prune).
  const std::uint64_t forest_bytes =
      vertex_bytes == 4 ? PeeledForest<std::uint32_t>::peak_bytes(n) : PeeledForest<std::uint64_t>::peak_bytes(n);
  const std::uint64_t forest = !c.prune ? 0 : n / 8 + 3 * n * vertex_bytes + forest_bytes;
  // cuda-host keeps the device backend's copy of the graph in host memory (with --prune
  // its forest, every vertex counted as peeled), and before it kernel 1's target arrays
  // beside the host's lists (SSSP's lists are built on the CPU).
  const std::uint64_t kernel1_target =
      vertex_bytes == 4 && !c.kernels.sssp ? cuda_backend::kernel1_host_target_bytes(n, m) : 0;
  const std::uint64_t device_copy =
      c.backend == Backend::kCudaHost
          ? std::max(cuda_backend::DeviceBfs::memory_bytes(n, 2 * m, n, c.prune), kernel1_target)
          : 0;
  return edges + graph + bfs + forest + validation + device_copy + sssp + kProgramBytes;
}

}  // namespace zbfs

namespace zbfs {

std::uint64_t estimate_rank_peak_memory_bytes(const RunConfig& c, int ranks) {
  const GraphSpec& spec = c.graph;
  return estimate_rank_peak_memory_bytes(c, ranks, graph_vertices(spec), expected_graph_edges(spec));
}

std::uint64_t estimate_rank_peak_memory_bytes(const RunConfig& c, int ranks, std::uint64_t n, std::uint64_t m) {
  return estimate_rank_memory(c, ranks, n, m).peak_bytes();
}

std::uint64_t RankMemoryEstimate::peak_bytes() const {
  // Saturated: in integers, byte counts past 2^64 wrapped to estimates small enough to
  // pass the check.
  const double total = held + std::max(kernel1, search);
  return total >= 18446744073709551615.0 ? UINT64_MAX : static_cast<std::uint64_t>(total);
}

namespace {

// What every phase's terms of a rank's estimate are made of.
struct RankSizes {
  GridShape shape;
  double p = 0;          // ranks
  double vertices = 0;   // n
  double row_group = 0;  // vertices of the rank's row group (with padding)
  double col_group = 0;
  double id_bytes = 4;   // a group-local id
  double block = 0;      // owned vertices
  double tuples = 0;     // the rank's slice of the edge list
  double directed = 0;   // list entries the rank may receive
  double round = 0;      // tuples of a kernel-1 or validation round
  bool several = false;  // more than one rank
  bool routed = false;   // a route with relays (kernel 1's shuffle and validation's reads take it)
  bool one_d = false;
  bool sssp = false;
  bool sparse_rows = false;    // --hypersparse may keep group arrays by position
  bool sparse_always = false;  // --hypersparse on
};

RankSizes rank_sizes(const RunConfig& c, int ranks, std::uint64_t n, std::uint64_t m) {
  RankSizes s;
  s.shape = grid_for(c, ranks);
  s.p = static_cast<double>(ranks);
  s.vertices = static_cast<double>(n);
  s.row_group = s.vertices / s.shape.rows + 64 * s.p;
  s.col_group = s.vertices / s.shape.cols + 64 * s.p;
  s.id_bytes = std::max(s.row_group, s.col_group) <= 4294967296.0 ? 4 : 8;
  s.block = s.vertices / s.p + 64;
  s.tuples = static_cast<double>(m) / s.p + 1;
  s.several = ranks > 1;
  // Kronecker ids are scrambled: no rank gets much more than a tenth over its share.
  s.directed = 2 * s.tuples * (s.several ? 1.1 : 1.0);
  s.round = std::min(s.tuples, static_cast<double>(kTuplesPerRound));
  s.routed = s.several && c.route && relays(c.route->kind);
  s.one_d = c.partition == Partition::k1D;
  s.sssp = c.kernels.sssp;
  s.sparse_rows = s.several && c.hypersparse != HypersparseChoice::kOff && !s.sssp && c.backend == Backend::kCpu;
  s.sparse_always = c.hypersparse == HypersparseChoice::kOn;
  return s;
}

// An array of `bytes_per_row` over a group's `rows` rows, as a rank keeps it: by row, or
// with --hypersparse only for the rows its list entries fall in, by position beside a
// quarter byte a row of index (graph/row_index.hpp), where that halves it. How many rows
// those are is not known before kernel 1: at most as many as its entries would hit spread
// evenly (a skewed spread, as Kronecker's, hits fewer), so the estimate keeps that many.
double rows_hit(const RankSizes& s, double rows) { return rows <= 0 ? 0 : -rows * std::expm1(-s.directed / rows); }

double group_rows_bytes(const RankSizes& s, double rows, double bytes_per_row) {
  const double dense = rows * bytes_per_row;
  if (!s.sparse_rows || rows <= 0) return dense;
  const double hit = rows_hit(s, rows);
  const double sparse = hit * bytes_per_row + rows / 4;
  return s.sparse_always || sparse <= 0.5 * dense ? sparse : dense;
}

// The final graph's pieces: forward and (2D) transposed lists, the degree order.
struct GraphBytes {
  double forward = 0;
  double transposed = 0;
  double order = 0;
  double total = 0;  // with the owned degrees
};

GraphBytes graph_bytes(const RunConfig& c, const RankSizes& s) {
  GraphBytes g;
  // The degree order (graph/degree_order.hpp): both directions for the owned piece, and
  // sorted-to-original tables for the column group and, in 1D, the row group (everyone).
  g.order = (2 * s.block + s.col_group + (s.one_d ? s.row_group : 0)) * s.id_bytes;
  g.forward = group_rows_bytes(s, s.col_group, 8) + s.directed * (s.id_bytes + (s.sssp ? 4 : 0));
  g.transposed = grid_layout(c.partition) ? group_rows_bytes(s, s.row_group, 8) + s.directed * s.id_bytes : 0;
  g.total = g.forward + g.transposed + s.block * 16 + g.order;
  return g;
}

// Kernel 1 (graph/distributed_graph.cpp), at its busiest.
double kernel1_bytes(const RankSizes& s, const GraphBytes& g) {
  // The received (row, neighbour) pairs, a weight beside each with SSSP, reserved for a
  // tenth more than the rank's share of directed edges.
  const double pairs = 2 * s.tuples * 1.1 * (2 * s.id_bytes + (s.sssp ? 4 : 0));
  // A round of at most kTuplesPerRound: the decoded tuples, the packed pair words (two or
  // three a pair) going out and coming in.
  const double pair_words = (s.sssp ? 3 : 2) * 8.0;
  // Over a route (wire/routed/routed_records.hpp) a relay holds what leaves and what arrived
  // while it reads the arrivals into the next hop's: a round's words once more.
  const double rounds =
      s.round * 16 + 2 * s.round * pair_words * (1 + (s.several ? 1.1 : 1.0) + (s.routed ? 1.1 : 0.0));
  // Building the forward CSR from the pairs: offsets and cursors per row; a weighted one
  // places an entry as one word, then splits the kept ones into id and weight beside the
  // kept rows' offsets; a plain one places a range of rows at a time, consuming the pairs,
  // so that beside the whole pairs stand only the first range's lists (graph/local_csr.cpp).
  // With --hypersparse, the offsets and cursors are by position (group_rows_bytes) beside
  // a bit a row.
  const double building = (s.sssp ? s.col_group * 24 : group_rows_bytes(s, s.col_group, 16) + s.col_group / 8) +
                          (s.sssp ? s.directed * 16 : s.directed * s.id_bytes / kPlacementRanges);
  // Degrees summed over the column (twice: the tuples' with the pairs held, the lists'
  // once both CSRs are built): a word per column-group vertex, and over a column of
  // several ranks MPI's reduce-scatter holds twice that again; with --hypersparse, a
  // count by position, its (offset, count) pair going out and as many arriving, for each
  // row with a pair, beside a bit a row.
  const double degree_sums =
      s.sparse_rows ? rows_hit(s, s.col_group) * 40 + s.col_group / 4 : s.col_group * (s.shape.rows > 1 ? 24 : 8);
  return s.block * 16 + std::max({pairs + rounds, pairs + degree_sums, pairs + building + g.order,
                                  g.forward + g.transposed + g.order + degree_sums});
}

// A search's state: BFS, --prune's forest and SSSP.
double search_state_bytes(const RunConfig& c, const RankSizes& s) {
  // BFS: parent, sorted parent (bfs/sorted_parents.hpp), winner and three bitmaps per
  // owned vertex; sent flags and parents per row-group vertex (the parents by position
  // with --hypersparse, group_rows_bytes); bottom-up copies of the
  // gathered bitmaps, their masks and scratch (four bitmaps per group at most).
  // Bottom-up hubs: two ids (sorted and original) and one row bit per target vertex (owned
  // in 1D, the row group in 2D, by position as the lists' offsets), and, while they are
  // built, a degree byte per source vertex
  // (all in 1D, a group in 2D); and one row bit per top-down source vertex (owned in 1D,
  // the column group in 2D).
  const double hubs = (s.one_d ? s.block * 2 * s.id_bytes : group_rows_bytes(s, s.row_group, 2 * s.id_bytes)) +
                      (s.one_d ? s.block : s.row_group) / 8.0 + (s.one_d ? s.block : s.col_group) / 8.0 +
                      (s.one_d ? s.vertices : std::max(s.row_group, s.col_group));
  const double bfs = s.block * (8 + 8 + 4 + 1) + group_rows_bytes(s, s.row_group, s.id_bytes) + s.row_group +
                     4 * (s.row_group + s.col_group) / 8 + hubs;
  // --prune (bfs/distributed_forest.hpp): four words and a height per owned vertex, and
  // the attach step's record (two words and two ids) per peeled one, at most every owned
  // vertex (a tree's); the row group's peeled bits, the anchor mask and the gathered anchor
  // bits over the world, a core mask of the source group; while it is built, the
  // column group's neighbour XOR.
  const double forest = !c.prune
                            ? 0
                            : s.block * (4 * 8 + 1 + 16 + 2 * s.id_bytes) + s.row_group / 8 + 2 * (s.block * s.p) / 8 +
                                  std::max(s.row_group, s.col_group) / 8 + s.col_group * 8;
  // SSSP (sssp/distributed_sssp.hpp): the tree and distances, the owned state, a heavy
  // start per row, sent distances per row-group vertex, the buckets' and messages'
  // vertices, and a bucket's frontier gathered over the column, a source and its word per
  // column-group vertex at most, and a bucket's settled vertices gathered over the fold
  // when it has several members, a word per row-group vertex at most (in 1D the row
  // group is every vertex).
  const double fold_gather = s.shape.cols > 1 ? s.row_group * 8 : 0;
  const double sssp =
      !s.sssp ? 0 : s.block * (12 + 16 + 48) + s.col_group * (8 + 24) + s.row_group * (4 + 1.0 / 8) + fold_gather;
  return bfs + forest + sssp;
}

// What moves a search's messages, or checks its result, beside its state: --transport
// rma's windows, and the larger of the pipelined batches and a validation round.
double search_traffic_bytes(const RunConfig& c, const RankSizes& s) {
  // --transport rma: each group's window holds two halves, each grown to a quarter more
  // than the largest exchange a rank receives (mpi/rma_exchange.hpp): a level's reports
  // or its predecessor reduction (two words per owned vertex at most), or a validation
  // round (about four words per edge of a round of kTuplesPerRound). The world's window dominates.
  const double largest_receive =
      std::max(2.0 * 8 * s.block, c.validate ? 4.0 * 8 * static_cast<double>(kTuplesPerRound) : 0.0);
  const double windows = c.transport == Transport::kRma ? 2 * 1.25 * largest_receive : 0;
  // Pipelined folds (--overlap): every destination's batch filling, and as many in
  // flight (a send's buffer lives until it completes), though a direct fold never holds
  // more than a level's items: a (vertex, parent) pair per row-group vertex, or per list
  // entry of the rank, at most (1D at 128 ranks: the row group is every vertex). Along
  // a route, a bucket per next rank of each hop (at most every rank), its items held in
  // three words where the wire carries two, and others' items pass through it: a relay
  // holds at most as many again as it sends itself, so a route too is bounded by the
  // level's items, whatever P, where 2.5 x P batches would grow with it. The batches live
  // within a level and a validation round after the search: the two never meet.
  const double batch_bytes = static_cast<double>(c.batch_bytes);
  const double level_items = std::min(s.row_group, s.directed);
  const double batches = !pipelines_folds(c) ? 0
                         : c.route           ? std::min(2.5 * s.p * batch_bytes, 2.0 * 24 * level_items)
                                             : std::min(2.0 * s.p * batch_bytes, 2.0 * 16 * level_items);
  // Validation: one rank uses the one-process validator (a level and a bit per vertex);
  // several read the slice in rounds of kTuplesPerRound and ask the owners of both ends
  // (validate/distributed_validator.cpp; measured: 150 bytes a round's tuple for a BFS
  // tree, 190 for an SSSP one with its weights and distances).
  // Over a route, every rank on a request's path remembers who asked it for what, to
  // retrace the replies (wire/routed/routed_exchange.hpp): measured at 16 ranks, scale 18, 2D,
  // 85 more bytes a round's tuple over grid2's 2 hops and 104 over the hypercube's 4.
  const double routed_reads = s.routed ? 100.0 + 8.0 * c.route->plan_for(static_cast<int>(s.p)).hops() : 0.0;
  const double validation =
      !c.validate ? 0 : s.block * 9 + (s.several ? s.round * ((s.sssp ? 200 : 160) + routed_reads) : 0);
  return windows + std::max(batches, validation);
}

}  // namespace

RankMemoryEstimate estimate_rank_memory(const RunConfig& c, int ranks, std::uint64_t n, std::uint64_t m) {
  // A rank's peak is that of its busiest phase, not the sum of all: each term was checked
  // against the phase's peak resident memory (VmHWM, reset between phases) at 1, 4 and
  // 128 ranks, scales 14-20.
  const RankSizes s = rank_sizes(c, ranks, n, m);
  // Throughout: the program, what MPI holds per peer (shared-memory queues and buffers),
  // the rank's slice of the packed edge list (kept for validation) and SSSP's weight per
  // tuple beside it.
  const double held = static_cast<double>(kProgramBytes) + (s.several ? kMpiBytes : 0) + kMpiBytesPerPeer * (s.p - 1) +
                      s.tuples * PackedEdgeList::record_bytes_for(vertex_bits_for(n)) + (s.sssp ? 4 * s.tuples : 0);
  const GraphBytes graph = graph_bytes(c, s);
  // cuda-host keeps the device search's copy of the pieces and its state in host memory
  // too (backend/cuda/distributed_steps.hpp): the local graphs again, and per owned and
  // row-group vertex a few words; with --prune the forest's (heights, attach vertices,
  // the peeled vertices, every vertex counted as peeled, the peeled bits and the
  // gathered anchors' bits).
  const double device_forest = c.prune ? s.block * (9.0 + 24.0 + 0.125) + s.row_group / 8 + s.vertices / 8 : 0;
  const double device_copy = c.backend == Backend::kCudaHost
                                 ? graph.forward + graph.transposed + s.block * 40 + s.row_group * 13 + device_forest
                                 : 0;
  // cuda-host builds the lists in host memory as the target's (kernel 1 on the device, its
  // pairs held until the lists stand; SSSP's are the CPU's).
  const double device_kernel1 =
      c.backend == Backend::kCudaHost && !s.sssp
          ? static_cast<double>(cuda_backend::kernel1_local_host_target_bytes(static_cast<std::uint64_t>(s.col_group),
                                                                              static_cast<std::uint64_t>(s.directed)))
          : 0;
  return {held, kernel1_bytes(s, graph) + device_kernel1,
          graph.total + search_state_bytes(c, s) + device_copy + search_traffic_bytes(c, s)};
}

std::string graph_in_messages(const RunConfig& config, std::uint64_t n, std::uint64_t m) {
  const std::string size =
      counted(static_cast<long long>(n), "vertex", "vertices") + " and " + counted(static_cast<long long>(m), "edge");
  if (config.input) return "'" + config.input->path + "' (" + size + ")";
  if (config.graph.kind == GraphKind::kKronecker) return "scale " + std::to_string(config.graph.scale);
  return "a graph of " + size;
}

}  // namespace zbfs
