// The network a job actually runs on: which node each rank is on, and (--network
// measure) a ping-pong between rank 0 and one rank on its node and one on another node,
// fitted to latency + bytes / bandwidth per link class, then the inter-node bandwidth
// under load (every cross-node pair swapping at once). Collective over the world.
#pragma once

#include <cstdint>
#include <vector>

#include "zbfs/mpi/communicator.hpp"
#include "zbfs/network/network_model.hpp"

namespace zbfs {

// Node of every world rank: blocks of `ranks_per_node` consecutive ranks when given,
// else the nodes MPI reports (ranks that can share memory), numbered in rank order.
std::vector<int> node_of_world_ranks(const Communicator& world, std::optional<int> ranks_per_node);

// Ping-pong of rank 0 with one peer per class, and the loaded swap (a few tens of
// milliseconds on a fast network, about a second at 1 Gbit/s). Every rank gets the
// result. A class without a pair in this job is not measured.
NetworkMeasurement measure_network(const Communicator& world, const std::vector<int>& node_of_world);

}  // namespace zbfs
