#include "zbfs/route/routed_exchanger.hpp"

#include <string>

#include "zbfs/core/error.hpp"

namespace zbfs {

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

}  // namespace zbfs
