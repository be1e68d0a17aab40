// RoutedExchanger: the Exchanger of --route. Keyed updates and reads travel along the
// route (RoutedExchange: relayed, merged at every hop, hops encoded with the hop codec);
// the bulk id exchanges and gathers (frontier folds, column gathers, bitmaps) go to the
// direct exchanger it wraps, since they are all-to-alls within a row or column that the
// codecs already shrink. Routes are planned per communicator size (RouteChoice::
// plan_for), so one exchanger serves the job, a processor row and a column alike.
// With pipelining (--overlap on) update folds stream along the route
// (wire/routed/routed_update_stream.hpp): each group of ranks that folds gets a StreamChannel
// at its first stream, kept for the run and found by the members' world ranks.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "zbfs/wire/direct/direct_exchanger.hpp"
#include "zbfs/wire/direct/message_codec.hpp"
#include "zbfs/wire/exchanger.hpp"
#include "zbfs/wire/routed/route_choice.hpp"
#include "zbfs/wire/routed/routed_exchange.hpp"
#include "zbfs/wire/routed/routed_update_stream.hpp"

namespace zbfs {

// How routed update folds stream (--overlap on).
struct RoutedPipelining {
  std::uint64_t batch_bytes;       // the raw bytes a next rank's bucket gathers before it leaves
  std::uint64_t shuffle_seed = 0;  // tests only: sends held back and reordered
};

class RoutedExchanger final : public Exchanger {
 public:
  // `hop_codec` encodes the hop messages (passthrough: plain words); a hop message
  // announcing more than `max_items` values is malformed. With `pipelining`, update
  // folds opened with open_updates stream along the route.
  RoutedExchanger(std::unique_ptr<Exchanger> direct, RouteChoice route, MessageCodec hop_codec,
                  std::uint64_t max_items = std::uint64_t{1} << 48,
                  std::optional<RoutedPipelining> pipelining = std::nullopt);
  ~RoutedExchanger() override;

  [[nodiscard]] ExchangeTraits traits() const override { return {true, route_.dedup, pipelining_.has_value()}; }
  [[nodiscard]] TransportStats transport_stats() const override { return direct_->transport_stats(); }
  IncomingIds all_to_all(const Communicator& comm, const OutgoingIds& outgoing, IdsAre kind) override {
    return direct_->all_to_all(comm, outgoing, kind);
  }
  std::vector<std::uint64_t> gather_ids(const Communicator& comm, std::span<const std::uint64_t> mine) override {
    return direct_->gather_ids(comm, mine);
  }
  void gather_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine, std::span<std::uint64_t> all,
                     std::span<const std::uint64_t> mask = {}) override {
    direct_->gather_bitmap(comm, mine, all, mask);
  }
  void shift_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine,
                    std::span<std::uint64_t> received) override {
    direct_->shift_bitmap(comm, mine, received);
  }
  std::vector<KeyedItem> update(const Communicator& comm, std::span<const KeyedItem> items,
                                std::span<const std::uint64_t> counts) override;
  std::vector<std::uint64_t> read_batch(const Communicator& comm, std::span<const std::uint64_t> keys,
                                        std::span<const std::uint64_t> counts, std::size_t width,
                                        const ReadBatchAnswer& answer) override;
  std::unique_ptr<UpdateStream> open_updates(const Communicator& comm, std::uint64_t key_bound,
                                             std::uint64_t value_bound) override;

 private:
  // The routed exchange for communicators of `comm`'s size, made on first use.
  RoutedExchange& route_for(const Communicator& comm);

  std::unique_ptr<Exchanger> direct_;
  RouteChoice route_;
  MessageCodec hop_codec_;
  std::uint64_t max_items_;
  std::map<int, RoutedExchange> by_size_;
  std::optional<RoutedPipelining> pipelining_;
  std::uint64_t streams_opened_ = 0;  // varies the test hook's order from stream to stream
  // Per group of ranks (their world ranks): its channel and this rank's view of the route.
  struct StreamGroup {
    std::unique_ptr<StreamChannel> channel;
    std::unique_ptr<StreamRoute> route;
  };
  std::map<std::vector<int>, StreamGroup> stream_groups_;
};

}  // namespace zbfs
