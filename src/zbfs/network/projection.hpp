// Projection of a recorded run's communication to another rank count and network: how
// zbfs plans past the machine it ran on. Every (phase, communicator, pattern) tally of
// the recording is scaled to the target grid by the law of its pattern, then priced with
// the target network for the busiest of a sample of ranks. The laws, per rank and per
// search, for a communicator of g ranks in a job of P (the graph stays the same):
//   personalised (each rank's own data to owners): bytes ~ (1/P) (g-1)/g, messages ~ g-1
//   gather (each rank receives the group's data): bytes ~ (g-1)/P,       messages = g-1 per call
//   reduce (fixed-size buffer, recursive doubling): bytes ~ ceil(log2 g), messages = ceil(log2 g) per call
//   pairwise (rounds of the set-union allreduce):   bytes like gather,    messages ~ ceil(log2 g)
// The rest of the recorded search time (its BFS time less its own modelled communication)
// is taken as work that divides perfectly over the ranks (time x P0 / P). The overlap
// term: where the recording pipelined a phase's exchanges, the share of its modelled
// communication that ran hidden under computation is taken to stay hidden at the target,
// up to the local work there is to hide under. docs/network-model.md has the
// derivation and the limits. Pure arithmetic, no MPI.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "zbfs/metrics/phase_breakdown.hpp"
#include "zbfs/network/network_model.hpp"
#include "zbfs/topology/grid_shape.hpp"

namespace zbfs {

// What a run's JSON record holds that a projection needs.
struct RecordedRun {
  int ranks = 1;
  Partition partition = Partition::k1D;
  GridShape grid;
  int scale = 0;
  double num_vertices = 0;                        // of the graph searched
  bool one_sided = false;                         // recorded with --transport rma
  NetworkModel network;                           // the model that priced it
  double searches = 0;                            // BFS searches
  double validations = 0;                         // validated searches
  double mean_traversed_edges = 0;                // per search
  double mean_bfs_time_s = 0;                     // per search
  std::array<double, kPhaseCount> max_time_s{};   // whole run, slowest rank
  std::array<double, kPhaseCount> max_model_s{};  // whole run, the run's own model
  // The share of each phase's modelled communication that ran hidden under computation
  // (pipelined folds, --overlap on: overlap_time_s over modelled_time_s, sums over ranks).
  std::array<double, kPhaseCount> hidden_share{};
  std::vector<TrafficRecord> traffic;  // summed over ranks, whole run
};

struct ProjectionTarget {
  int ranks = 1;
  GridShape grid;  // 1D: 1 x ranks
  NetworkModel network;
  int ranks_per_node = 1;
  // The rounds of pieces (personalised exchanges and gathers) travel one-sided
  // (--transport rma), priced by price_one_sided.
  bool one_sided = false;
};

struct PhaseProjection {
  Phase phase = Phase::kOther;
  bool per_search = true;       // false: once per run (generation, construction)
  double recorded_time_s = 0;   // the recording's slowest rank (per search or per run)
  double recorded_model_s = 0;  // the recording's model
  double bytes_per_rank = 0;    // projected, busiest sampled rank
  double messages_per_rank = 0;
  double model_s = 0;   // projected communication time, busiest sampled rank
  double hidden_s = 0;  // of which runs under computation, at the recorded hidden share
};

struct Projection {
  std::vector<PhaseProjection> phases;  // phases with traffic or time, in phase order
  double communication_s = 0;           // per search, the BFS phases
  double local_s = 0;                   // per search, the rest of the recorded time x P0 / P
  // Per search, the communication that runs under the local work (the phases' hidden_s,
  // at most local_s: an exchange cannot hide under more work than there is).
  double hidden_s = 0;
  double bfs_time_s = 0;  // communication + local - hidden
  double teps = 0;        // mean traversed edges / bfs_time_s
  int sampled_ranks = 0;
  std::vector<std::string> warnings;
};

// The size of the communicator `role` in `grid` (world: all ranks, row: cols, column: rows).
int group_size(CommRole role, const GridShape& grid);
// How many members of `rank`'s `role` communicator share its node when nodes hold
// `ranks_per_node` consecutive ranks (rank = row * cols + col); this rank included.
int members_on_node(CommRole role, const GridShape& grid, int rank, int ranks_per_node);

// One tally's per-rank bytes and messages scaled from group g0 in P0 ranks to g in P.
struct ScaledTraffic {
  double bytes = 0;
  double messages = 0;
};
ScaledTraffic scale_traffic(CommPattern pattern, double bytes, double messages, double calls, int g0, int p0, int g,
                            int p);

// Prices one rank's scaled traffic of one pattern in a group of g with `on_node` members
// on its node.
// The same traffic as one-sided rounds (mpi/rma_exchange.hpp): each call costs four
// latencies of the slowest link it crosses (the reservations' round trip, the puts'
// flush, the notifications) whatever the group size, and each piece three one-sided
// operations (a reservation, the put, a notification: one_sided_op_s) instead of a
// message's latency; the bytes cross at the link's bandwidth. No receiver matches
// messages, so with many peers and small pieces one-sided wins where the network does
// RDMA; over a network that carries each operation as a message it never does.
double price_one_sided(const NetworkModel& network, const ScaledTraffic& traffic, double calls, int g, int on_node);

double price_traffic(const NetworkModel& network, CommPattern pattern, const ScaledTraffic& traffic, int g,
                     int on_node);

Projection project_run(const RecordedRun& run, const ProjectionTarget& target);

}  // namespace zbfs
