// RoutedUpdateStream (--overlap on with --route): a pipelined fold of keyed updates
// along a RoutePlan. Each hop is a lane of one MessageStream (mpi/message_stream.hpp)
// whose peers are only the ranks that hop can reach, so a route keeps its few start-ups
// while batches travel during the expansion:
//   - a pushed item (or one that arrived) waits in the bucket of the rank it goes to
//     next; a bucket leaves as a hop message (wire/routed/hop_message.hpp), sorted and, with
//     Merge::kOnePerKey, one item per (destination, key) with the smallest value, as soon
//     as it holds a batch, and relays forward what arrives whenever the caller polls;
//   - at the finish a rank closes hop 0 (its last messages carry what is left), and
//     closes hop h + 1 once it closed hop h and every rank that can hand it a hop-h item
//     has closed hop h; the fold ends when the last hop is done.
// No extra round, barrier or count exchange: the last messages are the counts. Merging
// is per message, not across batches, so a key may arrive more than once. Codec: each
// hop message is encoded with the hop codec (wire/routed/hop_codec.hpp) when it has one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/mpi/message_stream.hpp"
#include "zbfs/wire/direct/message_codec.hpp"
#include "zbfs/wire/exchanger.hpp"
#include "zbfs/wire/routed/hop_message.hpp"
#include "zbfs/wire/routed/route_plan.hpp"

namespace zbfs {

// What a rank needs of a route to stream along it: each hop's peers, and where each
// destination's items go next at each hop, as the index of that rank among the hop's
// `to` peers (a bucket each: what a rank holds is sized by its peers, not by P). Routes
// of up to three hops keep that index in a table (a few words per rank); longer ones
// (the hypercube's log2 P + 2) work it out from the plan. Made once per communicator
// shape.
struct StreamRoute {
  StreamRoute(const RoutePlan& plan, int me);
  static constexpr int kStays = -1;     // the item stays here for the hop
  static constexpr int kNotAPeer = -2;  // the plan sends it to no peer of the hop: this
                                        // rank never holds such an item there
  // The index in peers[hop].to of where an item for `destination` held here goes at
  // `hop`, kStays, or kNotAPeer.
  [[nodiscard]] int slot(std::size_t hop, std::uint64_t destination) const {
    if (!slots.empty()) return slots[hop][destination];
    return slot_of_next(hop, plan.next(static_cast<int>(hop), me, static_cast<int>(destination)));
  }
  // The same from the rank the plan sends the item to.
  [[nodiscard]] int slot_of_next(std::size_t hop, int next) const;
  [[nodiscard]] std::size_t hops() const { return peers.size(); }

  RoutePlan plan;
  int me;
  int ranks;
  std::vector<RoutePlan::HopPeers> peers;
  std::vector<std::size_t> first_bucket;         // per hop: its peers' buckets start here
  std::size_t buckets = 0;                       // over all hops
  std::vector<std::vector<std::int32_t>> slots;  // slots[h][d], for routes of up to three hops
};

class RoutedUpdateStream final : public UpdateStream {
 public:
  // `route` and `codec` are kept by the caller (codec nullptr or passthrough: plain
  // words). `batch_items`: the items a bucket gathers before it leaves. A received
  // message announcing more than `max_items` values is malformed.
  RoutedUpdateStream(const Communicator& comm, StreamChannel& channel, const StreamRoute& route, Merge merge,
                     MessageCodec* codec, std::size_t batch_items, std::uint64_t max_items,
                     std::uint64_t shuffle_seed = 0);

  [[nodiscard]] std::size_t batch_items() const override { return batch_items_; }
  void push(int destination, std::span<const KeyedItem> items) override;
  void poll(std::vector<KeyedItem>& arrived) override;
  void finish(std::span<const KeyedItem> rest, std::span<const std::uint64_t> counts,
              std::vector<KeyedItem>& arrived) override;

 private:
  // Puts an item held here into the bucket of hop `hop` or a later one (the first hop
  // that moves it), or among the items for this rank after the last hop.
  void place(std::size_t hop, const HopItem& item);
  // Sorts (and merges) the bucket of the hop's peer `slot` and encodes it as the hop
  // message's bytes; empties it.
  std::vector<std::uint8_t> take_bucket(std::size_t hop, int slot, bool& flagged);
  // Takes in what arrived: items go on to their next hop, or to `delivered_`.
  void take_messages();
  // Closes every hop that may close now (hop 0 only once finishing).
  void close_ready_hops();
  [[nodiscard]] std::vector<HopItem>& bucket(std::size_t hop, int slot) {
    return buckets_[route_.first_bucket[hop] + static_cast<std::size_t>(slot)];
  }

  const Communicator& comm_;
  const StreamRoute& route_;
  MessageStream stream_;
  bool merge_;
  MessageCodec* codec_;
  std::size_t batch_items_;
  std::uint64_t max_items_;
  std::size_t hops_;
  bool finishing_ = false;
  std::vector<std::vector<HopItem>> buckets_;  // per hop and `to` peer
  std::vector<KeyedItem> delivered_;           // items for this rank, not yet handed over
  std::vector<MessageStream::Message> messages_;
  std::vector<HopItem> parsed_;
  std::uint64_t merged_items_ = 0;
  std::vector<std::uint64_t> hop_bytes_;
  std::vector<std::uint64_t> words_;  // scratch
};

}  // namespace zbfs
