// What a communicator reports of its calls, and the interface it reports them through.
// Each call's traffic is counted as this rank's sends under the textbook algorithm of the
// collective (mpi/collective_traffic.hpp), split by the class of link it crosses (same
// node or not, when the communicator knows the layout), with the time spent inside MPI;
// waits before collectives (--time-waits) are reported apart. A TrafficObserver books
// and prices them (metrics/phase_metrics.hpp implements one); mpi/ itself knows nothing
// of phases or network models. No MPI here.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zbfs/core/link_cost.hpp"

namespace zbfs {

// Which communicator of the process grid carried traffic: the whole job, a processor row
// (C ranks) or a processor column (R ranks). Projections to other rank counts scale
// each one with its own group size.
enum class CommRole : int { kWorld, kRow, kColumn, kOther };
constexpr std::size_t kCommRoleCount = 4;

// The shape of a collective, which decides how its traffic grows with the group size:
// personalised all-to-all (each rank's own data to its owners), gather (everyone gets
// the group's data), reduction (a fixed-size buffer in log2 rounds) and pairwise
// exchanges (the rounds of our set-union allreduce).
enum class CommPattern : int { kPersonalized, kGather, kReduce, kPairwise };
constexpr std::size_t kCommPatternCount = 4;

class TrafficObserver {
 public:
  // One call: `messages` and `bytes` as this rank sends them; `by_link` the same split by
  // link class, or nullptr when the communicator was given no node layout (then the call
  // is not priced); `mpi_s` the time inside MPI since the call began.
  virtual void on_call(CommRole role, CommPattern pattern, std::uint64_t messages, std::uint64_t bytes,
                       const ClassTraffic* by_link, double mpi_s) = 0;
  // Time spent waiting for the last member before a collective (with wait timing on).
  virtual void on_wait(double seconds) = 0;
  // A pipelined exchange (mpi/message_stream.hpp), booked once at its end: its traffic
  // as on_call's (a personalised exchange), `mpi_s` the time inside its MPI calls while
  // it ran, `wait_s` the time blocked at its end for the last arrivals. Its transfers
  // ran while the rank computed; an observer that prices traffic can tell how much of
  // their time stayed hidden.
  virtual void on_stream(CommRole role, std::uint64_t messages, std::uint64_t bytes, const ClassTraffic* by_link,
                         double mpi_s, double wait_s) = 0;

 protected:
  TrafficObserver() = default;
  TrafficObserver(const TrafficObserver&) = default;
  TrafficObserver& operator=(const TrafficObserver&) = default;
  ~TrafficObserver() = default;
};

}  // namespace zbfs
