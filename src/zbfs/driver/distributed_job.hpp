// A distributed run's set-up, before kernel 1: how the job is laid out (nodes, threads,
// the hybrid grid, this rank's device), whether it fits in memory, its input graph, its
// search keys and SSSP's weights. Collective where said.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zbfs/core/large_array.hpp"
#include "zbfs/driver/progress.hpp"
#include "zbfs/driver/run_config.hpp"
#include "zbfs/driver/runner.hpp"
#include "zbfs/input/graph_reader.hpp"
#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/mpi/communicator.hpp"
#include "zbfs/topology/grid_shape.hpp"
#include "zbfs/topology/process_grid.hpp"

namespace zbfs {

// How many ranks of the job share this rank's node (collective).
int ranks_on_this_node(const Communicator& world);

// The hybrid partition's grid: nodes of --ranks-per-node consecutive ranks, or of the
// ranks that share this machine's memory when every machine has as many. Collective.
GridShape hybrid_grid_of_job(const RunConfig& config, const Communicator& world, int node_ranks);

// Without --threads or OMP_NUM_THREADS, ranks sharing a node split its cores instead of
// each starting one thread per core: oversubscribed OpenMP barriers spin for whole
// scheduler time slices.
void choose_threads(const RunConfig& config, int node_ranks);

double slowest(const Communicator& world, double seconds);

void check_memory(const RunConfig& config, const Communicator& world, int node_ranks, std::uint64_t n, std::uint64_t m,
                  RunResult& result);

// "on 4 ranks, 2 threads each", for the progress lines.
std::string job_layout(int ranks, int threads);

// The input graph: this rank's slice of a generated graph, or of a file (which is also
// where the file's errors surface, before anything else is allocated).
LoadedGraph load_graph(const RunConfig& config, const Communicator& world, int node_ranks, const Progress& progress,
                       PhaseMetrics& metrics, RunResult& result);

// The search keys: the given ones (in the source's ids) after checking that each is a
// vertex with an edge, else the Graph500 draw among the vertices with edges. `tuples`:
// each owned vertex's input tuples other than self-loops, by original offset (a vertex
// has an edge exactly when it has one).
std::vector<std::uint64_t> choose_roots(const RunConfig& config, const ProcessGrid& grid, const LoadedGraph& input,
                                        std::span<const std::uint64_t> tuples, const Progress& progress);

// This rank's device for --backend cuda, agreed on by all ranks (collective): a rank that
// has none (a node without GPUs, --gpus-per-node above what a node sees) ends the job on
// every rank with the same usage error, instead of leaving the others in a collective.
// Another backend uses none: 0, on every rank alike without a collective.
int agreed_device(const Communicator& world, Backend backend, std::optional<int> gpus_per_node);

// SSSP's weights of this rank's tuples, in the slice's order: the file's, or drawn from
// the seed and each tuple's place in the file (--weights uniform: the ranks' shares are
// the file's edges in order), or the generator's. Collective.
LargeArray<float> slice_weights(const RunConfig& config, const Communicator& world, LoadedGraph& input);

// Ranks on one node share its memory, so each may use its share of what is available.
std::optional<std::uint64_t> memory_per_rank(const RunConfig& config, int node_ranks);

// "reading g.mtx (mtx, relabelled)", for the progress lines.
std::string reading_line(const GraphFileSpec& spec);

// --root's keys (in the source's ids) in the graph's internal ids; a key that is no
// vertex is refused. Collective.
std::vector<std::uint64_t> given_roots(const RunConfig& config, const Communicator& world, const VertexIds& ids,
                                       std::uint64_t num_vertices);

}  // namespace zbfs
