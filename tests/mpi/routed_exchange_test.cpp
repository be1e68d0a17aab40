// The routed sparse exchange at every rank count the suite runs: each route delivers
// exactly what a plain all-to-all delivers (as multisets without merging, and one item
// per key, the smallest value, with it); start-ups per rank follow the strategy's bound
// under all-to-all traffic; the overload pattern (every rank reads all of one rank's
// elements) reaches the owner once per element when merging; and the sparse exchange
// carries messages of any size, to self too, twice in a row.
#include "zbfs/wire/routed/routed_exchange.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/mpi/communicator.hpp"
#include "zbfs/wire/routed/distributed_array.hpp"

namespace zbfs {
namespace {

struct Traffic {
  std::vector<KeyedItem> items;
  std::vector<std::uint64_t> counts;
};

// Random items for random destinations, with many repeated keys (keys in [0, 50)).
Traffic random_traffic(int ranks, int me, std::uint64_t seed) {
  std::mt19937_64 rng(seed + static_cast<std::uint64_t>(me) * 7919);
  Traffic t;
  t.counts.assign(static_cast<std::size_t>(ranks), 0);
  for (int d = 0; d < ranks; ++d) {
    const std::uint64_t n = rng() % 40;
    for (std::uint64_t i = 0; i < n; ++i) t.items.push_back({rng() % 50, rng() % 1000});
    t.counts[static_cast<std::size_t>(d)] = n;
  }
  return t;
}

// What a plain exchange delivers here: every rank's traffic for this rank.
std::vector<KeyedItem> expected_here(int ranks, int me, std::uint64_t seed, bool merge) {
  std::vector<KeyedItem> all;
  for (int source = 0; source < ranks; ++source) {
    const Traffic t = random_traffic(ranks, source, seed);
    std::uint64_t at = 0;
    for (int d = 0; d < ranks; ++d) {
      for (std::uint64_t i = 0; i < t.counts[static_cast<std::size_t>(d)]; ++i, ++at) {
        if (d == me) all.push_back(t.items[at]);
      }
    }
  }
  const auto by_key = [](const KeyedItem& a, const KeyedItem& b) {
    return std::tie(a.key, a.value) < std::tie(b.key, b.value);
  };
  std::sort(all.begin(), all.end(), by_key);
  if (merge) {
    all.erase(std::unique(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.key == b.key; }),
              all.end());
  }
  return all;
}

std::vector<RoutePlan> every_plan(int ranks) {
  std::vector<RoutePlan> plans;
  for (const RouteKind k : {RouteKind::kDirect, RouteKind::kSparse, RouteKind::kGrid2, RouteKind::kHypercube}) {
    plans.emplace_back(k, ranks);
  }
  plans.emplace_back(RouteKind::kGridK, ranks, std::vector<int>{ranks});
  if (ranks == 8) plans.emplace_back(RouteKind::kGridK, ranks, std::vector<int>{2, 2, 2});
  if (ranks == 6) plans.emplace_back(RouteKind::kGridK, ranks, std::vector<int>{3, 2});
  return plans;
}

std::vector<std::pair<RoutePlan, Merge>> every_plan_and_merge(int ranks) {
  std::vector<std::pair<RoutePlan, Merge>> out;
  for (const RoutePlan& plan : every_plan(ranks)) {
    out.emplace_back(plan, Merge::kKeepAll);
    out.emplace_back(plan, Merge::kOnePerKey);
  }
  return out;
}

TEST(RoutedExchange, EveryRouteDeliversWhatAPlainExchangeDelivers) {
  Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  for (const RoutePlan& plan : every_plan(comm.size())) {
    for (const Merge merge : {Merge::kKeepAll, Merge::kOnePerKey}) {
      const std::uint64_t seed = 11;
      const Traffic t = random_traffic(comm.size(), comm.rank(), seed);
      RoutedExchange exchange(plan, merge);
      std::vector<KeyedItem> got = exchange.exchange(comm, t.items, t.counts);
      std::sort(got.begin(), got.end(),
                [](const auto& a, const auto& b) { return std::tie(a.key, a.value) < std::tie(b.key, b.value); });
      EXPECT_EQ(got, expected_here(comm.size(), comm.rank(), seed, merge == Merge::kOnePerKey))
          << plan.describe() << (merge == Merge::kOnePerKey ? " merged" : "");
      if (merge == Merge::kKeepAll) {
        EXPECT_EQ(exchange.stats().merged_items, 0u);
      }
    }
  }
}

TEST(RoutedExchange, StartupsFollowTheStrategysBound) {
  Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  const int p = comm.size();
  // One item from every rank to every other rank: every path is used.
  std::vector<KeyedItem> items;
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(p), 0);
  for (int d = 0; d < p; ++d) {
    if (d == comm.rank()) continue;
    items.push_back({static_cast<std::uint64_t>(comm.rank()), 1});
    counts[static_cast<std::size_t>(d)] = 1;
  }
  for (const RoutePlan& plan : every_plan(p)) {
    RoutedExchange exchange(plan, Merge::kKeepAll);
    const std::vector<KeyedItem> got = exchange.exchange(comm, items, counts);
    EXPECT_EQ(got.size(), static_cast<std::size_t>(p - 1)) << plan.describe();
    const std::uint64_t most = comm.allreduce(exchange.stats().startups, ReduceOp::kMax);
    const auto startups = exchange.stats().startups;
    switch (plan.kind()) {
      case RouteKind::kDirect:
      case RouteKind::kSparse: EXPECT_EQ(startups, static_cast<std::uint64_t>(p - 1)) << plan.describe(); break;
      case RouteKind::kGrid2: {
        const int n = plan.grid_rows();
        const int m = plan.grid_columns();
        // A short last row costs the ranks that relay around it one more start-up.
        EXPECT_LE(most, static_cast<std::uint64_t>(n + m - 2 + (n * m == p ? 0 : 1))) << plan.describe();
        break;
      }
      case RouteKind::kHypercube:
        EXPECT_LE(most, static_cast<std::uint64_t>(std::ceil(std::log2(p)))) << plan.describe();
        if ((p & (p - 1)) == 0) {
          EXPECT_EQ(most, static_cast<std::uint64_t>(std::log2(p))) << plan.describe();
        }
        break;
      case RouteKind::kGridK: {
        std::uint64_t bound = 0;
        for (const int d : plan.dims()) bound += static_cast<std::uint64_t>(d - 1);
        EXPECT_LE(most, bound) << plan.describe();
        break;
      }
    }
  }
}

