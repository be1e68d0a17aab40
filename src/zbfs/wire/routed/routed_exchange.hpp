// RoutedExchange: a sparse exchange of small keyed items (each with a destination rank)
// along a RoutePlan, with semantic merging at the source and at every hop. Items bound
// for the same destination travel together; at each hop a rank sorts what it holds by
// next rank, destination and key and, with Merge::kOnePerKey, keeps one item per
// (destination, key): the one with the smallest value, so the result does not depend on
// the route. The destination merges what arrives too, so a key requested by every rank
// is delivered once.
//
// Hop messages are 64-bit words (wire/routed/hop_message.hpp). `direct` sends each hop's
// messages with an alltoallv (counts first), `sparse` with the sparse exchange
// (Communicator::sparse_exchange), the multi-hop routes among each hop's peers
// (Communicator::peer_exchange). With a codec (set_codec) each hop message is encoded
// (wire/routed/hop_codec.hpp). Every exchange books its merged items and bytes per hop in the
// communicator's current phase. Collective over the communicator.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/mpi/communicator.hpp"
#include "zbfs/wire/direct/message_codec.hpp"
#include "zbfs/wire/id_messages.hpp"
#include "zbfs/wire/routed/hop_codec.hpp"
#include "zbfs/wire/routed/route_plan.hpp"

namespace zbfs {

// What one rank did in the last exchange.
struct RouteStats {
  std::uint64_t startups = 0;            // messages started (non-empty, to other ranks), all hops
  std::uint64_t sent_bytes = 0;          // bytes of those messages
  std::uint64_t received_items = 0;      // items that arrived in messages, all hops
  std::uint64_t merged_items = 0;        // items removed by merging here (source, relay, destination)
  std::vector<std::uint64_t> hop_bytes;  // bytes sent per hop
  std::vector<std::uint64_t> hop_startups;
};

class RoutedExchange {
 public:
  RoutedExchange(RoutePlan plan, Merge merge) : plan_(std::move(plan)), merge_(merge) {}

  // Encode every hop message with `codec` (kept by the caller; nullptr or passthrough:
  // plain words). A received message announcing more than `max_items` values is malformed.
  void set_codec(MessageCodec* codec, std::uint64_t max_items = std::uint64_t{1} << 48) {
    codec_ = codec;
    max_items_ = max_items;
  }

  // `items` grouped by destination rank in rank order, counts[d] of them for rank d.
  // Returns the items for this rank: sorted by key when merging, else in arrival order.
  std::vector<KeyedItem> exchange(const Communicator& comm, std::span<const KeyedItem> items,
                                  std::span<const std::uint64_t> counts);

  // A batched read: keys[i] (grouped by owner rank like `items` above) is looked up on
  // its owner with lookup(key, out) (once per distinct key asked of it), which writes
  // `width` values to out; they are returned in out[i * width, (i + 1) * width). With
  // Merge::kOnePerKey requests merge on the way (one per (owner, key) at each rank);
  // every rank remembers who asked it for what, and the replies retrace the paths, copied
  // at each rank where requests merged. Replies are 2 + width words each (owner, key,
  // values). The stats count both directions: hops 0..h-1 are the requests', h..2h-1 the
  // replies'.
  template <class Lookup>
  std::vector<std::uint64_t> read(const Communicator& comm, std::span<const std::uint64_t> keys,
                                  std::span<const std::uint64_t> counts, std::size_t width, Lookup&& lookup) {
    std::vector<std::uint64_t> asked_here = route_requests(comm, keys, counts);
    std::vector<std::uint64_t> values(asked_here.size() * width);
    for (std::size_t i = 0; i < asked_here.size(); ++i) lookup(asked_here[i], values.data() + i * width);
    return route_replies(comm, values, width);
  }
  // The same with every distinct key asked of this rank answered in one call:
  // answer(keys, out) writes keys[i]'s values to out[i * width, (i + 1) * width).
  template <class BatchAnswer>
  std::vector<std::uint64_t> read_batch(const Communicator& comm, std::span<const std::uint64_t> keys,
                                        std::span<const std::uint64_t> counts, std::size_t width,
                                        BatchAnswer&& answer) {
    const std::vector<std::uint64_t> asked_here = route_requests(comm, keys, counts);
    std::vector<std::uint64_t> values(asked_here.size() * width);
    answer(std::span<const std::uint64_t>(asked_here), std::span<std::uint64_t>(values));
    return route_replies(comm, values, width);
  }
  // One value per key: lookup(key) returns it.
  template <class Lookup>
  std::vector<std::uint64_t> read(const Communicator& comm, std::span<const std::uint64_t> keys,
                                  std::span<const std::uint64_t> counts, Lookup&& lookup) {
    return read(comm, keys, counts, 1, [&](std::uint64_t key, std::uint64_t* out) { *out = lookup(key); });
  }

  [[nodiscard]] const RouteStats& stats() const { return stats_; }
  [[nodiscard]] const RoutePlan& plan() const { return plan_; }

 private:
  // A request as one rank holds it at one hop: who handed it over (this rank for its own,
  // or the previous hop's sender), and what it asks.
  struct Asked {
    std::uint64_t origin;
    std::uint64_t owner;
    std::uint64_t key;
  };
  // Forward half of read(): returns the distinct keys asked of this rank, sorted.
  std::vector<std::uint64_t> route_requests(const Communicator& comm, std::span<const std::uint64_t> keys,
                                            std::span<const std::uint64_t> counts);
  // Backward half: values[i * width, (i + 1) * width) answer the i-th key route_requests
  // returned.
  std::vector<std::uint64_t> route_replies(const Communicator& comm, std::span<const std::uint64_t> values,
                                           std::size_t width);
  // One hop's transport (deliver), with the codec around it.
  // Sent bytes per hop are booked into stats_.hop_bytes[stats_hop] as they went (encoded).
  std::vector<Communicator::SparseMessage> transport(const Communicator& comm,
                                                     std::vector<Communicator::SparseMessage>& outgoing,
                                                     HopLayout layout, std::size_t stats_hop);
  // The hop's messages as they are: alltoallv for direct, the sparse exchange (NBX) for
  // sparse, and among the hop's peers for the multi-hop routes (Communicator::peer_exchange:
  // no probing, no barrier). `stats_hop`: a forward hop, or 2h - 1 - hop for a read's
  // reply to hop `hop`, which goes back to the peers the requests came from.
  std::vector<Communicator::SparseMessage> deliver(const Communicator& comm,
                                                   std::vector<Communicator::SparseMessage>& outgoing,
                                                   std::size_t stats_hop);
  // Totals the stats and books them in the communicator's phase counters.
  void book(const Communicator& comm);

  RoutePlan plan_;
  Merge merge_;
  MessageCodec* codec_ = nullptr;
  std::uint64_t max_items_ = std::uint64_t{1} << 48;
  RouteStats stats_;
  std::vector<RoutePlan::HopPeers> peers_;  // the plan's hop peers of rank peers_rank_
  int peers_rank_ = -1;
  std::vector<std::vector<Asked>> ledger_;  // per hop 0..hops: what this rank held, for the replies
  std::vector<std::uint64_t> own_keys_;     // the read's keys, in the caller's order
  std::vector<std::uint64_t> own_owners_;
  std::vector<std::uint64_t> asked_here_;  // distinct keys asked of this rank, sorted
};

}  // namespace zbfs
