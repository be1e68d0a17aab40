// The one place that decides how a run's exchanges travel: it builds the Exchanger that
// the kernels and validators are given, from the run's settings. Today that is the
// direct exchanger (its rounds two-sided, or one-sided under --transport rma), wrapped in
// a RoutedExchanger under --route or in an OverlappedExchanger under --overlap on (which
// pipelines update folds). A new transport is one more Exchanger implementation and one
// more case here; see docs/architecture.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "zbfs/metrics/message_sink.hpp"
#include "zbfs/wire/column_gather.hpp"
#include "zbfs/wire/direct/message_codec.hpp"
#include "zbfs/wire/exchanger.hpp"
#include "zbfs/wire/routed/route_choice.hpp"
#include "zbfs/wire/transport_kind.hpp"

namespace zbfs {

struct ExchangeSetup {
  ColumnGather column_gather = ColumnGather::kAllgatherv;  // --column-gather
  MessageCodec codec;                                      // --codec, priced for the job's links
  std::optional<RouteChoice> route;                        // --route, --route-dims, --no-dedup
  // A received message announcing more ids than this is malformed.
  std::uint64_t max_ids_per_message = std::uint64_t{1} << 48;
  // --dump-frontiers: every direct message is also written here (kept by the caller).
  MessageSink* recorder = nullptr;
  Transport transport = Transport::kTwoSided;      // --transport
  bool overlap = false;                            // --overlap: pipelined update folds
  std::uint64_t batch_bytes = kDefaultBatchBytes;  // --batch-bytes
  // Tests only: the pipelined folds' sends are held back and reordered (0: off).
  std::uint64_t overlap_shuffle_seed = 0;
};

std::unique_ptr<Exchanger> make_exchanger(ExchangeSetup setup);

}  // namespace zbfs
