// The calls one rank makes in a planned search (replay/search_plan.hpp), in order: the
// exchanges of StepProtocol as the direct exchanger without a codec makes them
// (wire/direct/direct_exchanger.cpp over mpi/communicator.cpp), and its counted work
// between them. Two readers walk them: the booking, which adds them up per phase as the
// ranks' communicators book them (the record's messages and wire bytes), and the trace
// writer, which writes them as SimGrid's time-independent actions. One walk feeds both,
// so that what is replayed is what is booked.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/metrics/work_counts.hpp"
#include "zbfs/replay/search_plan.hpp"

namespace zbfs {

// One peer of an exchange: its world rank, the bytes sent to it and received from it.
struct PeerBytes {
  int peer = 0;
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
};

class SearchCallVisitor {
 public:
  virtual ~SearchCallVisitor() = default;
  // A probed exchange with every other member of a group (empty pieces too).
  virtual void exchange(Phase phase, int tag, std::span<const PeerBytes> peers) = 0;
  // An allgather(v) along a group (world ranks in member order), member `me` of it, each
  // member's block of `block_bytes` (Open MPI's Bruck algorithm, as simulations run it).
  virtual void gather(Phase phase, int tag, std::span<const int> members, int me,
                      std::span<const std::uint64_t> block_bytes) = 0;
  // A route's hop among known peers (Communicator::peer_exchange): a size word to every
  // `to` peer, then the messages that are not empty (`sent` to each of `to`, `received`
  // from each of `from`).
  virtual void peer_exchange(Phase phase, int tag, std::span<const PeerBytes> to, std::span<const PeerBytes> from) = 0;
  // One step of a ring: `bytes` to `next`, the same from `previous`.
  virtual void shift(Phase phase, int tag, int next, int previous, std::uint64_t bytes) = 0;
  // A swap with one partner (an MPI_Sendrecv): `sent` to it, `received` from it.
  virtual void swap(Phase phase, int tag, int partner, std::uint64_t sent, std::uint64_t received) = 0;
  // An allreduce of `bytes` over the whole job.
  virtual void allreduce(Phase phase, std::uint64_t bytes) = 0;
  // An allreduce of `bytes` along a group (world ranks in member order), member `me` of
  // it (recursive doubling, as simulations run it).
  virtual void group_allreduce(Phase phase, int tag, std::span<const int> members, int me, std::uint64_t bytes) = 0;
  // Counted local work.
  virtual void compute(const WorkCounts& work) = 0;
};

// Walks the calls of the rank that owns `piece`.
void visit_search_calls(const SearchPlan& plan, const ReplayLayout& layout, int piece, SearchCallVisitor& visitor);

// Per phase, every rank's booked messages and bytes (sums over ranks).
struct PhaseTraffic {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
};
using SearchTraffic = std::array<PhaseTraffic, kPhaseCount>;
SearchTraffic book_search(const SearchPlan& plan, const ReplayLayout& layout);

// How a trace charges what is not a message: counted work as `compute` actions of
// seconds at the hosts' speed (when `costs` is set), and the probes of a probed exchange
// (one a peer, `probe_s` each: the simulator's price of an MPI_Iprobe, which the online
// run pays once its messages have come) as a `sleep` before the receives complete.
struct TraceCharges {
  const WorkCosts* costs = nullptr;
  double host_speed_flops = 1e9;
  double probe_s = 0;
};

// Appends the rank's actions in SimGrid's time-independent trace format (`smpirun
// -replay`: point to point on world ranks, sizes in bytes).
void append_search_trace(const SearchPlan& plan, const ReplayLayout& layout, int world_rank,
                         const TraceCharges& charges, std::string& out);

}  // namespace zbfs