// Every rank but the owner asks for all K elements of rank 0.
TEST(RoutedExchange, OverloadReachesTheOwnerOncePerElementWhenMerged) {
  Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  const int p = comm.size();
  const std::uint64_t k = 100;
  std::vector<KeyedItem> items;
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(p), 0);
  if (comm.rank() != 0) {
    for (std::uint64_t key = 0; key < k; ++key) items.push_back({key, static_cast<std::uint64_t>(comm.rank())});
    counts[0] = k;
  }
  RoutedExchange cube(RoutePlan(RouteKind::kHypercube, p), Merge::kOnePerKey);
  const std::vector<KeyedItem> merged = cube.exchange(comm, items, counts);
  RoutedExchange direct(RoutePlan(RouteKind::kDirect, p), Merge::kKeepAll);
  const std::vector<KeyedItem> all = direct.exchange(comm, items, counts);
  if (comm.rank() == 0) {
    ASSERT_EQ(merged.size(), p > 1 ? k : 0);
    for (std::uint64_t key = 0; key < merged.size(); ++key) {
      EXPECT_EQ(merged[key].key, key);
      EXPECT_EQ(merged[key].value, 1u);  // the smallest asker
    }
    EXPECT_EQ(all.size(), static_cast<std::size_t>(p - 1) * k);
    // Merged on the way: what reached the owner over the wire is at most one copy of
    // each element per hop that ends here.
    EXPECT_LE(cube.stats().received_items, k * static_cast<std::uint64_t>(std::ceil(std::log2(std::max(p, 2)))));
  } else {
    EXPECT_TRUE(merged.empty());
    EXPECT_TRUE(all.empty());
  }
}

