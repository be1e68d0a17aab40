// Exchanger: the one interface through which every exchange of the distributed BFS and
// validator passes, so that compression, relay routing, pipelining and transports plug
// in without touching the kernels. All members are collective over the communicator they
// are given. Implementations are built by one factory from the run configuration
// (wire/exchanger_factory.hpp): the DirectExchanger (wire/direct/), the RoutedExchanger
// of --route (wire/routed/), and decorators that wrap another (wire/decorators/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "zbfs/mpi/communicator.hpp"
#include "zbfs/mpi/piece_rounds.hpp"
#include "zbfs/wire/id_messages.hpp"

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

// Refuses (Error) a caller's grouping that is not one count per member of `comm` adding up
// to the `items` given.
void check_exchange_counts(const Communicator& comm, std::size_t items, std::span<const std::uint64_t> counts);

}  // namespace zbfs
