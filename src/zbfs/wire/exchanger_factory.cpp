#include "zbfs/wire/exchanger_factory.hpp"

#include <utility>

#include "zbfs/wire/decorators/overlapped_exchanger.hpp"
#include "zbfs/wire/direct/direct_exchanger.hpp"
#include "zbfs/wire/routed/routed_exchanger.hpp"

namespace zbfs {

namespace {

// The one place the transport is chosen: every round of the run moves through it.
std::unique_ptr<PieceRounds> make_piece_rounds(Transport transport) {
  if (transport == Transport::kRma) return std::make_unique<RmaRounds>();
  return std::make_unique<TwoSidedRounds>();
}

}  // namespace

std::unique_ptr<Exchanger> make_exchanger(ExchangeSetup setup) {
  // Routed hops get a codec of their own: under auto each learns its own messages' costs.
  MessageCodec hop_codec = setup.codec;
  MessageCodec stream_codec = setup.codec;
  auto direct = std::make_unique<DirectExchanger>(setup.column_gather, std::move(setup.codec),
                                                  setup.max_ids_per_message, make_piece_rounds(setup.transport));
  direct->set_recorder(setup.recorder);
  if (setup.overlap && !setup.route) {
    return std::make_unique<OverlappedExchanger>(std::move(direct), std::move(stream_codec), setup.batch_bytes,
                                                 setup.max_ids_per_message, setup.overlap_shuffle_seed);
  }
  if (!setup.route) return direct;
  std::optional<RoutedPipelining> pipelining;
  if (setup.overlap) pipelining = RoutedPipelining{setup.batch_bytes, setup.overlap_shuffle_seed};
  return std::make_unique<RoutedExchanger>(std::move(direct), std::move(*setup.route), std::move(hop_codec),
                                           setup.max_ids_per_message, pipelining);
}

}  // namespace zbfs
