#include "zbfs/wire/routed/routed_update_stream.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>

#include "zbfs/core/error.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/metrics/communicator_metrics.hpp"
#include "zbfs/wire/routed/hop_codec.hpp"

namespace zbfs {
namespace {

std::vector<MessageStream::Lane> lanes_of(const StreamRoute& route) {
  std::vector<MessageStream::Lane> lanes;
  for (const RoutePlan::HopPeers& hop : route.peers) lanes.push_back({hop.to, hop.from});
  return lanes;
}

}  // namespace

StreamRoute::StreamRoute(const RoutePlan& plan_, int me_)
    : plan(plan_), me(me_), ranks(plan_.ranks()), peers(plan_.hop_peers(me_)) {
  if (static_cast<int>(peers.size()) > MessageStream::kMaxLanes) {
    throw Error(ExitCode::kFailure, "a route of " + std::to_string(peers.size()) + " hops is too long to stream");
  }
  for (const RoutePlan::HopPeers& hop : peers) {
    first_bucket.push_back(buckets);
    buckets += hop.to.size();
  }
  constexpr std::size_t kTabledHops = 3;
  if (peers.size() > kTabledHops) return;
  slots.assign(peers.size(), std::vector<std::int32_t>(static_cast<std::size_t>(ranks), kStays));
  for (std::size_t h = 0; h < peers.size(); ++h) {
    for (int d = 0; d < ranks; ++d) {
      slots[h][static_cast<std::size_t>(d)] = slot_of_next(h, plan.next(static_cast<int>(h), me, d));
    }
  }
}

int StreamRoute::slot_of_next(std::size_t hop, int next) const {
  if (next == me) return kStays;
  const std::vector<int>& to = peers[hop].to;
  const auto at = std::lower_bound(to.begin(), to.end(), next);
  return at == to.end() || *at != next ? kNotAPeer : static_cast<int>(at - to.begin());
}

RoutedUpdateStream::RoutedUpdateStream(const Communicator& comm, StreamChannel& channel, const StreamRoute& route,
                                       Merge merge, MessageCodec* codec, std::size_t batch_items,
                                       std::uint64_t max_items, std::uint64_t shuffle_seed)
    : comm_(comm),
      route_(route),
      stream_(comm, channel, lanes_of(route), shuffle_seed),
      merge_(merge == Merge::kOnePerKey),
      codec_(codec != nullptr && !codec->passthrough() ? codec : nullptr),
      batch_items_(std::max<std::size_t>(1, batch_items)),
      max_items_(max_items),
      hops_(route.hops()),
      buckets_(route.buckets),
      hop_bytes_(hops_, 0) {
  if (route.ranks != comm.size() || route.me != comm.rank()) {
    throw Error(ExitCode::kFailure, "routed update stream: a route for another communicator");
  }
}

void RoutedUpdateStream::place(std::size_t hop, const HopItem& item) {
  for (; hop < hops_; ++hop) {
    const int slot = route_.slot(hop, item.destination);
    if (slot == StreamRoute::kStays) continue;  // it stays here for this hop
    if (slot == StreamRoute::kNotAPeer) {
      throw Error(ExitCode::kFailure, "routed update stream: an item for rank " + std::to_string(item.destination) +
                                          " held at hop " + std::to_string(hop) +
                                          " where the route never brings one (a rank broke the route)");
    }
    if (stream_.closed(static_cast<int>(hop))) {
      throw Error(ExitCode::kFailure, "routed update stream: an item for hop " + std::to_string(hop) +
                                          " after it closed (a rank broke the route)");
    }
    std::vector<HopItem>& waiting = bucket(hop, slot);
    waiting.push_back(item);
    if (waiting.size() >= batch_items_) {
      bool flagged = false;
      std::vector<std::uint8_t> bytes = take_bucket(hop, slot, flagged);
      stream_.send(static_cast<int>(hop), route_.peers[hop].to[static_cast<std::size_t>(slot)], std::move(bytes),
                   flagged);
    }
    return;
  }
  if (item.destination != static_cast<std::uint64_t>(route_.me)) {
    throw Error(ExitCode::kFailure, "routed update stream: an item ended on the wrong rank");
  }
  delivered_.push_back({item.key, item.value});
}

std::vector<std::uint8_t> RoutedUpdateStream::take_bucket(std::size_t hop, int slot, bool& flagged) {
  std::vector<HopItem>& items = bucket(hop, slot);
  const int to = route_.peers[hop].to[static_cast<std::size_t>(slot)];
  std::sort(items.begin(), items.end(), [](const HopItem& a, const HopItem& b) {
    return std::tie(a.destination, a.key, a.value) < std::tie(b.destination, b.key, b.value);
  });
  if (merge_) {
    // Sorted, the first of each (destination, key) has the smallest value.
    const auto end = std::unique(items.begin(), items.end(), [](const HopItem& a, const HopItem& b) {
      return a.destination == b.destination && a.key == b.key;
    });
    merged_items_ += static_cast<std::uint64_t>(items.end() - end);
    items.erase(end, items.end());
  }
  words_.clear();
  append_hop_message(items, words_);
  items.clear();
  flagged = false;
  if (codec_ != nullptr) {
    const Stopwatch clock;
    const std::uint64_t raw = words_.size() * sizeof(std::uint64_t);
    HopEncoding encoded = encode_hop_message(words_, HopLayout{}, *codec_, link_cost_to(comm_, to));
    words_ = std::move(encoded.words);
    flagged = true;
    if (PhaseMetrics* metrics = phase_metrics_of(comm_); metrics != nullptr) {
      for (const CodecId codec : encoded.frames) metrics->add_frame(codec);
      metrics->add_codec_work(raw, words_.size() * sizeof(std::uint64_t), clock.elapsed_s(), 0);
    }
  }
  std::vector<std::uint8_t> bytes(words_.size() * sizeof(std::uint64_t));
  if (!bytes.empty()) std::memcpy(bytes.data(), words_.data(), bytes.size());
  hop_bytes_[hop] += bytes.size();
  return bytes;
}

void RoutedUpdateStream::take_messages() {
  for (const MessageStream::Message& message : messages_) {
    // An empty last message carries nothing; any other is one hop message.
    if (message.bytes.empty()) continue;
    if (message.bytes.size() % sizeof(std::uint64_t) != 0) {
      throw Error(ExitCode::kFailure, "routed exchange: malformed hop message");
    }
    words_.resize(message.bytes.size() / sizeof(std::uint64_t));
    std::memcpy(words_.data(), message.bytes.data(), message.bytes.size());
    if (message.flagged) {
      const Stopwatch clock;
      words_ = decode_hop_message(words_, HopLayout{}, max_items_);
      if (PhaseMetrics* metrics = phase_metrics_of(comm_); metrics != nullptr) {
        metrics->add_codec_work(0, 0, 0, clock.elapsed_s());
      }
    }
    parsed_.clear();
    parse_hop_message(words_, route_.ranks, parsed_);
    const auto next_hop = static_cast<std::size_t>(message.lane) + 1;
    for (const HopItem& item : parsed_) place(next_hop, item);
  }
  messages_.clear();
}

void RoutedUpdateStream::push(int destination, std::span<const KeyedItem> items) {
  if (destination < 0 || destination >= route_.ranks || destination == route_.me) {
    throw Error(ExitCode::kFailure, "routed update stream: no member " + std::to_string(destination) + " to push to");
  }
  if (finishing_) throw Error(ExitCode::kFailure, "routed update stream: a push after the finish");
  for (const KeyedItem& item : items) place(0, {static_cast<std::uint64_t>(destination), item.key, item.value});
}

void RoutedUpdateStream::poll(std::vector<KeyedItem>& arrived) {
  stream_.poll(messages_);
  take_messages();
  arrived.insert(arrived.end(), delivered_.begin(), delivered_.end());
  delivered_.clear();
}

void RoutedUpdateStream::close_ready_hops() {
  for (std::size_t hop = 0; hop < hops_; ++hop) {
    const int lane = static_cast<int>(hop);
    if (stream_.closed(lane)) continue;
    // Hop 0 holds this rank's own items, all pushed once it finishes; hop h + 1 also
    // what arrives at hop h, all in once every rank that can hand one over closed it.
    const bool ready = hop == 0 ? finishing_ : stream_.closed(lane - 1) && stream_.done(lane - 1);
    if (!ready) return;
    const auto members = static_cast<std::size_t>(route_.ranks);
    std::vector<std::vector<std::uint8_t>> last_bytes(members);
    std::vector<Communicator::Piece> last(members);
    const std::vector<int>& peers_to = route_.peers[hop].to;
    for (std::size_t slot = 0; slot < peers_to.size(); ++slot) {
      if (bucket(hop, static_cast<int>(slot)).empty()) continue;
      const auto d = static_cast<std::size_t>(peers_to[slot]);
      last_bytes[d] = take_bucket(hop, static_cast<int>(slot), last[d].flagged);
      last[d].bytes = last_bytes[d];
    }
    stream_.close(lane, last);
  }
}

void RoutedUpdateStream::finish(std::span<const KeyedItem> rest, std::span<const std::uint64_t> counts,
                                std::vector<KeyedItem>& arrived) {
  check_update_rest(comm_, rest.size(), counts);
  const auto members = static_cast<std::size_t>(route_.ranks);
  if (finishing_) throw Error(ExitCode::kFailure, "routed update stream: finished twice");
  std::size_t first = 0;
  for (std::size_t d = 0; d < members; ++d) {
    for (std::uint64_t i = 0; i < counts[d]; ++i, ++first) place(0, {d, rest[first].key, rest[first].value});
  }
  finishing_ = true;
  for (;;) {
    take_messages();
    close_ready_hops();
    bool ended = true;
    for (std::size_t hop = 0; hop < hops_; ++hop) {
      ended = ended && stream_.closed(static_cast<int>(hop)) && stream_.done(static_cast<int>(hop));
    }
    if (ended) break;
    stream_.wait(messages_);
  }
  stream_.complete();
  if (PhaseMetrics* metrics = phase_metrics_of(comm_); metrics != nullptr && route_.ranks > 1) {
    metrics->add_route(merged_items_, hop_bytes_);
  }
  arrived.insert(arrived.end(), delivered_.begin(), delivered_.end());
  delivered_.clear();
}

}  // namespace zbfs