// Reads: every rank asks random owners for random keys (many repeated); each answer is
// the owner's value for the key, in the order asked, on every route.
TEST(RoutedExchange, ReadsReturnEachOwnersValueInTheOrderAsked) {
  Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  const int p = comm.size();
  std::mt19937_64 rng(static_cast<std::uint64_t>(comm.rank()) * 31 + 5);
  std::vector<std::uint64_t> keys;
  std::vector<std::uint64_t> owners;
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(p), 0);
  for (int d = 0; d < p; ++d) {
    const std::uint64_t n = rng() % 30;
    for (std::uint64_t i = 0; i < n; ++i) {
      keys.push_back(rng() % 20);
      owners.push_back(static_cast<std::uint64_t>(d));
    }
    counts[static_cast<std::size_t>(d)] = n;
  }
  const auto value_of = [](std::uint64_t owner, std::uint64_t key) { return key * 1000 + owner; };
  for (const auto& [plan, merge] : every_plan_and_merge(p)) {
    RoutedExchange exchange(plan, merge);
    std::uint64_t lookups = 0;
    const std::vector<std::uint64_t> got = exchange.read(comm, keys, counts, [&](std::uint64_t key) {
      ++lookups;
      return value_of(static_cast<std::uint64_t>(comm.rank()), key);
    });
    ASSERT_EQ(got.size(), keys.size()) << plan.describe();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(got[i], value_of(owners[i], keys[i])) << plan.describe() << " request " << i;
    }
    EXPECT_LE(lookups, 20u) << plan.describe();  // one lookup per distinct key asked here
  }
}

// The overload pattern as reads: every rank reads all K elements of rank 0. The owner
// looks each one up once and every reader gets every value.
TEST(RoutedExchange, OverloadedReadsAreAnsweredOncePerElement) {
  Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  const int p = comm.size();
  const std::uint64_t k = 64;
  std::vector<std::uint64_t> keys(k);
  for (std::uint64_t i = 0; i < k; ++i) keys[i] = k - 1 - i;
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(p), 0);
  counts[0] = k;
  RoutedExchange cube(RoutePlan(RouteKind::kHypercube, p), Merge::kOnePerKey);
  std::uint64_t lookups = 0;
  const std::vector<std::uint64_t> got = cube.read(comm, keys, counts, [&](std::uint64_t key) {
    ++lookups;
    return key * key;
  });
  for (std::uint64_t i = 0; i < k; ++i) EXPECT_EQ(got[i], keys[i] * keys[i]);
  EXPECT_EQ(lookups, comm.rank() == 0 ? k : 0u);
  if (comm.rank() == 0) {
    EXPECT_LE(cube.stats().received_items, k * static_cast<std::uint64_t>(std::ceil(std::log2(std::max(p, 2)))));
  }
}

// The distributed array against a replicated one: three steps of random writes (many
// to the same elements: the smallest value wins) and reads, which see the step's writes,
// on every route, with and without merging.
TEST(DistributedArray, StepsMatchAReplicatedArray) {
  Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  const int p = comm.size();
  const std::uint64_t size = 37;  // not a multiple of most rank counts: a short last block
  const auto ops_of = [&](int rank, int step) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(rank * 101 + step));
    std::vector<std::pair<std::uint64_t, std::uint64_t>> writes;
    std::vector<std::uint64_t> reads;
    for (int i = 0; i < 15; ++i) writes.emplace_back(rng() % size, 100 + rng() % 900);
    for (int i = 0; i < 25; ++i) reads.push_back(rng() % size);
    return std::pair(writes, reads);
  };
  for (const auto& [plan, merge] : every_plan_and_merge(p)) {
    DistributedArray array(comm, size, plan, merge, 5000);
    std::vector<std::uint64_t> replica(size, 5000);
    for (int step = 0; step < 3; ++step) {
      for (int r = 0; r < p; ++r) {
        for (const auto& [index, value] : ops_of(r, step).first) replica[index] = std::min(replica[index], value);
      }
      const auto [writes, reads] = ops_of(comm.rank(), step);
      for (const auto& [index, value] : writes) array.write(index, value);
      std::vector<std::size_t> tickets;
      for (const std::uint64_t index : reads) tickets.push_back(array.read(index));
      array.execute(comm);
      for (std::size_t i = 0; i < reads.size(); ++i) {
        ASSERT_EQ(array.result(tickets[i]), replica[reads[i]]) << plan.describe() << " step " << step;
      }
    }
    for (std::size_t i = 0; i < array.local().size(); ++i) {
      EXPECT_EQ(array.local()[i], replica[array.first_index() + i]);
    }
  }
  DistributedArray array(comm, size, RoutePlan(RouteKind::kDirect, p), Merge::kOnePerKey);
  EXPECT_THROW(array.read(size), Error);
  EXPECT_THROW(array.write(size + 5, 1), Error);
}

