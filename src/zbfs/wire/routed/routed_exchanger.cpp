#include "zbfs/wire/routed/routed_exchanger.hpp"

#include <algorithm>
#include <string>

#include "zbfs/core/error.hpp"

namespace zbfs {

RoutedExchanger::RoutedExchanger(std::unique_ptr<Exchanger> direct, RouteChoice route, MessageCodec hop_codec,
                                 std::uint64_t max_items, std::optional<RoutedPipelining> pipelining)
    : direct_(std::move(direct)),
      route_(std::move(route)),
      hop_codec_(std::move(hop_codec)),
      max_items_(max_items),
      pipelining_(pipelining) {}

RoutedExchanger::~RoutedExchanger() = default;

RoutedExchange& RoutedExchanger::route_for(const Communicator& comm) {
  auto found = by_size_.find(comm.size());
  if (found == by_size_.end()) {
    found = by_size_.try_emplace(comm.size(), route_.plan_for(comm.size()), route_.merge()).first;
    found->second.set_codec(&hop_codec_, max_items_);
  }
  return found->second;
}

std::vector<KeyedItem> RoutedExchanger::update(const Communicator& comm, std::span<const KeyedItem> items,
                                               std::span<const std::uint64_t> counts) {
  return route_for(comm).exchange(comm, items, counts);
}

std::vector<std::uint64_t> RoutedExchanger::read_batch(const Communicator& comm, std::span<const std::uint64_t> keys,
                                                       std::span<const std::uint64_t> counts, std::size_t width,
                                                       const ReadBatchAnswer& answer) {
  return route_for(comm).read_batch(comm, keys, counts, width, answer);
}

std::unique_ptr<UpdateStream> RoutedExchanger::open_updates(const Communicator& comm, std::uint64_t key_bound,
                                                            std::uint64_t value_bound) {
  if (!pipelining_) return Exchanger::open_updates(comm, key_bound, value_bound);
  StreamGroup& group = stream_groups_[comm.world_ranks()];
  if (!group.channel) {
    group.channel = std::make_unique<StreamChannel>(comm);
    group.route = std::make_unique<StreamRoute>(route_.plan_for(comm.size()), comm.rank());
  }
  const std::uint64_t seed = MessageStream::nth_shuffle_seed(pipelining_->shuffle_seed, ++streams_opened_);
  // A hop message carries an item as two words (key, value).
  const auto batch_items = static_cast<std::size_t>(std::max<std::uint64_t>(1, pipelining_->batch_bytes / 16));
  return std::make_unique<RoutedUpdateStream>(comm, *group.channel, *group.route, route_.merge(), &hop_codec_,
                                              batch_items, max_items_, seed);
}

}  // namespace zbfs
