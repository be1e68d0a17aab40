// DirectExchanger: the Exchanger that moves each call itself (wire/exchanger.hpp), with
// no relays.
//
// DirectExchanger maps each call onto one round of messages whose sizes the receivers
// probe (Communicator::exchange_probed: no count exchange first), or, for bitmaps
// without a codec, an allgather (an allgatherv when masked); its column gather is either
// a one-round allgatherv or a set-union allreduce; a read is two all-to-alls (the keys,
// then the answers in the same order). With a codec, each message travels as one frame
// (codec/frame.hpp), chosen per message under `auto`; raw and wire bytes, encode and
// decode time and frames per codec go to the current phase. Every round (the personalised
// exchanges, the id and bitmap gathers, the ring shifts) moves through the transport the
// factory chose (mpi/piece_rounds.hpp: matched messages, or one-sided puts under
// --transport rma); the set-union allreduce's pairwise steps, a coded ring shift and the
// collectives (counts, termination) stay two-sided.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "zbfs/metrics/message_sink.hpp"
#include "zbfs/mpi/communicator.hpp"
#include "zbfs/mpi/piece_rounds.hpp"
#include "zbfs/wire/column_gather.hpp"
#include "zbfs/wire/direct/message_codec.hpp"
#include "zbfs/wire/direct/update_columns.hpp"
#include "zbfs/wire/exchanger.hpp"

namespace zbfs {

class DirectExchanger final : public Exchanger {
 public:
  // `max_ids_per_message`: a received frame announcing more ids is malformed.
  // `rounds`: how the rounds move (--transport; mpi/piece_rounds.hpp).
  explicit DirectExchanger(ColumnGather column_gather, MessageCodec codec = {},
                           std::uint64_t max_ids_per_message = std::uint64_t{1} << 48,
                           std::unique_ptr<PieceRounds> rounds = std::make_unique<TwoSidedRounds>())
      : column_gather_(column_gather),
        codec_(std::move(codec)),
        max_ids_(max_ids_per_message),
        rounds_(std::move(rounds)) {}
  [[nodiscard]] ExchangeTraits traits() const override { return {}; }
  [[nodiscard]] TransportStats transport_stats() const override { return rounds_->stats(); }
  IncomingIds all_to_all(const Communicator& comm, const OutgoingIds& outgoing, IdsAre kind) override;
  std::vector<std::uint64_t> gather_ids(const Communicator& comm, std::span<const std::uint64_t> mine) override;
  void gather_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine, std::span<std::uint64_t> all,
                     std::span<const std::uint64_t> mask = {}) override;
  void shift_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine,
                    std::span<std::uint64_t> received) override;
  // Each destination's items travel as one sequence of (key, value) words, or with a codec
  // merged and in columns (update_columns.hpp); the receiver merges.
  std::vector<KeyedItem> update(const Communicator& comm, std::span<const KeyedItem> items,
                                std::span<const std::uint64_t> counts) override;
  std::vector<std::uint64_t> read_batch(const Communicator& comm, std::span<const std::uint64_t> keys,
                                        std::span<const std::uint64_t> counts, std::size_t width,
                                        const ReadBatchAnswer& answer) override;
  // Every message sent from now on is also written to `recorder` (kept by the caller).
  void set_recorder(MessageSink* recorder) { recorder_ = recorder; }

 private:
  // all_to_all on a caller's spans. Each message's ids are booked as its raw bytes, or
  // raw_words[d] words for destination d's when given (what the same content takes
  // without a codec).
  IncomingIds send_ids(const Communicator& comm, std::span<const std::uint64_t> outgoing_ids,
                       std::span<const std::uint64_t> counts, IdsAre kind,
                       std::span<const std::uint64_t> raw_words = {});
  void record(const Communicator& comm, RecordedKind kind, std::uint32_t destination,
              std::span<const std::uint64_t> values) const;
  // Every member's bitmap words (member s: words[s] of them) concatenated in rank order.
  void gather_words(const Communicator& comm, std::span<const std::uint64_t> mine, std::span<const std::uint64_t> words,
                    std::span<std::uint64_t> all);

  ColumnGather column_gather_;
  MessageSink* recorder_ = nullptr;
  MessageCodec codec_;
  std::uint64_t max_ids_;
  std::unique_ptr<PieceRounds> rounds_;
  std::vector<KeyedItem> merged_;  // update's scratch
  std::vector<KeyedItem> merge_scratch_;
  UpdateColumnsScratch columns_scratch_;
};

// The set-union allreduce on its own (exposed for tests): recursive halving over the id
// range with pairwise exchanges, each rank ending with the union of one id range, then
// an allgatherv of the ranges. Non-power-of-two counts fold the extra ranks in first.
// With a codec (not passthrough) every step's lists travel as frames.
std::vector<std::uint64_t> union_allreduce(const Communicator& comm, std::span<const std::uint64_t> mine,
                                           PieceRounds& rounds, MessageCodec* codec = nullptr,
                                           std::uint64_t max_ids_per_message = std::uint64_t{1} << 48);

}  // namespace zbfs
