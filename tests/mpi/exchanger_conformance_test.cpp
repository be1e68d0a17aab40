// Every Exchanger the factory builds keeps the interface's promises alike: keyed updates
// reach their owners (one per key, the smallest value, when merging; every item
// otherwise), reads return each owner's answer in the order asked, and both work on
// communicators of different sizes through one exchanger (the job and its halves), with
// and without a codec, over matched messages and over one-sided puts (--transport rma).
// The direct exchanger is the reference for the routed ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "zbfs/codec/codec_cost.hpp"
#include "zbfs/mpi/communicator.hpp"
#include "zbfs/wire/decorators/switching_exchanger.hpp"
#include "zbfs/wire/exchanger_factory.hpp"

namespace zbfs {
namespace {

struct Flavour {
  std::string name;
  std::optional<RouteChoice> route;
  CodecId codec = CodecId::kNone;
  Transport transport = Transport::kTwoSided;
  // A SwitchingExchanger (--codec auto's trial): this flavour coded, beside a plain
  // pipelined one, on this path.
  std::optional<ExchangePath> switching = std::nullopt;
};

std::vector<Flavour> flavours() {
  std::vector<Flavour> all{{"direct", std::nullopt},
                           {"direct bitpack", std::nullopt, CodecId::kBitpack},
                           {"direct rma", std::nullopt, CodecId::kNone, Transport::kRma},
                           {"direct rma bitpack", std::nullopt, CodecId::kBitpack, Transport::kRma}};
  RouteChoice hypercube;
  hypercube.kind = RouteKind::kHypercube;
  all.push_back({"hypercube rma", hypercube, CodecId::kNone, Transport::kRma});
  for (const RouteChoice& route : testing::every_route()) all.push_back({route.describe(), route});
  RouteChoice coded;
  coded.kind = RouteKind::kGrid2;
  all.push_back({"grid2 bitpack", coded, CodecId::kBitpack});
  for (const ExchangePath path : {ExchangePath::kCoded, ExchangePath::kPlain}) {
    all.push_back({"switching bitpack, " + std::string(to_string(path)) + " path", std::nullopt, CodecId::kBitpack,
                   Transport::kTwoSided, path});
    all.push_back({"switching grid2 bitpack, " + std::string(to_string(path)) + " path", coded, CodecId::kBitpack,
                   Transport::kTwoSided, path});
  }
  return all;
}

std::unique_ptr<Exchanger> build(const Flavour& flavour) {
  static const auto costs = std::make_shared<const CodecCostModel>(CodecCostModel::calibrate());
  std::unique_ptr<Exchanger> exchanger =
      make_exchanger({ColumnGather::kAllgatherv, MessageCodec(CodecChoice{flavour.codec}, costs), flavour.route,
                      std::uint64_t{1} << 48, nullptr, flavour.transport});
  if (!flavour.switching) return exchanger;
  auto switching = std::make_unique<SwitchingExchanger>(
      std::move(exchanger), make_exchanger({ColumnGather::kAllgatherv, MessageCodec(), flavour.route,
                                            std::uint64_t{1} << 48, nullptr, flavour.transport, true}));
  EXPECT_EQ(switching->path(), ExchangePath::kCoded);
  EXPECT_FALSE(switching->traits().pipelines_updates);
  switching->use(*flavour.switching);
  EXPECT_EQ(switching->path(), *flavour.switching);
  // Settled, the other path is gone for good.
  switching->settle(*flavour.switching);
  const ExchangePath other = *flavour.switching == ExchangePath::kCoded ? ExchangePath::kPlain : ExchangePath::kCoded;
  EXPECT_THROW(switching->use(other), Error);
  EXPECT_EQ(switching->path(), *flavour.switching);
  // The traits are the path's: the plain one pipelines its folds.
  EXPECT_EQ(switching->traits().pipelines_updates, *flavour.switching == ExchangePath::kPlain);
  return switching;
}

// Keys owned round-robin (key % ranks); each rank sends a few items to every rank, some
// keys twice or more with different values, some keys from several ranks.
struct Updates {
  std::vector<KeyedItem> items;  // grouped by owner
  std::vector<std::uint64_t> counts;
};

Updates my_updates(const Communicator& comm, std::uint64_t seed) {
  const int p = comm.size();
  std::mt19937_64 rng(seed * 1000 + static_cast<std::uint64_t>(comm.rank()));
  Updates u;
  u.counts.assign(static_cast<std::size_t>(p), 0);
  for (int d = 0; d < p; ++d) {
    const std::uint64_t n = rng() % 40;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t key = (rng() % 25) * static_cast<std::uint64_t>(p) + static_cast<std::uint64_t>(d);
      u.items.push_back({key, rng() % 1000});
      ++u.counts[static_cast<std::size_t>(d)];
    }
  }
  return u;
}

// What an owner must end with: from every rank's updates (regenerated here), those it owns.
std::vector<KeyedItem> expected_updates(const Communicator& comm, std::uint64_t seed) {
  std::vector<KeyedItem> mine;
  for (int s = 0; s < comm.size(); ++s) {
    // Rank s's items, as my_updates made them on s.
    std::mt19937_64 rng(seed * 1000 + static_cast<std::uint64_t>(s));
    for (int d = 0; d < comm.size(); ++d) {
      const std::uint64_t n = rng() % 40;
      for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t key =
            (rng() % 25) * static_cast<std::uint64_t>(comm.size()) + static_cast<std::uint64_t>(d);
        const std::uint64_t value = rng() % 1000;
        if (d == comm.rank()) mine.push_back({key, value});
      }
    }
  }
  return mine;
}

