// How one rank's part of each kind of collective splits into messages and bytes per link
// class, under the textbook algorithms (Thakur, Rabenseifner and Gropp, 2005): ring
// all-gather, recursive-doubling reductions, direct personalised exchange. The running
// job (mpi/communicator) and projections to other rank counts (network/projection) both
// count traffic through these, so the two agree. Arithmetic only: no MPI.
#pragma once

#include <cstdint>

#include "zbfs/core/link_cost.hpp"

namespace zbfs {

// ceil(log2(n)) for n >= 1.
int ceil_log2(std::uint64_t n);
// floor(log2(n)) for n >= 1.
int floor_log2(std::uint64_t n);

// Ring all-gather in a group of `group` ranks of which `off_node` are on other nodes than
// this one: group - 1 steps, each as slow as the slowest link of the ring, receiving
// `received_bytes` in all.
ClassTraffic ring_gather_traffic(int group, int off_node, double received_bytes);

// Recursive doubling over `group` ranks of which `on_node` (this rank included) share
// this rank's node: ceil(log2 group) rounds of `bytes` each; the first floor(log2 on_node)
// rounds pair ranks of one node when ranks are placed in blocks.
ClassTraffic doubling_traffic(int group, int on_node, double bytes_per_round);

}  // namespace zbfs
