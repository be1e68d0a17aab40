#include "zbfs/transport/exchanger_factory.hpp"

#include <utility>

#include "zbfs/route/routed_exchanger.hpp"

namespace zbfs {

std::unique_ptr<Exchanger> make_exchanger(ExchangeSetup setup) {
  // Routed hops get a codec of their own: under auto each learns its own messages' costs.
  MessageCodec hop_codec = setup.codec;
  auto direct =
      std::make_unique<DirectExchanger>(setup.column_gather, std::move(setup.codec), setup.max_ids_per_message,
                                        setup.transport == Transport::kRma ? std::make_unique<RmaExchange>() : nullptr);
  direct->set_recorder(setup.recorder);
  if (!setup.route) return direct;
  return std::make_unique<RoutedExchanger>(std::move(direct), std::move(*setup.route), std::move(hop_codec),
                                           setup.max_ids_per_message);
}

}  // namespace zbfs
