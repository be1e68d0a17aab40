// Everything that configures one benchmark run, typed and in one place; echoed into the
// JSON record. Validation of ranges happens in validate_config(), not in the CLI layer,
// so that library users get the same checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zbfs/backend/backend.hpp"
#include "zbfs/bfs/bfs_options.hpp"
#include "zbfs/codec/codec_id.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/input/graph_format.hpp"
#include "zbfs/metrics/work_counts.hpp"
#include "zbfs/network/network_model.hpp"
#include "zbfs/output/bfs_output_format.hpp"
#include "zbfs/topology/grid_shape.hpp"
#include "zbfs/wire/column_gather.hpp"
#include "zbfs/wire/routed/route_choice.hpp"
#include "zbfs/wire/transport_kind.hpp"

namespace zbfs {

// --edge-list: whether a generated edge list stays in memory. keep: from generation
// through kernel 1 and validation (the fastest validation). regenerate: the list is never
// held whole; one process's kernel 1 reads the tuples from the generator as it goes (the
// generator's time inside kernel 1 is reported as generation) and the validator has them
// produced again; a distributed run drops each rank's slice after kernel 1 and validates
// against its share produced again. auto: keep when the run fits in memory with the list,
// else regenerate. A file's list (and rgg's) is always kept.
enum class EdgeListPolicy { kAuto, kKeep, kRegenerate };

[[nodiscard]] std::optional<EdgeListPolicy> parse_edge_list_policy(std::string_view name);
[[nodiscard]] const char* to_string(EdgeListPolicy policy);

// --adjacency: how the kernels hold their lists. plain: the fastest searches; compressed:
// byte-coded gaps in blocks (graph/gap_list.hpp), about half the bytes, decoded as the
// searches read them (one process: CompressedCsr, built in passes, so that its peak
// shrinks too; distributed: each rank's LocalCsr compressed once built, which shrinks
// what the search holds but not construction's peak); auto: one process plain when the
// run fits in memory with it, else compressed; distributed, plain. The device backends
// and --prune read plain lists.
enum class AdjacencyChoice { kAuto, kPlain, kCompressed };

[[nodiscard]] std::optional<AdjacencyChoice> parse_adjacency_choice(std::string_view name);
[[nodiscard]] const char* to_string(AdjacencyChoice choice);

// Tuples a round of kernel 1's shuffle and of distributed validation's reads takes: 2^20
// on a real rank (the round's buffers, about 120 bytes a tuple in kernel 1 and 250 in
// routed validation, fixed per rank whatever the graph), 2^14 in the simulated-cluster
// build (ZBFS_SIMGRID), where one process holds every simulated rank's round at once: at
// 256 ranks of 2^12 vertices (one round of 2^16 tuples) a validated run held 19 MB a
// rank, 8.5 MB with rounds of 2^14, 4.5 MB with 2^12. Rounds cost the simulator wall time,
// though: each is a few waves of messages that SimGrid's network solver prices together
// (2^12-tuple rounds made kernel 1 at 1,024 ranks take past 14 minutes of wall time).
#ifdef ZBFS_SIMGRID
inline constexpr std::uint64_t kTuplesPerRound = std::uint64_t{1} << 14;
#else
inline constexpr std::uint64_t kTuplesPerRound = std::uint64_t{1} << 20;
#endif

// --hypersparse: whether a distributed rank keeps its CSRs' rows with a list only, by
// position (LocalCsr::by_position, graph/row_index.hpp), and the bottom-up hubs and
// reported parents beside them: a 2D block spans sqrt(P) times more rows than the rank owns
// vertices, most of them empty at thousands of ranks. auto: each rank, each CSR, when that
// halves what the rows cost; on: always; off: never. SSSP and the device backends read
// their lists by row (auto: off there).
enum class HypersparseChoice { kAuto, kOn, kOff };

[[nodiscard]] std::optional<HypersparseChoice> parse_hypersparse_choice(std::string_view name);
[[nodiscard]] const char* to_string(HypersparseChoice choice);

// --kernels: which of Graph500's ranked kernels run on the graph: BFS (kernel 2, the
// default, as graph500_reference_bfs), SSSP (kernel 3), or both on the same weighted
// graph and the same search keys (as graph500_reference_bfs_sssp: every BFS, then every
// SSSP).
struct KernelChoice {
  bool bfs = true;
  bool sssp = false;
  [[nodiscard]] bool operator==(const KernelChoice&) const = default;
};

// "bfs", "sssp", "bfs,sssp" (either order, no repeats); nullopt for anything else.
[[nodiscard]] std::optional<KernelChoice> parse_kernel_choice(std::string_view text);
[[nodiscard]] std::string to_string(const KernelChoice& kernels);

// --weights: where a file's tuples get their SSSP weights: from the file (an edge list's
// third field, a Matrix Market file's values), or drawn uniform in [0, 1) from the seed
// and each tuple's position in the file, as a generated graph's are.
enum class TupleWeightSource { kFile, kUniform };

[[nodiscard]] std::optional<TupleWeightSource> parse_tuple_weight_source(std::string_view name);

struct RunConfig {
  // The graph: generated (--graph and its parameters, --scale, --edgefactor; --seed also
  // draws the search keys and the weights), or read from a file (--input).
  GraphSpec graph;
  std::uint64_t num_roots = 64;
  std::optional<GraphFileSpec> input;
  // --root: search keys in the graph source's ids (empty: num_roots sampled ones).
  std::vector<std::uint64_t> roots;
  // Sample fewer keys when the graph has fewer than num_roots vertices with edges (the
  // CLI sets it when --roots is not given: small graphs and files must just work).
  bool roots_at_most_eligible = false;
  // --write-levels / --write-parents: the first search's result, written by the owners.
  std::string write_levels;
  std::string write_parents;
  BfsOutputFormat write_format = BfsOutputFormat::kText;
  // --kernels, and SSSP's settings: --delta (the bucket width; unset: the kernel's default
  // from the graph's mean weight and degree) and --write-distances (the first SSSP key's
  // distances, as --write-parents writes parents).
  KernelChoice kernels;
  std::optional<TupleWeightSource> weights;  // --input with --kernels sssp; unset: the file's
  std::optional<double> delta;
  std::string write_distances;
  BfsOptions bfs;
  // --prune: forest pruning (graph/peeled_forest.hpp, bfs/distributed_forest.hpp): search
  // the 2-core and attach the trees that hang from it afterwards.
  bool prune = false;
  // --backend: the CPU kernels, or the device backend on a GPU (cuda) or through its host
  // launcher (cuda-host); the device backends run the one-process search (shared).
  Backend backend = Backend::kCpu;
  // --device-exchange: how a distributed device search's messages travel.
  DeviceExchange device_exchange = DeviceExchange::kStaged;
  // Who drives a one-process device search's levels (--level-loop; backend.hpp).
  LevelLoop level_loop = LevelLoop::kHost;
  // --gpus-per-node: the devices a node's ranks share, rank r of the node taking device
  // r % gpus; unset: every device the CUDA runtime sees (CUDA_VISIBLE_DEVICES narrows it).
  std::optional<int> gpus_per_node;
  int threads = 0;  // 0: OpenMP's default
  bool validate = true;
  EdgeListPolicy edge_list = EdgeListPolicy::kAuto;
  AdjacencyChoice adjacency = AdjacencyChoice::kAuto;
  HypersparseChoice hypersparse = HypersparseChoice::kAuto;
  bool force = false;  // run even when the memory estimate exceeds available memory
  bool quiet = false;  // no progress on stderr
  std::string json_path;
  // --powercap: where the host's RAPL energy counters are (Linux's powercap tree). The run
  // reports joules per phase and TEPS per watt where they, and under --backend cuda the
  // GPU's board counter (NVML), can be read, and says "not measured" otherwise.
  std::string powercap_root = "/sys/class/powercap";
  // Distribution over MPI ranks. shared_memory selects the single-process kernel of
  // DirectionOptimizingBfs instead (one rank only).
  bool shared_memory = false;
  Partition partition = Partition::k1D;
  std::optional<GridShape> grid;  // 2D: R x C; default the most square factorisation
  ColumnGather column_gather = ColumnGather::kAllgatherv;
  // --transport: the exchanges' rounds as matched messages or as one-sided puts.
  Transport transport = Transport::kTwoSided;
  // --overlap: top-down folds pipelined (batches leave while the expansion goes on;
  // wire/decorators/overlapped_exchanger.hpp), and --batch-bytes, a batch's raw size. Unset:
  // on wherever it applies (pipelines_folds), the default measured faster in
  // docs/performance.md.
  std::optional<bool> overlap;
  std::uint64_t batch_bytes = kDefaultBatchBytes;
  // How every frontier, predecessor and validation exchange is encoded.
  CodecChoice codec{CodecId::kNone};
  // --codec-trial: under --codec auto on measured links, time the first keys' searches
  // with the codec's paths and without, and keep the faster (driver/codec_trial.hpp).
  bool codec_trial = true;
  // --route: sparse exchanges travel along a route, as (key, value) items merged on the
  // way. The 1D update exchange then carries (vertex, parent) pairs and needs no
  // predecessor reduction; in 2D the predecessor reduction reads parents over the route
  // along the processor row; validation's lookups go over it too. None: the plain id
  // exchanges (with the predecessor reduction).
  std::optional<RouteChoice> route;
  // --dump-frontiers: each rank writes the first search's messages here (empty: none).
  std::string dump_frontiers;
  std::optional<int> fail_on_rank;  // testing aid: this rank throws at the first search
  // The network whose cost model prices every exchange (reported next to measured time).
  NetworkChoice network;
  // --time-waits: a timed barrier before every collective separates waiting for late
  // ranks (wait_s) from the collective itself (mpi_s). Costs one barrier per collective.
  bool time_waits = false;
  // --work-costs (the simulated-cluster build): the counted work's per-unit prices,
  // charged to the simulated clock (metrics/work_counts.hpp), and the file they came from.
  std::optional<WorkCosts> work_costs;
  std::string work_costs_path;
};

// The most OpenMP threads per rank zbfs starts (--threads, or OMP_NUM_THREADS).
constexpr int kMaxThreads = 4096;

// --fail-on-rank: throws the injected failure (exit status 1, this rank only) when `rank`
// is the one named; the job must then end, not hang.
void fail_if_injected(const RunConfig& config, int rank);

// Refuses an OpenMP default above kMaxThreads (OMP_NUM_THREADS=100000): libgomp crashed
// with a segmentation fault when it could not start them. `threads`: the most any rank
// would start (the same on every rank, so that every rank refuses alike).
void check_openmp_threads(std::uint64_t threads);

// Whether the run's top-down folds are pipelined: --overlap as given, or when unset, on
// for the CPU backend's two-sided MPI exchanges, direct or routed, without a codec (not
// with --dump-frontiers, which records the bulk exchanges, nor with --codec, whose
// compression favours the bulk folds' id sets, nor under --transport rma, whose rounds
// are all one-sided while pipelined batches travel as messages).
bool pipelines_folds(const RunConfig& config);

// Throws a usage error (exit status 2) for values out of range; `ranks` is the job size.
void validate_config(const RunConfig& config, int ranks = 1);

// How many search keys to draw from the graph's `eligible` vertices with edges: num_roots,
// or all of them where there are fewer and roots_at_most_eligible is set.
std::uint64_t roots_to_draw(const RunConfig& config, std::uint64_t eligible);

// The progress line for a run that draws fewer keys than num_roots.
std::string fewer_search_keys(std::uint64_t count, std::uint64_t asked);

// The grid a 2D run uses on `ranks` ranks (1D: 1 x ranks): --grid, or default_grid as
// the runner resolved it, or else the most square.
GridShape grid_for(const RunConfig& config, int ranks);

// The 2D grid without --grid. On one node, ranks x 1: a processor row of one rank has no
// fold to exchange and no target rows shared with other ranks, and the column's frontier
// gathers go through shared memory (docs/performance.md compares the grids). Across
// nodes, the most square factorisation, whose folds and gathers each span about sqrt(P)
// ranks.
GridShape default_grid(int ranks, bool one_node);

// Bytes the run needs at its peak, estimated before anything is allocated, with the
// generated edge list held or not (--edge-list) and plain or compressed lists (--adjacency).
std::uint64_t estimate_peak_memory_bytes(const RunConfig& config, bool edge_list_kept = true, bool compressed = false);
// The same for a graph of n vertices and m input edges (a file's).
std::uint64_t estimate_peak_memory_bytes(const RunConfig& config, std::uint64_t n, std::uint64_t m, bool edge_list_kept,
                                         bool compressed);

// One rank of a distributed run, by phase: what the rank holds throughout, and what kernel
// 1 (its rounds or its CSR build) and a search (the graph, the search's state and a
// validation round) add to it. The peak is the larger phase's; in bytes, as doubles
// (an input file's ids reach 2^62, where byte counts pass 2^64).
struct RankMemoryEstimate {
  double held = 0;
  double kernel1 = 0;
  double search = 0;
  // held plus the larger phase, saturated at UINT64_MAX.
  [[nodiscard]] std::uint64_t peak_bytes() const;
};
RankMemoryEstimate estimate_rank_memory(const RunConfig& config, int ranks, std::uint64_t n, std::uint64_t m);

// The peak for one rank of a distributed run on `ranks` ranks, for a graph of n vertices
// and m input edges (a generated graph's by default).
std::uint64_t estimate_rank_peak_memory_bytes(const RunConfig& config, int ranks);
std::uint64_t estimate_rank_peak_memory_bytes(const RunConfig& config, int ranks, std::uint64_t n, std::uint64_t m);

// What every run holds besides its graph (program, libraries, their first buffers), and
// what a rank of an MPI job holds more, in all and per other rank, as
// bench/memory_estimate.py measures a rank's part of the node's memory on small graphs
// (docs/scaling.md). Not its resident size, which counts every peer's MPI shared segment
// that it maps, which the node holds once.
constexpr std::uint64_t kProgramBytes = std::uint64_t{21} << 20;
constexpr double kMpiBytes = 4.0 * (1 << 20);
constexpr double kMpiBytesPerPeer = 16.0 * 1024;

// What one process holds: the generated edge list or not, plain or compressed lists, and
// the peak that comes to.
struct MemoryPlan {
  bool edge_list_kept = true;
  bool compressed = false;
  std::uint64_t estimated_peak_bytes = 0;
};

// Whether the run may hold compressed lists: the CPU kernels, unpruned.
bool compressed_adjacency_applies(const RunConfig& config);

// One process's plan. A file's and rgg's lists are always kept (nothing produces them
// again); --edge-list keep or regenerate and --adjacency plain or compressed are as given.
// What is left to auto goes, in this order of preference, to the first that fits in
// `available` bytes: plain lists with the edge list, plain without it, compressed with it,
// compressed without it (searches are fastest on plain lists, validation with the list);
// when none fits, the smallest; when memory is unknown, the first.
MemoryPlan plan_memory(const RunConfig& config, std::optional<std::uint64_t> available);
// The same for a graph of n vertices and m input edges (a file's).
MemoryPlan plan_memory(const RunConfig& config, std::optional<std::uint64_t> available, std::uint64_t n,
                       std::uint64_t m);

// The graph a memory message names, as it was asked for: "scale S" (Kronecker), "'FILE'
// (N vertices, M edges)", or "a graph of N vertices and M edges" (R-MAT, G(n, m), rgg):
// never the default scale of a graph that has none.
std::string graph_in_messages(const RunConfig& config, std::uint64_t n, std::uint64_t m);

}  // namespace zbfs
