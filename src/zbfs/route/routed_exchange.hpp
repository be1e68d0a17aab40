// RoutedExchange: a sparse exchange of small keyed items (each with a destination rank)
// along a RoutePlan, with semantic merging at the source and at every hop. Items bound
// for the same destination travel together; at each hop a rank sorts what it holds by
// next rank, destination and key and, with Merge::kOnePerKey, keeps one item per
// (destination, key): the one with the smallest value, so the result does not depend on
// the route. The destination merges what arrives too, so a key requested by every rank
// is delivered once.
//
// Hop messages are 64-bit words: the number of groups G, then G (destination, count)
// pairs, then the groups' items, two words each (key, value). `direct` sends each hop's
// messages with an alltoallv (counts first), the other routes with the sparse exchange
// (Communicator::sparse_exchange). Collective over the communicator.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/mpi/communicator.hpp"
#include "zbfs/route/route_plan.hpp"

namespace zbfs {

// A vertex and its parent for BFS updates; an index and a value for array access.
struct KeyedItem {
  std::uint64_t key = 0;
  std::uint64_t value = 0;
  friend bool operator==(const KeyedItem&, const KeyedItem&) = default;
};

enum class Merge { kKeepAll, kOnePerKey };

// What one rank did in the last exchange.
struct RouteStats {
  std::uint64_t startups = 0;             // messages started (non-empty, to other ranks), all hops
  std::uint64_t sent_bytes = 0;           // bytes of those messages
  std::uint64_t received_items = 0;       // items that arrived in messages, all hops
  std::uint64_t merged_items = 0;         // items removed by merging here (source, relay, destination)
  std::vector<std::uint64_t> hop_bytes;   // bytes sent per hop
  std::vector<std::uint64_t> hop_startups;
};

class RoutedExchange {
 public:
  RoutedExchange(RoutePlan plan, Merge merge) : plan_(std::move(plan)), merge_(merge) {}

  // `items` grouped by destination rank in rank order, counts[d] of them for rank d.
  // Returns the items for this rank: sorted by key when merging, else in arrival order.
  std::vector<KeyedItem> exchange(const Communicator& comm, std::span<const KeyedItem> items,
                                  std::span<const std::uint64_t> counts);

  [[nodiscard]] const RouteStats& stats() const { return stats_; }
  [[nodiscard]] const RoutePlan& plan() const { return plan_; }

 private:
  RoutePlan plan_;
  Merge merge_;
  RouteStats stats_;
};

}  // namespace zbfs
