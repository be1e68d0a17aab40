// The pipelined exchange (mpi/message_stream.hpp) and the update streams built on it
// (wire/decorators/overlapped_exchanger.hpp): every message sent arrives once, whole, flagged
// as sent, whether it left early or with the last ones, in any order the test hook
// makes; consecutive streams with no collective between them never mix; the traffic is
// booked. Update streams deliver every item pushed (one word per item or two, with and
// without a codec), refuse items outside their bounds, and the buffered default gives
// what update() gives.
#include "zbfs/mpi/message_stream.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "zbfs/codec/codec_cost.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/metrics/phase_metrics.hpp"
#include "zbfs/wire/exchanger_factory.hpp"

namespace zbfs {
namespace {

Communicator world() { return Communicator::duplicate(MPI_COMM_WORLD); }

// What rank s sends to rank d in stream r: its messages (the last one goes at the
// finish), each of a pseudo-random length and content.
struct Planned {
  std::vector<std::uint8_t> bytes;
  bool flagged = false;
};
std::vector<Planned> plan(int s, int d, int r) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(s * 7919 + d * 104729 + r * 1299709 + 1));
  std::vector<Planned> messages(1 + rng() % 5);
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const std::size_t length = rng() % 3 == 0 ? 0 : rng() % 3000;
    messages[i].flagged = rng() % 2 == 0;
    for (std::size_t k = 0; k < length; ++k) {
      messages[i].bytes.push_back(static_cast<std::uint8_t>(s * 31 + d * 7 + r * 3 + static_cast<int>(i + k)));
    }
  }
  return messages;
}

using Received = std::tuple<int, bool, std::vector<std::uint8_t>>;

// One stream over `comm`: every planned message but the last goes out with a poll after
// each, the last ones at the finish; what arrived is checked against the senders' plans.
void run_stream(const Communicator& comm, StreamChannel& channel, int r, std::uint64_t seed) {
  const int p = comm.size();
  const int me = comm.rank();
  MessageStream stream(comm, channel, seed);
  std::vector<MessageStream::Message> arrived;
  std::vector<std::vector<Planned>> mine(static_cast<std::size_t>(p));
  for (int d = 0; d < p; ++d) {
    if (d != me) mine[static_cast<std::size_t>(d)] = plan(me, d, r);
  }
  // Interleaved over the destinations, polling as it goes.
  for (std::size_t i = 0;; ++i) {
    bool any = false;
    for (int d = 0; d < p; ++d) {
      const auto& messages = mine[static_cast<std::size_t>(d)];
      if (i + 1 >= messages.size()) continue;
      any = true;
      stream.send(d, messages[i].bytes, messages[i].flagged);
      stream.poll(arrived);
    }
    if (!any) break;
  }
  std::vector<Communicator::Piece> last(static_cast<std::size_t>(p));
  for (int d = 0; d < p; ++d) {
    if (d == me) continue;
    const Planned& l = mine[static_cast<std::size_t>(d)].back();
    last[static_cast<std::size_t>(d)] = {l.bytes, l.flagged};
  }
  stream.finish(last, arrived);
  std::vector<Received> got;
  for (auto& m : arrived) got.emplace_back(m.source, m.flagged, m.bytes);
  std::vector<Received> want;
  for (int s = 0; s < p; ++s) {
    if (s == me) continue;
    for (const Planned& m : plan(s, me, r)) want.emplace_back(s, m.flagged, m.bytes);
  }
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want) << "stream " << r << " seed " << seed;
}

TEST(MessageStream, EveryMessageArrivesOnceInAnyOrder) {
  const Communicator comm = world();
  StreamChannel channel(comm);
  for (const std::uint64_t seed : {0, 1, 7}) {
    for (int r = 0; r < 3; ++r) run_stream(comm, channel, r, seed);
  }
}

