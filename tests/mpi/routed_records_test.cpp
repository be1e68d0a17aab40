// Kernel 1's routed shuffle (wire/routed/routed_records.hpp) at every rank count the suite
// runs: every route delivers exactly what one alltoallv delivers, in the same order, for
// records of two and three words; bad counts are refused on every rank; and the graph
// kernel 1 builds over a route, weighted or not, on every layout, is the direct one's,
// list for list.
#include "zbfs/wire/routed/routed_records.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "mpi_test_support.hpp"
#include "zbfs/core/error.hpp"
#include "zbfs/generator/graph_generator.hpp"
#include "zbfs/graph/distributed_graph.hpp"
#include "zbfs/mpi/communicator.hpp"

namespace zbfs {
namespace {

std::vector<RoutePlan> every_plan(int ranks) {
  std::vector<RoutePlan> plans;
  for (const RouteKind k : {RouteKind::kDirect, RouteKind::kSparse, RouteKind::kGrid2, RouteKind::kHypercube}) {
    plans.emplace_back(k, ranks);
  }
  plans.emplace_back(RouteKind::kGridK, ranks, balanced_dims(ranks, 3));
  return plans;
}

// Random records for random destinations (some ranks get none), counted in words.
struct Records {
  std::vector<std::uint64_t> words;
  std::vector<std::uint64_t> counts;
};
Records random_records(int ranks, int me, std::size_t width, std::uint64_t seed) {
  std::mt19937_64 rng(seed + static_cast<std::uint64_t>(me) * 7919);
  Records r;
  r.counts.assign(static_cast<std::size_t>(ranks), 0);
  for (int d = 0; d < ranks; ++d) {
    const std::uint64_t n = rng() % 4 == 0 ? 0 : rng() % 30;
    for (std::uint64_t i = 0; i < n * width; ++i) r.words.push_back(rng());
    r.counts[static_cast<std::size_t>(d)] = n * width;
  }
  return r;
}

TEST(RoutedRecords, EveryRouteDeliversWhatOneAlltoallvDelivers) {
  const Communicator comm = Communicator::world();
  for (const std::size_t width : {std::size_t{2}, std::size_t{3}}) {
    const Records mine = random_records(comm.size(), comm.rank(), width, 5 + width);
    std::vector<std::uint64_t> recv_counts;
    const std::vector<std::uint64_t> direct = comm.alltoallv(std::span<const std::uint64_t>(mine.words),
                                                             std::span<const std::uint64_t>(mine.counts), recv_counts);
    for (const RoutePlan& plan : every_plan(comm.size())) {
      EXPECT_EQ(route_records(comm, plan, mine.words, mine.counts, width), direct)
          << plan.describe() << ", records of " << width << " words";
    }
  }
}

// Each rank may send to the next two ranks and hear from the previous two: messages of
// any size (empty ones too, and one to itself) arrive whole, sorted by source; a message
// for a rank that is not a peer is refused before anything is sent.
TEST(Communicator, PeerExchangeDeliversAmongKnownPeers) {
  const Communicator comm = Communicator::world();
  const int p = comm.size();
  const int me = comm.rank();
  const auto sorted_others = [&](std::vector<int> ranks) {
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    std::erase(ranks, me);
    return ranks;
  };
  const std::vector<int> to = sorted_others({(me + 1) % p, (me + 2) % p});
  const std::vector<int> from = sorted_others({(me + p - 1) % p, (me + p - 2) % p});
  // From s to d: (d - s) mod p words when that is 1 (a peer two ahead gets nothing).
  const auto words_from = [&](int s, int d) {
    std::vector<std::uint64_t> w;
    if ((d - s + p) % p == 1) w.assign(static_cast<std::size_t>(3 + s), static_cast<std::uint64_t>(s * 1000 + d));
    return w;
  };
  for (int round = 0; round < 2; ++round) {
    std::vector<Communicator::SparseMessage> outgoing;
    for (const int d : to) outgoing.push_back({d, words_from(me, d)});
    outgoing.push_back({me, {7, 7}});
    const std::vector<Communicator::SparseMessage> got = comm.peer_exchange(outgoing, to, from);
    std::vector<Communicator::SparseMessage> want;
    for (const int s : sorted_others({me, (me + p - 1) % p, (me + p - 2) % p})) {
      if (!words_from(s, me).empty()) want.push_back({s, words_from(s, me)});
    }
    want.push_back({me, {7, 7}});
    std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    ASSERT_EQ(got.size(), want.size()) << "round " << round;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].rank, want[i].rank);
      EXPECT_EQ(got[i].words, want[i].words);
    }
  }
  if (p > 3) {
    const std::vector<Communicator::SparseMessage> stray{{(me + 3) % p, {1}}};
    EXPECT_THROW((void)comm.peer_exchange(stray, to, from), Error);
  }
}

