// Exchanger: the one interface through which every exchange of the distributed BFS and
// validator passes, so that compression, relay routing and aggregation (and later other
// transports) plug in without touching the kernels. All members are collective over the
// communicator they are given. Implementations are built by one factory from the run
// configuration (transport/exchanger_factory.hpp): DirectExchanger here, RoutedExchanger
// (route/routed_exchanger.hpp) for --route.
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

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "zbfs/exchange/column_gather.hpp"
#include "zbfs/exchange/id_messages.hpp"
#include "zbfs/exchange/message_codec.hpp"
#include "zbfs/exchange/update_columns.hpp"
#include "zbfs/metrics/message_sink.hpp"
#include "zbfs/mpi/communicator.hpp"
#include "zbfs/mpi/piece_rounds.hpp"

namespace zbfs {

// What a kernel may count on when it chooses which operation to use.
struct ExchangeTraits {
  // Keyed updates travel through relay ranks that merge them on the way (a route): a
  // sender that attaches the value it knows (a BFS parent) to each update saves the
  // reads that would fetch it later, and merging keeps the extra word cheap.
  bool relays_updates = false;
  // Updates are merged, one per key, the smallest value, at the source and on the way;
  // false (--no-dedup): every update travels as sent, and a sender should not filter
  // either.
  bool merges_updates = true;
  // open_updates pipelines (--overlap on): batches leave while the caller computes and
  // arrivals can be taken between pushes. Otherwise a stream only buffers what is pushed
  // and exchanges it at its finish, and a kernel should fold the usual way.
  bool pipelines_updates = false;
};

// A pipelined fold of keyed updates (Exchanger::open_updates). A step pushes each
// destination's items in batches as it produces them, takes what has arrived between
// pushes, and ends the fold with finish(), which is collective over the stream's
// communicator. Items are not merged across batches: a key sent several times (by
// several senders) may arrive several times, in any order, and within a batch items
// may arrive reordered (identical items merged).
class UpdateStream {
 public:
  virtual ~UpdateStream() = default;
  // How many items a caller should gather for one destination before pushing them.
  [[nodiscard]] virtual std::size_t batch_items() const = 0;
  // One batch of items for member `destination` (not this rank).
  virtual void push(int destination, std::span<const KeyedItem> items) = 0;
  // Appends what has arrived to `arrived`, without waiting.
  virtual void poll(std::vector<KeyedItem>& arrived) = 0;
  // Sends what is left (`rest`, grouped by destination in rank order, counts[d] of them
  // for member d, none for this rank) and appends every item still to arrive. Collective.
  virtual void finish(std::span<const KeyedItem> rest, std::span<const std::uint64_t> counts,
                      std::vector<KeyedItem>& arrived) = 0;
};

// Refuses (Error) a rest that UpdateStream::finish cannot take: it needs one count per
// member of `comm`, adding up to `items`, and none for this rank.
void check_update_rest(const Communicator& comm, std::size_t items, std::span<const std::uint64_t> counts);

// A read's owner side: writes the values of `key` (a key this rank owns) to out[0, width).
// It may be called from several threads at once, and should only read.
using ReadAnswer = std::function<void(std::uint64_t key, std::uint64_t* out)>;
// The same for every key asked of this rank at once: the values of keys[i] go to
// out[i * width, (i + 1) * width). For owners that answer in one batch (a device's
// lookup kernel) rather than key by key.
using ReadBatchAnswer = std::function<void(std::span<const std::uint64_t> keys, std::span<std::uint64_t> out)>;

// What a transport holds for the run (--transport rma: its windows; zeros otherwise).
class Exchanger {
 public:
  virtual ~Exchanger() = default;
  [[nodiscard]] virtual ExchangeTraits traits() const = 0;
  [[nodiscard]] virtual TransportStats transport_stats() const { return {}; }
  // Sparse personalised all-to-all of vertex ids. With IdsAre::kSet each message may
  // arrive reordered and with duplicates merged.
  virtual IncomingIds all_to_all(const Communicator& comm, const OutgoingIds& outgoing, IdsAre kind) = 0;
  // Union of every rank's sorted, duplicate-free id list, sorted, on every rank.
  virtual std::vector<std::uint64_t> gather_ids(const Communicator& comm, std::span<const std::uint64_t> mine) = 0;
  // Concatenation of equal-sized bitmap slices (64-bit words) in rank order. With a
  // mask (as long as `all`, and the same on every member) only the bits at the mask's
  // positions travel, packed (core/bit_compaction.hpp): each member sends the bits of its
  // slice that its slice of the mask selects, and every bit outside the mask arrives 0.
  virtual void gather_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine,
                             std::span<std::uint64_t> all, std::span<const std::uint64_t> mask = {}) = 0;
  // A ring shift of equal-sized bitmaps (64-bit words): each member sends `mine` to its
  // successor (rank + 1, wrapping) and receives its predecessor's into `received`.
  virtual void shift_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine,
                            std::span<std::uint64_t> received) = 0;
  // Keyed updates to their owners: `items` grouped by destination rank in rank order,
  // counts[d] of them for rank d. Returns the items for this rank. When the exchanger
  // merges (traits().merges_updates) there is one per key, the one with the smallest
  // value, sorted by key; otherwise every item sent, in no particular order.
  virtual std::vector<KeyedItem> update(const Communicator& comm, std::span<const KeyedItem> items,
                                        std::span<const std::uint64_t> counts) = 0;
  // A batched read: keys[i] (grouped by owner rank like update's items) is answered by
  // its owner with answer(key, out) and its `width` values come back in
  // result[i * width, (i + 1) * width).
  std::vector<std::uint64_t> read(const Communicator& comm, std::span<const std::uint64_t> keys,
                                  std::span<const std::uint64_t> counts, std::size_t width, const ReadAnswer& answer);
  // The same with the owner answering every key asked of it in one call.
  virtual std::vector<std::uint64_t> read_batch(const Communicator& comm, std::span<const std::uint64_t> keys,
                                                std::span<const std::uint64_t> counts, std::size_t width,
                                                const ReadBatchAnswer& answer) = 0;
  // A fold of keyed updates to their owners over `comm`, pushed in batches. Collective
  // (every member opens the same streams in the same order, and finishes each). Every
  // key pushed is below `key_bound` and every value below `value_bound` (the same on
  // every member), which lets a stream carry an item in one word when both fit. This
  // one buffers what is pushed and sends it with update() at the finish; an exchanger
  // that pipelines overrides it and says so in traits().
  virtual std::unique_ptr<UpdateStream> open_updates(const Communicator& comm, std::uint64_t key_bound,
                                                     std::uint64_t value_bound);
};

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
