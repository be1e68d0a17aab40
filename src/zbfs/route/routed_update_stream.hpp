// RoutedUpdateStream (--overlap on with --route): a pipelined fold of keyed updates
// along a RoutePlan. Each hop is a lane of one MessageStream (mpi/message_stream.hpp)
// whose peers are only the ranks that hop can reach, so a route keeps its few start-ups
// while batches travel during the expansion:
//   - a pushed item (or one that arrived) waits in the bucket of the rank it goes to
//     next; a bucket leaves as a hop message (route/hop_message.hpp), sorted and, with
//     Merge::kOnePerKey, one item per (destination, key) with the smallest value, as soon
//     as it holds a batch, and relays forward what arrives whenever the caller polls;
//   - at the finish a rank closes hop 0 (its last messages carry what is left), and
//     closes hop h + 1 once it closed hop h and every rank that can hand it a hop-h item
//     has closed hop h; the fold ends when the last hop is done.
// No extra round, barrier or count exchange: the last messages are the counts. Merging
// is per message, not across batches, so a key may arrive more than once. Codec: each
// hop message is encoded with the hop codec (route/hop_codec.hpp) when it has one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/exchange/exchanger.hpp"
#include "zbfs/exchange/message_codec.hpp"
#include "zbfs/mpi/message_stream.hpp"
#include "zbfs/route/hop_message.hpp"
#include "zbfs/route/route_plan.hpp"

namespace zbfs {

// What a rank needs of a route to stream along it: where each destination's items go
// next at each hop, and each hop's peers. Made once per communicator shape.
struct StreamRoute {
  StreamRoute(const RoutePlan& plan, int me);
  int me;
  int ranks;
  std::vector<std::vector<int>> next;  // next[h][d]: where an item for d held here goes at hop h
  std::vector<RoutePlan::HopPeers> peers;
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
  // Sorts (and merges) a bucket and encodes it as the hop message's bytes; empties it.
  std::vector<std::uint8_t> take_bucket(std::size_t hop, int to, bool& flagged);
  // Takes in what arrived: items go on to their next hop, or to `delivered_`.
  void take_messages();
  // Closes every hop that may close now (hop 0 only once finishing).
  void close_ready_hops();
  [[nodiscard]] std::vector<HopItem>& bucket(std::size_t hop, int to) {
    return buckets_[hop * static_cast<std::size_t>(route_.ranks) + static_cast<std::size_t>(to)];
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
  std::vector<std::vector<HopItem>> buckets_;  // per hop and next rank
  std::vector<KeyedItem> delivered_;           // items for this rank, not yet handed over
  std::vector<MessageStream::Message> messages_;
  std::vector<HopItem> parsed_;
  std::uint64_t merged_items_ = 0;
  std::vector<std::uint64_t> hop_bytes_;
  std::vector<std::uint64_t> words_;  // scratch
};

}  // namespace zbfs