TEST(RoutedRecords, NothingToSendStillTakesPart) {
  const Communicator comm = Communicator::world();
  const std::vector<std::uint64_t> none(static_cast<std::size_t>(comm.size()), 0);
  for (const RoutePlan& plan : every_plan(comm.size())) {
    EXPECT_TRUE(route_records(comm, plan, {}, none, 2).empty()) << plan.describe();
  }
}

TEST(RoutedRecords, CountsThatDoNotCoverWholeRecordsAreRefused) {
  const Communicator comm = Communicator::world();
  const RoutePlan plan(RouteKind::kGrid2, comm.size());
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(comm.size()), 0);
  counts[0] = 3;  // one and a half records of two words
  EXPECT_THROW((void)route_records(comm, plan, {1, 2, 3}, counts, 2), Error);
  counts[0] = 4;  // more words than there are
  EXPECT_THROW((void)route_records(comm, plan, {1, 2, 3}, counts, 2), Error);
  EXPECT_THROW((void)route_records(comm, RoutePlan(RouteKind::kGrid2, comm.size() + 1), {}, counts, 2), Error);
}

// Kernel 1 over each route builds the direct build's lists, entry for entry (and weight
// for weight).
TEST(RoutedRecords, KernelOneBuildsTheSameGraphOverEveryRoute) {
  const int ranks = Communicator::world().size();
  GraphSpec spec;
  spec.scale = 8;
  spec.edgefactor = 8;
  spec.seed = 3;
  for (const testing::Layout& layout : testing::all_layouts(ranks)) {
    const ProcessGrid grid(layout.partition, layout.shape, std::uint64_t{1} << spec.scale, nullptr);
    const PackedEdgeList slice = generate_graph_slice(spec, grid.rank(), grid.size());
    const LargeArray<float> weights = generate_weight_slice(spec, grid.rank(), grid.size(), slice);
    for (const bool weighted : {false, true}) {
      const auto with = weighted ? std::optional<std::span<const float>>(weights.span()) : std::nullopt;
      const DistributedGraph<std::uint32_t> direct(grid, slice, false, 500, with);
      for (const RoutePlan& plan : every_plan(ranks)) {
        SCOPED_TRACE(plan.describe() + (weighted ? ", weighted" : "") + ", " + grid.shape().to_string());
        const DistributedGraph<std::uint32_t> routed(grid, slice, false, 500, with, plan);
        const LocalCsr<std::uint32_t>& a = direct.forward();
        const LocalCsr<std::uint32_t>& b = routed.forward();
        ASSERT_EQ(a.num_rows(), b.num_rows());
        ASSERT_EQ(a.num_entries(), b.num_entries());
        EXPECT_TRUE(std::equal(a.offsets(), a.offsets() + a.num_rows() + 1, b.offsets()));
        EXPECT_TRUE(std::equal(a.neighbor_data(), a.neighbor_data() + a.num_entries(), b.neighbor_data()));
        if (weighted) {
          EXPECT_TRUE(std::equal(a.weight_data(), a.weight_data() + a.num_entries(), b.weight_data()));
        }
        EXPECT_EQ(direct.global_directed_edges(), routed.global_directed_edges());
      }
    }
  }
}

}  // namespace
}  // namespace zbfs
