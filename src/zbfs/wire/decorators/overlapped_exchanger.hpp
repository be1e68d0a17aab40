// OverlappedExchanger (--overlap on): an Exchanger whose update folds are pipelined.
// open_updates gives a stream on which each pushed batch leaves at once as its own
// message (mpi/message_stream.hpp: a nonblocking send). An item travels as one word
// (key in the high bits, value in the low ones) when the stream's bounds leave room for
// both, else as two; the words are framed by the run's codec when it
// has one (auto prices each batch as the message it is, so a small batch's latency
// weighs against compressing it), and every poll decodes what has arrived. The step that
// pushes keeps expanding while its batches travel; it ends with one last message to
// every member, and no extra round or barrier. Every other operation goes to the wrapped
// exchanger (the direct one) unchanged.
//
// Each group of ranks that folds through a stream gets a StreamChannel at its first
// stream, kept for the run and found by the members' world ranks, as RmaExchange finds
// its windows; a group has one stream open at a time. `shuffle_seed` (tests only) holds
// sends back and releases them in a pseudo-random order (MessageStream's hook).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "zbfs/mpi/message_stream.hpp"
#include "zbfs/wire/decorators/forwarding_exchanger.hpp"
#include "zbfs/wire/direct/direct_exchanger.hpp"
#include "zbfs/wire/direct/message_codec.hpp"
#include "zbfs/wire/exchanger.hpp"

namespace zbfs {

class OverlappedExchanger final : public ForwardingExchanger {
 public:
  // `batch_bytes`: the raw size a destination's batch gathers before it leaves.
  OverlappedExchanger(std::unique_ptr<Exchanger> inner, MessageCodec codec, std::uint64_t batch_bytes,
                      std::uint64_t max_ids_per_message, std::uint64_t shuffle_seed = 0);
  ~OverlappedExchanger() override;

  [[nodiscard]] ExchangeTraits traits() const override;
  std::unique_ptr<UpdateStream> open_updates(const Communicator& comm, std::uint64_t key_bound,
                                             std::uint64_t value_bound) override;

 protected:
  [[nodiscard]] Exchanger& target() const override { return *inner_; }

 private:
  std::unique_ptr<Exchanger> inner_;
  MessageCodec codec_;
  std::uint64_t batch_bytes_;
  std::uint64_t max_ids_;
  std::uint64_t shuffle_seed_;
  std::uint64_t streams_opened_ = 0;  // varies the test hook's order from stream to stream
  // A group's channel, and the words its streams (one open at a time, as a channel's
  // tags allow) code batches through, kept so that their pages are not mapped afresh
  // at every level.
  struct Group {
    std::unique_ptr<StreamChannel> channel;
    std::vector<std::uint64_t> words;
  };
  std::map<std::vector<int>, Group> groups_;
};

}  // namespace zbfs
