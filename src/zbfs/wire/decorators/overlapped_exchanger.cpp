#include "zbfs/wire/decorators/overlapped_exchanger.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <utility>

#include "zbfs/codec/frame.hpp"
#include "zbfs/core/byte_buffer.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/metrics/communicator_metrics.hpp"
#include "zbfs/wire/transport_kind.hpp"

namespace zbfs {
namespace {

// The bits of the values below `bound`.
int bits_below(std::uint64_t bound) { return bound <= 1 ? 0 : static_cast<int>(std::bit_width(bound - 1)); }

// One stream's fold: batches framed (or not) by the codec, sent as they come; arrivals
// decoded back into items. Codec work, ids and frames are booked to the communicator's
// phase metrics as each batch leaves or arrives; the traffic, by the message stream at
// its finish.
class PipelinedUpdates final : public UpdateStream {
 public:
  // `value_bits`: an item is one word, the key above value_bits bits of value; or -1:
  // two words, key then value.
  // `words`: scratch, kept by the exchanger from stream to stream.
  PipelinedUpdates(const Communicator& comm, StreamChannel& channel, MessageCodec& codec, std::size_t batch_items,
                   std::uint64_t max_ids, std::uint64_t shuffle_seed, int value_bits, std::vector<std::uint64_t>& words)
      : comm_(comm),
        stream_(comm, channel, shuffle_seed),
        codec_(codec),
        batch_items_(batch_items),
        max_ids_(max_ids),
        value_bits_(value_bits),
        item_words_(value_bits < 0 ? 2 : 1),
        words_(words) {}

  [[nodiscard]] std::size_t batch_items() const override { return batch_items_; }

  void push(int destination, std::span<const KeyedItem> items) override {
    if (items.empty()) return;
    bool framed = false;
    std::vector<std::uint8_t> bytes = encode(destination, items, framed);
    stream_.send(destination, std::move(bytes), framed);
  }

  void poll(std::vector<KeyedItem>& arrived) override {
    messages_.clear();
    stream_.poll(messages_);
    decode_all(arrived);
  }

  void finish(std::span<const KeyedItem> rest, std::span<const std::uint64_t> counts,
              std::vector<KeyedItem>& arrived) override {
    check_update_rest(comm_, rest.size(), counts);
    const auto members = static_cast<std::size_t>(comm_.size());
    // Each member's last message carries what is left for it.
    std::vector<std::vector<std::uint8_t>> last_bytes(members);
    std::vector<Communicator::Piece> last(members);
    std::size_t first = 0;
    for (std::size_t d = 0; d < members; ++d) {
      const std::span<const KeyedItem> items = rest.subspan(first, counts[d]);
      first += counts[d];
      if (items.empty()) continue;
      last_bytes[d] = encode(static_cast<int>(d), items, last[d].flagged);
      last[d].bytes = last_bytes[d];
    }
    messages_.clear();
    stream_.finish(last, messages_);
    decode_all(arrived);
  }

 private:
  std::vector<std::uint8_t> encode(int destination, std::span<const KeyedItem> items, bool& framed) {
    // The ids a plain update exchange would send: a key and a value per item.
    if (PhaseMetrics* metrics = phase_metrics_of(comm_); metrics != nullptr) metrics->add_ids(2 * items.size());
    words_.resize(item_words_ * items.size());
    if (item_words_ == 1) {
      const auto bits = static_cast<unsigned>(value_bits_);
      const int key_room = 64 - value_bits_;  // the bits left for the key
      for (std::size_t i = 0; i < items.size(); ++i) {
        const KeyedItem& item = items[i];
        if (static_cast<int>(std::bit_width(item.value)) > value_bits_ ||
            static_cast<int>(std::bit_width(item.key)) > key_room) {
          throw Error(ExitCode::kFailure, "update stream: item (" + std::to_string(item.key) + ", " +
                                              std::to_string(item.value) + ") outside the stream's bounds");
        }
        words_[i] = (bits == 64 ? 0 : item.key << bits) | item.value;
      }
    } else {
      for (std::size_t i = 0; i < items.size(); ++i) {
        words_[2 * i] = items[i].key;
        words_[2 * i + 1] = items[i].value;
      }
    }
    framed = false;
    const std::span<const std::uint8_t> raw(reinterpret_cast<const std::uint8_t*>(words_.data()),
                                            words_.size() * sizeof(std::uint64_t));
    if (codec_.passthrough()) return {raw.begin(), raw.end()};
    const Stopwatch clock;
    ByteBuffer frame;
    const MessageCodec::Encoding how =
        // One-word items are a set: their order does not matter to the receiver (a level
        // keeps the smallest parent whatever the order), and sorted by key their deltas
        // are small. Two-word items keep their pairs in sequence.
        codec_.encode_ids(words_, item_words_ == 1 ? IdsAre::kSet : IdsAre::kSequence, link_cost_to(comm_, destination),
                          frame);
    const double encode_s = clock.elapsed_s();
    framed = how.framed;
    std::vector<std::uint8_t> bytes = how.framed ? std::vector<std::uint8_t>(frame.bytes().begin(), frame.bytes().end())
                                                 : std::vector<std::uint8_t>(raw.begin(), raw.end());
    if (PhaseMetrics* metrics = phase_metrics_of(comm_); metrics != nullptr) {
      metrics->add_frame(how.codec);
      metrics->add_codec_work(raw.size(), bytes.size(), encode_s, 0);
    }
    return bytes;
  }