// No collective between streams, and one rank late into each: a member already in the
// next stream cannot be taken for a sender of this one.
TEST(MessageStream, BackToBackStreamsDoNotMix) {
  const Communicator comm = world();
  StreamChannel channel(comm);
  for (int r = 0; r < 6; ++r) {
    if (comm.rank() == r % comm.size()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    run_stream(comm, channel, 10 + r, 0);
  }
}

// On the job's halves and on the job, through one channel each.
TEST(MessageStream, SubCommunicators) {
  const Communicator comm = world();
  const Communicator half = comm.split(comm.rank() % 2, comm.rank());
  StreamChannel half_channel(half);
  StreamChannel whole_channel(comm);
  for (int r = 0; r < 2; ++r) {
    run_stream(half, half_channel, 20 + r, 0);
    run_stream(comm, whole_channel, 30 + r, 3);
  }
}

// Two lanes around a ring, one each way: lane 1 relays what lane 0 brought, so it can
// only close once lane 0 is done, and each lane hears only from its own peers.
TEST(MessageStream, LanesCloseOnTheirOwn) {
  const Communicator comm = world();
  const int p = comm.size();
  if (p < 2) GTEST_SKIP() << "needs a ring";
  const int me = comm.rank();
  const int after = (me + 1) % p;
  const int before = (me + p - 1) % p;
  StreamChannel channel(comm);
  for (const std::uint64_t seed : {0, 4}) {
    std::vector<MessageStream::Lane> lanes{{{after}, {before}}, {{before}, {after}}};
    if (p == 2) lanes = {{{after}, {after}}, {{after}, {after}}};
    MessageStream stream(comm, channel, lanes, seed);
    EXPECT_THROW(stream.send(1, me, {1}, false), Error);
    const std::vector<std::uint8_t> mine{static_cast<std::uint8_t>(me), 1};
    stream.send(0, after, mine, true);
    std::vector<Communicator::Piece> last(static_cast<std::size_t>(p));
    stream.close(0, last);
    EXPECT_THROW(stream.send(0, after, mine, false), Error);
    std::vector<MessageStream::Message> arrived;
    while (!stream.done(0)) stream.wait(arrived);
    // Lane 0's message from `before`, and its empty last one (lane 1's may be in too:
    // `after` may have closed it already).
    std::vector<std::uint8_t> relayed;
    std::vector<MessageStream::Message> lane1;
    for (auto& m : arrived) {
      if (m.lane == 1) {
        lane1.push_back(std::move(m));
        continue;
      }
      EXPECT_EQ(m.lane, 0);
      EXPECT_EQ(m.source, before);
      if (!m.bytes.empty()) {
        EXPECT_TRUE(m.flagged);
        relayed = m.bytes;
      }
    }
    EXPECT_EQ(relayed, (std::vector<std::uint8_t>{static_cast<std::uint8_t>(before), 1}));
    last[static_cast<std::size_t>(lanes[1].to[0])] = {relayed, false};
    stream.close(1, last);
    while (!stream.done(1)) stream.wait(lane1);
    stream.complete();
    ASSERT_EQ(lane1.size(), 1u);
    EXPECT_EQ(lane1[0].lane, 1);
    EXPECT_EQ(lane1[0].source, lanes[1].from[0]);
    // What `after` relayed back is this rank's own message.
    EXPECT_EQ(lane1[0].bytes, mine);
  }
}

TEST(MessageStream, BooksItsTraffic) {
  Communicator comm = world();
  PhaseMetrics metrics;
  comm.observe(&metrics);
  metrics.set_current(Phase::kRowExchange);
  StreamChannel channel(comm);
  MessageStream stream(comm, channel);
  const int p = comm.size();
  std::vector<std::uint8_t> bytes(100, 1);
  std::uint64_t sent_bytes = 0;
  std::uint64_t sent_messages = 0;
  for (int d = 0; d < p; ++d) {
    if (d == comm.rank()) continue;
    stream.send(d, bytes, false);
    sent_bytes += bytes.size();
    ++sent_messages;
  }
  std::vector<Communicator::Piece> last(static_cast<std::size_t>(p));
  std::vector<MessageStream::Message> arrived;
  stream.finish(last, arrived);
  // Each member's message and its empty last one.
  EXPECT_EQ(arrived.size(), 2 * static_cast<std::size_t>(p - 1));
  const PhaseCounters& c = metrics[Phase::kRowExchange];
  EXPECT_EQ(c.messages, p > 1 ? 2 * sent_messages : 0);
  EXPECT_EQ(c.raw_bytes, p > 1 ? sent_bytes : 0);
  EXPECT_GE(stream.times().mpi_s, 0.0);
  EXPECT_GE(stream.times().wait_s, 0.0);
  EXPECT_DOUBLE_EQ(c.stream_held_s, p > 1 ? stream.times().mpi_s + stream.times().wait_s : 0.0);
  // The wait at the finish is a point-to-point wait: inside MPI, not a collective's wait.
  EXPECT_DOUBLE_EQ(c.mpi_s, c.stream_held_s);
  EXPECT_DOUBLE_EQ(c.stream_wait_s, p > 1 ? stream.times().wait_s : 0.0);
  EXPECT_EQ(c.wait_s, 0.0);
}

TEST(MessageStream, RefusesMisuse) {
  const Communicator comm = world();
  StreamChannel channel(comm);
  MessageStream stream(comm, channel);
  EXPECT_THROW(stream.send(comm.rank(), {1, 2}, false), Error);
  EXPECT_THROW(stream.send(comm.size(), {1, 2}, false), Error);
  std::vector<MessageStream::Message> arrived;
  const std::vector<Communicator::Piece> wrong(static_cast<std::size_t>(comm.size()) + 1);
  EXPECT_THROW(stream.finish(wrong, arrived), Error);
  const std::vector<Communicator::Piece> last(static_cast<std::size_t>(comm.size()));
  stream.finish(last, arrived);
  EXPECT_THROW(stream.finish(last, arrived), Error);
}

// Update streams: items to owner (key % p), pushed in batches of pseudo-random sizes.
std::vector<KeyedItem> items_for(int s, int d, int p, std::uint64_t key_bound, std::uint64_t value_bound) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(s * 131 + d * 17 + 5));
  std::vector<KeyedItem> items(rng() % 300);
  for (KeyedItem& item : items) {
    const std::uint64_t slots = key_bound / static_cast<std::uint64_t>(p);
    item = {(rng() % slots) * static_cast<std::uint64_t>(p) + static_cast<std::uint64_t>(d), rng() % value_bound};
  }
  return items;
}