bool by_key_value(const KeyedItem& a, const KeyedItem& b) { return a.key != b.key ? a.key < b.key : a.value < b.value; }

void check_updates(Exchanger& exchanger, const Communicator& comm, std::uint64_t seed) {
  const Updates u = my_updates(comm, seed);
  std::vector<KeyedItem> got = exchanger.update(comm, u.items, u.counts);
  std::vector<KeyedItem> want = expected_updates(comm, seed);
  std::sort(want.begin(), want.end(), by_key_value);
  if (exchanger.traits().merges_updates) {
    want.erase(
        std::unique(want.begin(), want.end(), [](const KeyedItem& a, const KeyedItem& b) { return a.key == b.key; }),
        want.end());
    EXPECT_TRUE(std::is_sorted(got.begin(), got.end(), by_key_value));
  } else {
    std::sort(got.begin(), got.end(), by_key_value);
  }
  EXPECT_EQ(got, want);
}

// Reads of keys owned round-robin, asked in a shuffled order within each owner; the
// owner answers (key * 3 + field) for each of `width` fields.
void check_reads(Exchanger& exchanger, const Communicator& comm, std::size_t width, std::uint64_t seed) {
  const int p = comm.size();
  std::mt19937_64 rng(seed + static_cast<std::uint64_t>(comm.rank()));
  std::vector<std::uint64_t> keys;
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(p), 0);
  for (int d = 0; d < p; ++d) {
    const std::uint64_t n = rng() % 30;
    for (std::uint64_t i = 0; i < n; ++i) {
      keys.push_back((rng() % 20) * static_cast<std::uint64_t>(p) + static_cast<std::uint64_t>(d));
      ++counts[static_cast<std::size_t>(d)];
    }
  }
  const int me = comm.rank();
  bool misdelivered = false;
  const std::vector<std::uint64_t> values =
      exchanger.read(comm, keys, counts, width, [&](std::uint64_t key, std::uint64_t* out) {
        if (key % static_cast<std::uint64_t>(p) != static_cast<std::uint64_t>(me)) misdelivered = true;
        for (std::size_t f = 0; f < width; ++f) out[f] = key * 3 + f;
      });
  EXPECT_FALSE(misdelivered);
  ASSERT_EQ(values.size(), keys.size() * width);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    for (std::size_t f = 0; f < width; ++f) EXPECT_EQ(values[i * width + f], keys[i] * 3 + f) << "key " << keys[i];
  }
}

TEST(ExchangerConformance, UpdatesAndReadsMatchTheirDefinitionOnEveryExchanger) {
  const Communicator world = Communicator::world();
  // Halves of the job: a second communicator size for the same exchanger.
  const Communicator half = world.split(world.rank() % 2, world.rank());
  for (const Flavour& flavour : flavours()) {
    SCOPED_TRACE(flavour.name);
    const std::unique_ptr<Exchanger> exchanger = build(flavour);
    EXPECT_EQ(exchanger->traits().relays_updates, flavour.route.has_value());
    EXPECT_EQ(exchanger->traits().merges_updates, !flavour.route || flavour.route->dedup);
    for (std::uint64_t round = 0; round < 3; ++round) {
      check_updates(*exchanger, world, round);
      check_updates(*exchanger, half, round + 10);
      check_reads(*exchanger, world, 1 + round, round);
      check_reads(*exchanger, half, 2, round + 20);
    }
  }
}

TEST(ExchangerConformance, BitmapShiftsPassEachMembersWordsToItsSuccessor) {
  const Communicator world = Communicator::world();
  const Communicator half = world.split(world.rank() % 2, world.rank());
  for (const Flavour& flavour : flavours()) {
    SCOPED_TRACE(flavour.name);
    const std::unique_ptr<Exchanger> exchanger = build(flavour);
    for (const Communicator* comm : {&world, &half}) {
      const int p = comm->size();
      const auto word = [](int member, std::size_t i) { return std::uint64_t(member) * 1000003 + i * 7919; };
      std::vector<std::uint64_t> mine(5), received(5, 0);
      for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = word(comm->rank(), i);
      exchanger->shift_bitmap(*comm, mine, received);
      for (std::size_t i = 0; i < mine.size(); ++i) EXPECT_EQ(received[i], word((comm->rank() + p - 1) % p, i));
    }
    std::vector<std::uint64_t> two(2), three(3);
    EXPECT_THROW(exchanger->shift_bitmap(world, two, three), Error);
  }
}

TEST(ExchangerConformance, CountsThatDoNotCoverTheItemsAreRefused) {
  const Communicator world = Communicator::world();
  for (const Flavour& flavour : flavours()) {
    SCOPED_TRACE(flavour.name);
    const std::unique_ptr<Exchanger> exchanger = build(flavour);
    const std::vector<KeyedItem> items(3);
    // The same mistake on every rank, so every rank refuses before any message.
    const std::vector<std::uint64_t> too_few(static_cast<std::size_t>(world.size()), 0);
    EXPECT_THROW(exchanger->update(world, items, too_few), Error);
    const std::vector<std::uint64_t> keys(2, 0);
    const std::vector<std::uint64_t> wrong_size(static_cast<std::size_t>(world.size()) + 1, 0);
    EXPECT_THROW(exchanger->read(world, keys, wrong_size, 1, [](std::uint64_t, std::uint64_t* out) { *out = 0; }),
                 Error);
  }
}

}  // namespace
}  // namespace zbfs
