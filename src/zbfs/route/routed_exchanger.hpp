// RoutedExchanger: the Exchanger of --route. Keyed updates and reads travel along the
// route (RoutedExchange: relayed, merged at every hop, hops encoded with the hop codec);
// the bulk id exchanges and gathers (frontier folds, column gathers, bitmaps) go to the
// direct exchanger it wraps, since they are all-to-alls within a row or column that the
// codecs already shrink. Routes are planned per communicator size (RouteChoice::
// plan_for), so one exchanger serves the job, a processor row and a column alike.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "zbfs/exchange/exchanger.hpp"
#include "zbfs/exchange/message_codec.hpp"
#include "zbfs/route/route_choice.hpp"
#include "zbfs/route/routed_exchange.hpp"

namespace zbfs {

class RoutedExchanger final : public Exchanger {
 public:
  // `hop_codec` encodes the hop messages (passthrough: plain words); a hop message
  // announcing more than `max_items` values is malformed.
  RoutedExchanger(std::unique_ptr<Exchanger> direct, RouteChoice route, MessageCodec hop_codec,
                  std::uint64_t max_items = std::uint64_t{1} << 48)
      : direct_(std::move(direct)), route_(std::move(route)), hop_codec_(std::move(hop_codec)), max_items_(max_items) {}

  [[nodiscard]] ExchangeTraits traits() const override { return {true, route_.dedup}; }
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

 private:
  // The routed exchange for communicators of `comm`'s size, made on first use.
  RoutedExchange& route_for(const Communicator& comm);

  std::unique_ptr<Exchanger> direct_;
  RouteChoice route_;
  MessageCodec hop_codec_;
  std::uint64_t max_items_;
  std::map<int, RoutedExchange> by_size_;
};

}  // namespace zbfs