std::vector<KeyedItem> stream_updates(Exchanger& exchanger, const Communicator& comm, std::uint64_t key_bound,
                                      std::uint64_t value_bound) {
  const int p = comm.size();
  const int me = comm.rank();
  std::unique_ptr<UpdateStream> stream = exchanger.open_updates(comm, key_bound, value_bound);
  std::vector<KeyedItem> arrived;
  std::vector<KeyedItem> rest;
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(p), 0);
  for (int d = 0; d < p; ++d) {
    if (d == me) continue;
    const std::vector<KeyedItem> items = items_for(me, d, p, key_bound, value_bound);
    // Batches of 1 to 64 items, the remainder at the finish.
    std::size_t at = 0;
    for (std::size_t n = 1; at + n < items.size(); at += n, n = n * 3 % 64 + 1) {
      stream->push(d, std::span<const KeyedItem>(items).subspan(at, n));
      stream->poll(arrived);
    }
    rest.insert(rest.end(), items.begin() + static_cast<std::ptrdiff_t>(at), items.end());
    counts[static_cast<std::size_t>(d)] = items.size() - at;
  }
  stream->finish(rest, counts, arrived);
  return arrived;
}

bool by_key_value(const KeyedItem& a, const KeyedItem& b) {
  return std::tie(a.key, a.value) < std::tie(b.key, b.value);
}

TEST(UpdateStream, PipelinedStreamsDeliverEveryItem) {
  const Communicator comm = world();
  const int p = comm.size();
  static const auto costs = std::make_shared<const CodecCostModel>(CodecCostModel::calibrate());
  // One word per item (20 + 30 bits), two (40 + 40), and the widest one-word split.
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> bounds{
      {std::uint64_t{1} << 20, std::uint64_t{1} << 30},
      {std::uint64_t{1} << 40, std::uint64_t{1} << 40},
      {static_cast<std::uint64_t>(p), ~std::uint64_t{0} >> 8}};
  for (const CodecId codec : {CodecId::kNone, CodecId::kBitpack, CodecId::kZstd}) {
    for (const std::uint64_t seed : {0, 9}) {
      ExchangeSetup setup;
      setup.codec = MessageCodec(CodecChoice{codec}, costs);
      setup.overlap = true;
      setup.batch_bytes = 64;
      setup.overlap_shuffle_seed = seed;
      const std::unique_ptr<Exchanger> exchanger = make_exchanger(std::move(setup));
      ASSERT_TRUE(exchanger->traits().pipelines_updates);
      for (const auto& [key_bound, value_bound] : bounds) {
        std::vector<KeyedItem> got = stream_updates(*exchanger, comm, key_bound, value_bound);
        std::vector<KeyedItem> want;
        for (int s = 0; s < p; ++s) {
          if (s == comm.rank()) continue;
          const std::vector<KeyedItem> from = items_for(s, comm.rank(), p, key_bound, value_bound);
          want.insert(want.end(), from.begin(), from.end());
        }
        std::sort(got.begin(), got.end(), by_key_value);
        std::sort(want.begin(), want.end(), by_key_value);
        if (codec != CodecId::kNone) {
          // A coded batch of one-word items is a set: identical items may be merged.
          got.erase(std::unique(got.begin(), got.end()), got.end());
          want.erase(std::unique(want.begin(), want.end()), want.end());
        }
        EXPECT_EQ(got, want) << "codec " << to_string(codec) << " seed " << seed << " bounds " << key_bound << ", "
                             << value_bound;
      }
    }
  }
}