  void decode_all(std::vector<KeyedItem>& arrived) {
    const Stopwatch clock;
    bool framed_any = false;
    for (const MessageStream::Message& message : messages_) {
      std::uint64_t words = 0;
      if (message.flagged) {
        framed_any = true;
        const FrameHeader header = read_frame_header(message.bytes, max_ids_);
        if (header.frame_bytes() != message.bytes.size()) throw DecodeError("message is not exactly one frame");
        words = header.count;
        words_.resize(static_cast<std::size_t>(words));
        decode_frame_into(message.bytes, header, words_.data());
      } else {
        if (message.bytes.size() % (item_words_ * sizeof(std::uint64_t)) != 0) {
          throw DecodeError("unframed update batch of " + std::to_string(message.bytes.size()) + " bytes");
        }
        words = message.bytes.size() / sizeof(std::uint64_t);
        words_.resize(static_cast<std::size_t>(words));
        if (words > 0) std::memcpy(words_.data(), message.bytes.data(), message.bytes.size());
      }
      if (words % item_words_ != 0) throw DecodeError("an update batch of " + std::to_string(words) + " words");
      if (item_words_ == 1) {
        const auto bits = static_cast<unsigned>(value_bits_);
        const std::uint64_t value_mask = bits == 0 ? 0 : ~std::uint64_t{0} >> (64 - bits);
        for (std::size_t i = 0; i < words; ++i) {
          arrived.push_back({bits == 64 ? 0 : words_[i] >> bits, words_[i] & value_mask});
        }
      } else {
        for (std::size_t i = 0; i < words; i += 2) arrived.push_back({words_[i], words_[i + 1]});
      }
    }
    if (framed_any) {
      if (PhaseMetrics* metrics = phase_metrics_of(comm_); metrics != nullptr) {
        metrics->add_codec_work(0, 0, 0, clock.elapsed_s());
      }
    }
  }

  const Communicator& comm_;
  MessageStream stream_;
  MessageCodec& codec_;
  std::size_t batch_items_;
  std::uint64_t max_ids_;
  int value_bits_;
  std::size_t item_words_;
  std::vector<MessageStream::Message> messages_;
  std::vector<std::uint64_t>& words_;  // scratch
};

}  // namespace

OverlappedExchanger::OverlappedExchanger(std::unique_ptr<Exchanger> inner, MessageCodec codec,
                                         std::uint64_t batch_bytes, std::uint64_t max_ids_per_message,
                                         std::uint64_t shuffle_seed)
    : inner_(std::move(inner)),
      codec_(std::move(codec)),
      batch_bytes_(batch_bytes),
      max_ids_(max_ids_per_message),
      shuffle_seed_(shuffle_seed) {
  if (batch_bytes_ < kMinBatchBytes) {
    throw Error(ExitCode::kUsage,
                "--batch-bytes: a batch must hold at least one word (" + std::to_string(kMinBatchBytes) + " bytes)");
  }
}

OverlappedExchanger::~OverlappedExchanger() = default;

ExchangeTraits OverlappedExchanger::traits() const {
  ExchangeTraits traits = inner_->traits();
  traits.pipelines_updates = true;
  return traits;
}

std::unique_ptr<UpdateStream> OverlappedExchanger::open_updates(const Communicator& comm, std::uint64_t key_bound,
                                                                std::uint64_t value_bound) {
  Group& group = groups_[comm.world_ranks()];
  if (!group.channel) group.channel = std::make_unique<StreamChannel>(comm);
  const std::uint64_t seed = MessageStream::nth_shuffle_seed(shuffle_seed_, ++streams_opened_);
  // One word per item when key and value fit in it together.
  const int key_bits = bits_below(key_bound);
  const int value_bits = bits_below(value_bound);
  const bool one_word = key_bits + value_bits <= 64;
  const std::size_t item_bytes = one_word ? sizeof(std::uint64_t) : sizeof(KeyedItem);
  return std::make_unique<PipelinedUpdates>(
      comm, *group.channel, codec_, static_cast<std::size_t>(std::max<std::uint64_t>(1, batch_bytes_ / item_bytes)),
      max_ids_, seed, one_word ? value_bits : -1, group.words);
}

}  // namespace zbfs