// Elements of several fields on a placement that is not rank order (block b on rank
// P - 1 - b), reading all fields or a prefix: against a replicated array.
TEST(DistributedArray, FieldsOnAnyPlacementMatchAReplicatedArray) {
  Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  const int p = comm.size();
  const std::uint64_t size = 29;
  const std::size_t width = 3;
  ArrayPlacement placement{size, (size + static_cast<std::uint64_t>(p) - 1) / static_cast<std::uint64_t>(p), {}};
  for (int b = 0; b < p; ++b) placement.rank_of_block.push_back(p - 1 - b);
  for (const auto& [plan, merge] : every_plan_and_merge(p)) {
    DistributedArray array(comm, placement, width, plan, merge, 7000);
    EXPECT_EQ(array.first_index(),
              std::min<std::uint64_t>(size, placement.block * static_cast<std::uint64_t>(p - 1 - comm.rank())));
    std::vector<std::uint64_t> replica(size * width, 7000);
    for (int step = 0; step < 3; ++step) {
      const std::size_t fields = step == 1 ? 2 : 0;  // a prefix, or all
      for (int r = 0; r < p; ++r) {                  // every rank's writes; this rank's go to the array
        std::mt19937_64 rng(static_cast<std::uint64_t>(r * 31 + step));
        for (int i = 0; i < 12; ++i) {
          const std::uint64_t index = rng() % size;
          const std::size_t field = rng() % width;
          const std::uint64_t value = 100 + rng() % 6000;
          replica[index * width + field] = std::min(replica[index * width + field], value);
          if (r == comm.rank()) array.write(index, value, field);
        }
      }
      std::mt19937_64 mine(static_cast<std::uint64_t>(comm.rank() + 1000 * step));
      std::vector<std::uint64_t> reads;
      for (int i = 0; i < 20; ++i) reads.push_back(mine() % size);
      const std::size_t first_ticket = array.read(reads);
      array.execute(comm, fields);
      for (std::size_t i = 0; i < reads.size(); ++i) {
        for (std::size_t f = 0; f < (fields == 0 ? width : fields); ++f) {
          ASSERT_EQ(array.result(first_ticket + i, f), replica[reads[i] * width + f]) << plan.describe();
        }
      }
    }
    for (std::uint64_t o = 0; o < array.local_size(); ++o) {
      for (std::size_t f = 0; f < width; ++f) EXPECT_EQ(array.at(o, f), replica[(array.first_index() + o) * width + f]);
    }
  }
  DistributedArray array(comm, placement, width, RoutePlan(RouteKind::kDirect, p), Merge::kOnePerKey);
  EXPECT_THROW(array.write(1, 1, width), Error);
  EXPECT_THROW(array.execute(comm, width + 1), Error);
  ArrayPlacement twice = placement;
  twice.rank_of_block.assign(static_cast<std::size_t>(p), 0);
  if (p > 1) {
    EXPECT_THROW(DistributedArray(comm, twice, 1, RoutePlan(RouteKind::kDirect, p), Merge::kOnePerKey), Error);
  }
  ArrayPlacement short_blocks = placement;
  short_blocks.block = 1;
  if (static_cast<std::uint64_t>(p) < size) {
    EXPECT_THROW(DistributedArray(comm, short_blocks, 1, RoutePlan(RouteKind::kDirect, p), Merge::kOnePerKey), Error);
  }
}

TEST(Communicator, SparseExchangeCarriesAnyMessagesTwiceInARow) {
  Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  const int p = comm.size();
  for (int round = 0; round < 2; ++round) {
    // Rank r sends r + d + round words to every rank d with (r + d + round) % 3 != 0.
    std::vector<Communicator::SparseMessage> out;
    for (int d = 0; d < p; ++d) {
      const int n = comm.rank() + d + round;
      if (n % 3 == 0) continue;
      out.push_back(
          {d, std::vector<std::uint64_t>(static_cast<std::size_t>(n), static_cast<std::uint64_t>(comm.rank()))});
    }
    const auto in = comm.sparse_exchange(out);
    std::size_t expected = 0;
    for (int s = 0; s < p; ++s) {
      const int n = s + comm.rank() + round;
      if (n % 3 == 0) continue;
      ASSERT_LT(expected, in.size());
      EXPECT_EQ(in[expected].rank, s);
      EXPECT_EQ(in[expected].words,
                std::vector<std::uint64_t>(static_cast<std::size_t>(n), static_cast<std::uint64_t>(s)));
      ++expected;
    }
    EXPECT_EQ(in.size(), expected);
  }
}

}  // namespace
}  // namespace zbfs