// Streams along every route, merging or not, with and without a codec, in shuffled
// orders: with merging every key arrives with its smallest value (perhaps more than
// once, merging being per message); without, every item arrives exactly once.
TEST(UpdateStream, RoutedStreamsDeliverEveryItemOnEveryRoute) {
  const Communicator comm = world();
  const int p = comm.size();
  static const auto costs = std::make_shared<const CodecCostModel>(CodecCostModel::calibrate());
  const std::uint64_t key_bound = std::uint64_t{1} << 12;
  const std::uint64_t value_bound = 100;
  std::vector<KeyedItem> want;
  for (int s = 0; s < p; ++s) {
    if (s == comm.rank()) continue;
    const std::vector<KeyedItem> from = items_for(s, comm.rank(), p, key_bound, value_bound);
    want.insert(want.end(), from.begin(), from.end());
  }
  std::sort(want.begin(), want.end(), by_key_value);
  std::map<std::uint64_t, std::uint64_t> smallest;
  for (const KeyedItem& item : want) smallest.emplace(item.key, item.value);  // sorted: the first is the smallest
  for (const RouteKind kind :
       {RouteKind::kDirect, RouteKind::kSparse, RouteKind::kGrid2, RouteKind::kGridK, RouteKind::kHypercube}) {
    for (const bool dedup : {true, false}) {
      for (const CodecId codec : {CodecId::kNone, CodecId::kBitpack}) {
        for (const std::uint64_t seed : {0, 5}) {
          ExchangeSetup setup;
          setup.codec = MessageCodec(CodecChoice{codec}, costs);
          setup.route = RouteChoice{kind, {}, dedup};
          setup.overlap = true;
          setup.batch_bytes = 64;
          setup.overlap_shuffle_seed = seed;
          const std::unique_ptr<Exchanger> exchanger = make_exchanger(std::move(setup));
          ASSERT_TRUE(exchanger->traits().pipelines_updates);
          ASSERT_TRUE(exchanger->traits().relays_updates);
          const std::string what = std::string(to_string(kind)) + (dedup ? "" : " no dedup") + " codec " +
                                   std::string(to_string(codec)) + " seed " + std::to_string(seed);
          for (int round = 0; round < 2; ++round) {
            std::vector<KeyedItem> got = stream_updates(*exchanger, comm, key_bound, value_bound);
            std::sort(got.begin(), got.end(), by_key_value);
            if (!dedup) {
              EXPECT_EQ(got, want) << what;
              continue;
            }
            std::map<std::uint64_t, std::uint64_t> got_smallest;
            for (const KeyedItem& item : got) {
              got_smallest.emplace(item.key, item.value);
              EXPECT_TRUE(std::binary_search(want.begin(), want.end(), item, by_key_value)) << what;
            }
            EXPECT_EQ(got_smallest, smallest) << what;
          }
        }
      }
    }
  }
}

// The buffered default (a direct exchanger's) gives update()'s answer: one item per key,
// the smallest value.
TEST(UpdateStream, BufferedStreamGivesWhatUpdateGives) {
  const Communicator comm = world();
  const int p = comm.size();
  const std::unique_ptr<Exchanger> exchanger = make_exchanger({});
  ASSERT_FALSE(exchanger->traits().pipelines_updates);
  const std::uint64_t key_bound = 1000;
  const std::uint64_t value_bound = 50;
  std::vector<KeyedItem> got = stream_updates(*exchanger, comm, key_bound, value_bound);
  std::map<std::uint64_t, std::uint64_t> smallest;
  for (int s = 0; s < p; ++s) {
    if (s == comm.rank()) continue;
    for (const KeyedItem& item : items_for(s, comm.rank(), p, key_bound, value_bound)) {
      auto [at, fresh] = smallest.emplace(item.key, item.value);
      if (!fresh) at->second = std::min(at->second, item.value);
    }
  }
  std::vector<KeyedItem> want;
  for (const auto& [key, value] : smallest) want.push_back({key, value});
  EXPECT_EQ(got, want);
}

TEST(UpdateStream, RefusesItemsOutsideItsBounds) {
  const Communicator comm = world();
  if (comm.size() < 2) GTEST_SKIP() << "needs a member to send to";
  ExchangeSetup setup;
  setup.overlap = true;
  const std::unique_ptr<Exchanger> exchanger = make_exchanger(std::move(setup));
  std::unique_ptr<UpdateStream> stream = exchanger->open_updates(comm, 1 << 10, 1 << 20);
  const int other = (comm.rank() + 1) % comm.size();
  const KeyedItem too_big{0, std::uint64_t{1} << 60};
  EXPECT_THROW(stream->push(other, std::span<const KeyedItem>(&too_big, 1)), Error);
  std::vector<KeyedItem> arrived;
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(comm.size()), 0);
  stream->finish({}, counts, arrived);
  EXPECT_TRUE(arrived.empty());
}

}  // namespace
}  // namespace zbfs
