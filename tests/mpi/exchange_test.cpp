// The communication layer: sparse all-to-all delivers every id to the right rank in
// order, the set-union allreduce equals the sorted union of all lists (with overlaps and
// empty lists, at any rank count), and traffic lands in the phase that is current.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "zbfs/exchange/exchanger.hpp"
#include "zbfs/mpi/communicator.hpp"
#include "zbfs/network/network_model.hpp"

namespace zbfs {
namespace {

Communicator world() { return Communicator::duplicate(MPI_COMM_WORLD); }

TEST(SparseExchange, DeliversIdsGroupedBySource) {
  const Communicator comm = world();
  const int p = comm.size();
  const int me = comm.rank();
  OutgoingBuilder builder(p, 1);
  // Rank s sends d + s ids to rank d (none when that is zero): me * 1000 + d * 10 + k.
  for (int d = 0; d < p; ++d) {
    for (int k = 0; k < d + me; ++k) builder.bucket(0, d).push_back(static_cast<std::uint64_t>(me * 1000 + d * 10 + k));
  }
  DirectExchanger exchanger(ColumnGather::kAllgatherv);
  const IncomingIds in = exchanger.all_to_all(comm, builder.finish());
  ASSERT_EQ(in.num_sources(), p);
  for (int s = 0; s < p; ++s) {
    const auto ids = in.from(s);
    ASSERT_EQ(ids.size(), static_cast<std::size_t>(me + s));
    for (std::size_t k = 0; k < ids.size(); ++k) EXPECT_EQ(ids[k], static_cast<std::uint64_t>(s * 1000 + me * 10) + k);
  }
}

TEST(SparseExchange, CountsTrafficIntoTheCurrentPhase) {
  Communicator comm = world();
  PhaseMetrics metrics;
  comm.attach(&metrics);
  const int p = comm.size();
  OutgoingBuilder builder(p, 1);
  for (int d = 0; d < p; ++d) builder.bucket(0, d).assign(3, static_cast<std::uint64_t>(d));
  DirectExchanger exchanger(ColumnGather::kAllgatherv);
  {
    const ScopedPhase phase(metrics, Phase::kRowExchange);
    exchanger.all_to_all(comm, builder.finish());
  }
  const auto peers = static_cast<std::uint64_t>(p - 1);
  // The counts exchange (one word per peer) and one message of three ids per peer.
  EXPECT_EQ(metrics[Phase::kRowExchange].messages, 2 * peers);
  EXPECT_EQ(metrics[Phase::kRowExchange].raw_bytes, peers * 8 + peers * 3 * 8);
  EXPECT_EQ(metrics[Phase::kRowExchange].wire_bytes, metrics[Phase::kRowExchange].raw_bytes);
  EXPECT_EQ(metrics[Phase::kColumnExchange].messages, 0U);
  EXPECT_GE(metrics[Phase::kRowExchange].time_s, 0.0);
}

TEST(SparseExchange, PricesTrafficWithTheAttachedNetworkByLinkClass) {
  Communicator comm = world();
  comm.set_role(CommRole::kRow);
  PhaseMetrics metrics;
  comm.attach(&metrics);
  NetworkModel model;
  model.intra_node = {1e-6, 1e9};
  model.inter_node = {1e-3, 1e6};
  const int p = comm.size();
  const int me = comm.rank();
  std::vector<int> nodes(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) nodes[static_cast<std::size_t>(r)] = r / 2;  // two ranks per node
  comm.attach_network(&model, nodes);
  const int on_node = std::min(p, (me / 2) * 2 + 2) - (me / 2) * 2;
  EXPECT_EQ(comm.members_on_my_node(), on_node);
  OutgoingBuilder builder(p, 1);
  for (int d = 0; d < p; ++d) builder.bucket(0, d).assign(100, static_cast<std::uint64_t>(d));
  DirectExchanger exchanger(ColumnGather::kAllgatherv);
  {
    const ScopedPhase phase(metrics, Phase::kRowExchange);
    exchanger.all_to_all(comm, builder.finish());
  }
  // Per peer: the count word, then 100 ids of 8 bytes.
  const double intra = on_node - 1;
  const double inter = p - on_node;
  const double expected = intra * (2 * 1e-6 + 8 / 1e9 + 800 / 1e9) + inter * (2 * 1e-3 + 8 / 1e6 + 800 / 1e6);
  EXPECT_NEAR(metrics[Phase::kRowExchange].model_s, expected, 1e-12);
  const TrafficTally& tally = metrics.tally(Phase::kRowExchange, CommRole::kRow, CommPattern::kPersonalized);
  EXPECT_EQ(tally.calls, p > 1 ? 2U : 0U);
  EXPECT_EQ(tally.bytes, metrics[Phase::kRowExchange].raw_bytes);

  // A ring gather of 10 ids from each rank: p - 1 steps at the slowest link of the ring.
  const std::vector<std::uint64_t> mine(10, static_cast<std::uint64_t>(me));
  {
    const ScopedPhase phase(metrics, Phase::kColumnExchange);
    exchanger.gather_ids(comm, mine);
  }
  const LinkCost& ring = p > 2 ? model.inter_node : model.intra_node;
  const double steps = p - 1;
  const double gathered = ring.time_s(steps, steps * 8) + ring.time_s(steps, steps * 80);
  EXPECT_NEAR(metrics[Phase::kColumnExchange].model_s, gathered, 1e-12);
  EXPECT_EQ(metrics.tally(Phase::kColumnExchange, CommRole::kRow, CommPattern::kGather).calls, p > 1 ? 2U : 0U);
}

std::vector<std::uint64_t> random_sorted_list(std::uint64_t seed, std::size_t count, std::uint64_t range) {
  std::mt19937_64 rng(seed);
  std::set<std::uint64_t> ids;
  for (std::size_t i = 0; i < count; ++i) ids.insert(rng() % range);
  return {ids.begin(), ids.end()};
}

TEST(UnionAllreduce, EqualsTheSortedUnionOfAllLists) {
  const Communicator comm = world();
  for (const std::uint64_t range : {std::uint64_t{16}, std::uint64_t{1000}, std::uint64_t{1} << 40}) {
    for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{50}, std::size_t{3000}}) {
      // Rank 1 contributes nothing, to cover empty lists next to full ones.
      const std::size_t mine_count = comm.rank() == 1 ? 0 : count;
      const std::vector<std::uint64_t> mine =
          random_sorted_list(range * 31 + static_cast<std::uint64_t>(comm.rank()), mine_count, range);
      std::vector<std::uint64_t> counts;
      std::vector<std::uint64_t> everything = comm.allgatherv(std::span<const std::uint64_t>(mine), counts);
      std::sort(everything.begin(), everything.end());
      everything.erase(std::unique(everything.begin(), everything.end()), everything.end());
      EXPECT_EQ(union_allreduce(comm, mine), everything) << "range " << range << " count " << count;
      DirectExchanger exchanger(ColumnGather::kUnion);
      EXPECT_EQ(exchanger.gather_ids(comm, mine), everything);
    }
  }
}

TEST(Communicator, SplitsIntoRowsAndColumns) {
  const Communicator comm = world();
  const Communicator halves = comm.split(comm.rank() % 2, comm.rank());
  EXPECT_EQ(halves.size(), (comm.size() + 1 - comm.rank() % 2) / 2);
  EXPECT_EQ(halves.rank(), comm.rank() / 2);
  const auto total = halves.allreduce(std::uint64_t{1}, ReduceOp::kSum);
  EXPECT_EQ(total, static_cast<std::uint64_t>(halves.size()));
}

}  // namespace
}  // namespace zbfs
