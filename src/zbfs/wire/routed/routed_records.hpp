// route_records: a personalized all-to-all of fixed-width records (kernel 1's edge
// shuffle) carried along a RoutePlan, hop by hop, so that a rank talks to the route's
// hop peers (N + M - 2 on grid2, a dimension's size a hop on gridk, one or two ranks a
// hop on the hypercube) instead of every rank. At P = 1,024 a dense alltoallv starts
// about a million messages a round; grid2 starts about 64 thousand. Records are never
// merged: every record arrives once, whatever the route.
//
// A rank's records for one destination travel as a group (the rank they started from,
// the destination, a run of records) and are never split, since a hop's next rank depends
// only on the destination. At each hop a rank sends each next rank one message: the
// number of groups G, then G (origin, destination, words) triples, then the groups' words
// in group order, to the hop's peers (Communicator::peer_exchange: sizes, then the
// messages, with no probing, which a simulator charges for every poll). The destination
// orders the groups by origin, so the result is exactly a direct alltoallv's, whatever
// the route. Collective over `comm`.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/mpi/communicator.hpp"
#include "zbfs/wire/routed/route_plan.hpp"

namespace zbfs {

// `records` grouped by destination rank in rank order, counts[d] words of them for rank
// d (a multiple of `width`); taken, so that a hop holds each word at most twice. Returns
// the records for this rank as an alltoallv would: grouped by the rank they started
// from, in rank order. Throws Error on counts that do not cover whole records, a plan for
// another rank count, or a malformed message.
std::vector<std::uint64_t> route_records(const Communicator& comm, const RoutePlan& plan,
                                         std::vector<std::uint64_t> records, std::span<const std::uint64_t> counts,
                                         std::size_t width);

}  // namespace zbfs
