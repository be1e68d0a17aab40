// The communication layer: sparse all-to-all delivers every id to the right rank in
// order, the set-union allreduce equals the sorted union of all lists (with overlaps and
// empty lists, at any rank count), and traffic lands in the phase that is current.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "zbfs/mpi/communicator.hpp"
#include "zbfs/network/network_model.hpp"
#include "zbfs/network/network_probe.hpp"
#include "zbfs/wire/direct/direct_exchanger.hpp"
#include "zbfs/wire/exchanger.hpp"

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
  const IncomingIds in = exchanger.all_to_all(comm, builder.finish(), IdsAre::kSequence);
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
  comm.observe(&metrics);
  const int p = comm.size();
  OutgoingBuilder builder(p, 1);
  for (int d = 0; d < p; ++d) builder.bucket(0, d).assign(3, static_cast<std::uint64_t>(d));
  DirectExchanger exchanger(ColumnGather::kAllgatherv);
  {
    const ScopedPhase phase(metrics, Phase::kRowExchange);
    exchanger.all_to_all(comm, builder.finish(), IdsAre::kSequence);
  }
  const auto peers = static_cast<std::uint64_t>(p - 1);
  // One round, no counts exchanged first: one message of three ids per peer.
  EXPECT_EQ(metrics[Phase::kRowExchange].messages, peers);
  EXPECT_EQ(metrics[Phase::kRowExchange].raw_bytes, peers * 3 * 8);
  EXPECT_EQ(metrics[Phase::kRowExchange].wire_bytes, metrics[Phase::kRowExchange].raw_bytes);
  EXPECT_EQ(metrics[Phase::kRowExchange].id_bytes, peers * 3 * 8);  // the ids, no control words
  EXPECT_EQ(metrics[Phase::kColumnExchange].messages, 0U);
  EXPECT_GE(metrics[Phase::kRowExchange].time_s, 0.0);

  // A bitmap's ids are its set bits, with or without a codec.
  const std::vector<std::uint64_t> words = {0b1011, 0, std::uint64_t{1} << 63};
  std::vector<std::uint64_t> all(words.size() * static_cast<std::size_t>(p));
  DirectExchanger coded(ColumnGather::kAllgatherv,
                        MessageCodec(*parse_codec_choice("bitpack"),
                                     std::make_shared<const CodecCostModel>(CodecCostModel::uniform({}, 0))));
  {
    const ScopedPhase phase(metrics, Phase::kColumnExchange);
    exchanger.gather_bitmap(comm, words, all);
    coded.gather_bitmap(comm, words, all);
  }
  EXPECT_EQ(metrics[Phase::kColumnExchange].id_bytes, 2 * peers * 4 * 8);
}

TEST(SparseExchange, PricesTrafficWithTheAttachedNetworkByLinkClass) {
  Communicator comm = world();
  comm.set_role(CommRole::kRow);
  PhaseMetrics metrics;
  comm.observe(&metrics);
  NetworkModel model;
  model.intra_node = {1e-6, 1e9};
  model.inter_node = {1e-3, 1e6};
  const int p = comm.size();
  const int me = comm.rank();
  std::vector<int> nodes(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) nodes[static_cast<std::size_t>(r)] = r / 2;  // two ranks per node
  comm.attach_nodes(nodes);
  metrics.price_links(model.intra_node, model.inter_node);
  const int on_node = std::min(p, (me / 2) * 2 + 2) - (me / 2) * 2;
  EXPECT_EQ(comm.members_on_my_node(), on_node);
  OutgoingBuilder builder(p, 1);
  for (int d = 0; d < p; ++d) builder.bucket(0, d).assign(100, static_cast<std::uint64_t>(d));
  DirectExchanger exchanger(ColumnGather::kAllgatherv);
  {
    const ScopedPhase phase(metrics, Phase::kRowExchange);
    exchanger.all_to_all(comm, builder.finish(), IdsAre::kSequence);
  }
  // Per peer one message of 100 ids of 8 bytes (no count word first).
  const double intra = on_node - 1;
  const double inter = p - on_node;
  const double expected = intra * (1e-6 + 800 / 1e9) + inter * (1e-3 + 800 / 1e6);
  EXPECT_NEAR(metrics[Phase::kRowExchange].model_s, expected, 1e-12);
  const TrafficTally& tally = metrics.tally(Phase::kRowExchange, CommRole::kRow, CommPattern::kPersonalized);
  EXPECT_EQ(tally.calls, p > 1 ? 1U : 0U);
  EXPECT_EQ(tally.bytes, metrics[Phase::kRowExchange].raw_bytes);

  // A ring gather of 10 ids from each rank: p - 1 steps at the slowest link of the ring.
  const std::vector<std::uint64_t> mine(10, static_cast<std::uint64_t>(me));
  {
    const ScopedPhase phase(metrics, Phase::kColumnExchange);
    exchanger.gather_ids(comm, mine);
  }
  const LinkCost& ring = p > 2 ? model.inter_node : model.intra_node;
  const double steps = p - 1;
  const double gathered = ring.time_s(steps, steps * 80);
  EXPECT_NEAR(metrics[Phase::kColumnExchange].model_s, gathered, 1e-12);
  EXPECT_EQ(metrics.tally(Phase::kColumnExchange, CommRole::kRow, CommPattern::kGather).calls, p > 1 ? 1U : 0U);
}

// One round of pieces with no sizes sent first: every member's piece arrives whole, in
// rank order, with its flag, this rank's own copied in; empty pieces and pieces past the
// eager limit included. Rounds follow each other with no barrier, some with a
// point-to-point swap in between, so a member already in the next round must not be
// taken for this round's sender.
TEST(ProbedExchange, DeliversEveryPieceWithItsFlagRoundAfterRound) {
  Communicator comm = world();
  PhaseMetrics metrics;
  comm.observe(&metrics);
  const int p = comm.size();
  const int me = comm.rank();
  // Bytes from s to d in round r: empty for some, 200 KiB for others.
  const auto length = [](int s, int d, int r) -> std::size_t {
    const int k = (s * 7 + d * 3 + r) % 5;
    return k == 0 ? 0 : k == 4 ? std::size_t{200} << 10 : static_cast<std::size_t>(k * 37 + r);
  };
  const auto byte_at = [](int s, int d, int r, std::size_t i) {
    return static_cast<std::uint8_t>(s * 31 + d * 17 + r * 5 + static_cast<int>(i % 251));
  };
  const ScopedPhase phase(metrics, Phase::kRowExchange);
  for (int r = 0; r < 12; ++r) {
    std::vector<std::vector<std::uint8_t>> out(static_cast<std::size_t>(p));
    std::vector<Communicator::Piece> pieces(static_cast<std::size_t>(p));
    for (int d = 0; d < p; ++d) {
      auto& bytes = out[static_cast<std::size_t>(d)];
      bytes.resize(length(me, d, r));
      for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = byte_at(me, d, r, i);
      pieces[static_cast<std::size_t>(d)] = {bytes, (me + d + r) % 2 == 1};
    }
    std::vector<std::uint8_t> in;
    const std::vector<Communicator::Arrival> seen =
        comm.exchange_probed(pieces, CommPattern::kPersonalized, [&](std::span<const Communicator::Arrival> arrivals) {
          std::size_t total = 0;
          for (const auto& a : arrivals) total += static_cast<std::size_t>(a.bytes);
          in.assign(total, 0);
          return std::span<std::uint8_t>(in);
        });
    ASSERT_EQ(seen.size(), static_cast<std::size_t>(p));
    std::size_t at = 0;
    for (int s = 0; s < p; ++s) {
      const auto& a = seen[static_cast<std::size_t>(s)];
      ASSERT_EQ(a.bytes, length(s, me, r)) << "round " << r << " from " << s;
      EXPECT_EQ(a.flagged, (s + me + r) % 2 == 1);
      for (std::size_t i = 0; i < a.bytes; ++i) {
        if (in[at + i] != byte_at(s, me, r, i)) {
          ADD_FAILURE() << "round " << r << " from " << s << " byte " << i;
          break;
        }
      }
      at += static_cast<std::size_t>(a.bytes);
    }
    if (r % 3 == 0 && p > 1) {
      const int partner = me ^ 1;
      if (partner < p) {
        EXPECT_EQ(comm.sendrecv_value(static_cast<std::uint64_t>(me), partner), static_cast<std::uint64_t>(partner));
      }
    }
  }
  // Every round sends one message to each peer, empty ones included.
  const auto peers = static_cast<std::uint64_t>(p - 1);
  EXPECT_EQ(metrics.tally(Phase::kRowExchange, CommRole::kOther, CommPattern::kPersonalized).messages, 12 * peers);
  comm.observe(nullptr);
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
      TwoSidedRounds rounds;
      EXPECT_EQ(union_allreduce(comm, mine, rounds), everything) << "range " << range << " count " << count;
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

// Rank 0 arrives late at an allreduce. Without wait timing the others' wait is part of
// their time in MPI; with it, the wait is booked as wait_s and mpi_s is the allreduce
// alone. The split inherits the setting. Point-to-point calls never add a barrier.
// The bounds are loose on purpose: with 8 ranks on 2 cores (CI) a rank can lose its core
// for tens of milliseconds, so each side starts from a barrier, a wait must show at
// least half the delay, and the split is asserted as a ratio (the collective itself
// well under the wait) rather than against a fixed time.
TEST(Communicator, NonblockingTransfersPassBytesAroundARing) {
  const Communicator comm = world();
  const int p = comm.size();
  const int me = comm.rank();
  // Rank r sends r + 5 bytes (r + 5 copies of 'a' + r) to r + 1.
  const std::string mine(static_cast<std::size_t>(me + 5), static_cast<char>('a' + me % 26));
  const int from = (me + p - 1) % p;
  std::string arrived(static_cast<std::size_t>(from + 5), '?');
  PendingTransfer receive = comm.ireceive_bytes(std::span<char>(arrived.data(), arrived.size()), from, 7);
  PendingTransfer send = comm.isend_bytes(std::span<const char>(mine.data(), mine.size()), (me + 1) % p, 7);
  while (!receive.test()) {
  }
  send.wait();
  EXPECT_TRUE(receive.done());
  EXPECT_TRUE(send.done());
  EXPECT_EQ(arrived, std::string(static_cast<std::size_t>(from + 5), static_cast<char>('a' + from % 26)));
}

TEST(Communicator, AnAbandonedReceiveNeitherBlocksNorLingers) {
  const Communicator comm = world();
  std::array<char, 8> never{};
  {
    // Nobody sends with this tag: destroying the pending receive cancels it.
    const PendingTransfer pending = comm.ireceive_bytes(std::span<char>(never), comm.rank(), 99);
    EXPECT_FALSE(pending.done());
  }
  // A later message with that tag goes to a new receive, not the abandoned one.
  const std::array<char, 8> sent{'z', 'b', 'f', 's', '-', 'o', 'k', '!'};
  std::array<char, 8> got{};
  PendingTransfer receive = comm.ireceive_bytes(std::span<char>(got), comm.rank(), 99);
  comm.send_bytes(std::span<const char>(sent), comm.rank(), 99);
  receive.wait();
  EXPECT_EQ(got, sent);
  EXPECT_EQ(never, (std::array<char, 8>{}));
  comm.barrier();
}

TEST(Communicator, BroadcastsAStringFromAnyRoot) {
  const Communicator comm = world();
  for (int root = 0; root < comm.size(); ++root) {
    const std::string sent =
        "path/from rank " + std::to_string(root) + std::string(static_cast<std::size_t>(root), '+');
    std::string text = comm.rank() == root ? sent : std::string(static_cast<std::size_t>(comm.rank() * 3), 'x');
    comm.broadcast_string(text, root);
    EXPECT_EQ(text, sent);
  }
  std::string empty = comm.rank() == 0 ? "" : "not empty";
  comm.broadcast_string(empty, 0);
  EXPECT_TRUE(empty.empty());
}

TEST(Communicator, TimedWaitsSeparateWaitingFromTheCollective) {
  Communicator comm = world();
  if (comm.size() == 1) GTEST_SKIP() << "needs two ranks";
  constexpr double kLate = 0.3;
  const auto late_allreduce = [&](Communicator& c, PhaseMetrics& metrics) {
    comm.barrier();  // unbooked: comm has no metrics attached
    c.observe(&metrics);
    const ScopedPhase phase(metrics, Phase::kTerminationCheck);
    if (comm.rank() == 0) std::this_thread::sleep_for(std::chrono::duration<double>(kLate));
    EXPECT_EQ(c.allreduce(std::uint64_t{1}, ReduceOp::kSum), static_cast<std::uint64_t>(c.size()));
    return metrics[Phase::kTerminationCheck];
  };
  PhaseMetrics plain_metrics;
  const PhaseCounters plain = late_allreduce(comm, plain_metrics);
  comm.observe(nullptr);
  EXPECT_EQ(plain.wait_s, 0.0);
  if (comm.rank() != 0) {
    EXPECT_GE(plain.mpi_s, kLate * 0.5);
  }

  comm.time_waits(true);
  Communicator timed = comm.split(0, comm.rank());
  comm.time_waits(false);  // the test's own barriers stay plain
  EXPECT_TRUE(timed.times_waits());
  PhaseMetrics timed_metrics;
  const PhaseCounters waited = late_allreduce(timed, timed_metrics);
  if (comm.rank() != 0) {
    EXPECT_GE(waited.wait_s, kLate * 0.5);
    EXPECT_LT(waited.mpi_s, waited.wait_s / 2) << "the collective itself should take far less than the wait";
  }
  EXPECT_EQ(timed_metrics.tally(Phase::kTerminationCheck, CommRole::kOther, CommPattern::kReduce).calls, 1U);

  // A pairwise swap is not preceded by a barrier: its wait stays in mpi_s.
  if (comm.rank() < 2) {
    PhaseMetrics pair_metrics;
    timed.observe(&pair_metrics);
    const ScopedPhase phase(pair_metrics, Phase::kRowExchange);
    if (comm.rank() == 0) std::this_thread::sleep_for(std::chrono::duration<double>(kLate));
    EXPECT_EQ(timed.sendrecv_value(comm.rank(), 1 - comm.rank()), 1 - comm.rank());
    EXPECT_EQ(pair_metrics[Phase::kRowExchange].wait_s, 0.0);
    if (comm.rank() == 1) {
      EXPECT_GE(pair_metrics[Phase::kRowExchange].mpi_s, kLate * 0.8);
    }
  }
  comm.barrier();
}

}  // namespace
}  // namespace zbfs

namespace zbfs {
namespace {

std::shared_ptr<const CodecCostModel> calibrated() {
  static const auto model = std::make_shared<const CodecCostModel>(CodecCostModel::calibrate());
  return model;
}

const char* const kCodecNames[] = {"none",    "varint", "bitpack", "pfor", "streamvbyte",
                                   "roaring", "zstd",   "bitmap",  "rice", "auto"};

// The same exchanges with every codec: what arrives equals what the plain exchange
// delivers (sets compared as sets), and raw bytes are the plain exchange's bytes.
TEST(CodecExchange, EveryCodecDeliversWhatThePlainExchangeDelivers) {
  Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  const int p = comm.size();
  const int me = comm.rank();
  std::mt19937_64 rng(static_cast<std::uint64_t>(me) * 7 + 1);
  // Dense sets (unsorted), sparse sets, and sequences (unsorted, with repeats).
  OutgoingBuilder sets(p, 1);
  OutgoingBuilder sequences(p, 1);
  for (int d = 0; d < p; ++d) {
    std::set<std::uint64_t> chosen;
    const std::size_t n = static_cast<std::size_t>(d == me ? 5 : 200 * (d + 1));
    while (chosen.size() < n) chosen.insert(static_cast<std::uint64_t>(d) * 100000 + rng() % (4 * n));
    std::vector<std::uint64_t> shuffled(chosen.begin(), chosen.end());
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    sets.bucket(0, d) = shuffled;
    if (d % 2 == 1) sets.bucket(0, d).push_back(std::uint64_t{1} << 40);  // one far outlier
    for (int k = 0; k < 50 * d; ++k) sequences.bucket(0, d).push_back(rng() % 3000);
  }
  const OutgoingIds set_messages = sets.finish();
  const OutgoingIds sequence_messages = sequences.finish();
  std::vector<std::uint64_t> mine;
  for (std::uint64_t v = 0; v < 300; ++v) mine.push_back(static_cast<std::uint64_t>(me) * 1000 + v * 3);
  std::vector<std::uint64_t> words(9);
  for (auto& w : words) w = rng() & rng();

  std::vector<std::uint64_t> plain_raw;
  for (const char* name : kCodecNames) {
    SCOPED_TRACE(name);
    PhaseMetrics metrics;
    comm.observe(&metrics);
    DirectExchanger plain(ColumnGather::kAllgatherv);
    DirectExchanger coded(ColumnGather::kAllgatherv, MessageCodec(*parse_codec_choice(name), calibrated()));
    DirectExchanger coded_union(ColumnGather::kUnion, MessageCodec(*parse_codec_choice(name), calibrated()));
    const ScopedPhase phase(metrics, Phase::kRowExchange);
    const IncomingIds want_sets = plain.all_to_all(comm, set_messages, IdsAre::kSet);
    const std::uint64_t plain_bytes = metrics[Phase::kRowExchange].raw_bytes;
    const IncomingIds got_sets = coded.all_to_all(comm, set_messages, IdsAre::kSet);
    EXPECT_EQ(metrics[Phase::kRowExchange].raw_bytes, 2 * plain_bytes);  // raw counts what plain sends
    for (int s = 0; s < p; ++s) {
      std::vector<std::uint64_t> want(want_sets.from(s).begin(), want_sets.from(s).end());
      std::vector<std::uint64_t> got(got_sets.from(s).begin(), got_sets.from(s).end());
      std::sort(want.begin(), want.end());
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want) << "from " << s;
    }
    const IncomingIds want_seq = plain.all_to_all(comm, sequence_messages, IdsAre::kSequence);
    const IncomingIds got_seq = coded.all_to_all(comm, sequence_messages, IdsAre::kSequence);
    EXPECT_EQ(got_seq.ids, want_seq.ids);
    EXPECT_EQ(got_seq.offsets, want_seq.offsets);
    EXPECT_EQ(coded.gather_ids(comm, mine), plain.gather_ids(comm, mine));
    EXPECT_EQ(coded_union.gather_ids(comm, mine), plain.gather_ids(comm, mine));
    std::vector<std::uint64_t> want_words(words.size() * static_cast<std::size_t>(p));
    std::vector<std::uint64_t> got_words(want_words.size(), 7);
    plain.gather_bitmap(comm, words, want_words);
    coded.gather_bitmap(comm, words, got_words);
    EXPECT_EQ(got_words, want_words);
    const PhaseCounters& c = metrics[Phase::kRowExchange];
    if (std::string_view(name) == "none") {
      EXPECT_EQ(c.wire_bytes, c.raw_bytes);
      EXPECT_EQ(c.encode_s, 0.0);
    } else if (std::string_view(name) == "auto") {
      // Over shared memory auto may find that nothing pays and send every message as it is.
      EXPECT_LE(c.wire_bytes, c.raw_bytes);
    } else if (std::string_view(name) != "zstd" && p > 1) {
      EXPECT_LT(c.wire_bytes, c.raw_bytes);
      std::uint64_t frames = 0;
      for (const std::uint64_t f : c.frames) frames += f;
      EXPECT_GT(frames, 0U);
    }
    comm.observe(nullptr);
  }
}

// A masked bitmap gather delivers each slice's bits at its mask's positions and 0
// elsewhere, through every codec, and sends only the packed positions: here member s's
// mask slice selects about one bit in s + 1 (none at all for the last member).
TEST(CodecExchange, MaskedBitmapGatherCarriesOnlyTheMaskedPositions) {
  Communicator comm = world();
  const int p = comm.size();
  const int me = comm.rank();
  constexpr std::size_t kWords = 11;
  std::mt19937_64 shared(99);  // the same mask on every rank
  std::vector<std::uint64_t> mask(kWords * static_cast<std::size_t>(p), 0);
  for (int s = 0; s + 1 < p || p == 1; ++s) {
    for (std::size_t w = 0; w < kWords; ++w) {
      for (unsigned bit = 0; bit < 64; ++bit) {
        if (shared() % static_cast<std::uint64_t>(s + 1) == 0) {
          mask[static_cast<std::size_t>(s) * kWords + w] |= std::uint64_t{1} << bit;
        }
      }
    }
    if (p == 1) break;
  }
  std::mt19937_64 rng(static_cast<std::uint64_t>(me) + 5);
  std::vector<std::uint64_t> words(kWords);
  for (auto& w : words) w = rng() | rng();
  std::vector<std::uint64_t> want(mask.size());
  for (int s = 0; s < p; ++s) {
    std::mt19937_64 theirs(static_cast<std::uint64_t>(s) + 5);
    for (std::size_t w = 0; w < kWords; ++w) {
      const std::size_t at = static_cast<std::size_t>(s) * kWords + w;
      want[at] = (theirs() | theirs()) & mask[at];
    }
  }
  std::uint64_t my_positions = 0;
  std::uint64_t my_ids = 0;
  for (std::size_t w = 0; w < kWords; ++w) {
    my_positions += static_cast<std::uint64_t>(std::popcount(mask[static_cast<std::size_t>(me) * kWords + w]));
    my_ids += static_cast<std::uint64_t>(std::popcount(want[static_cast<std::size_t>(me) * kWords + w]));
  }
  const auto peers = static_cast<std::uint64_t>(p - 1);
  for (const char* name : kCodecNames) {
    SCOPED_TRACE(name);
    PhaseMetrics metrics;
    comm.observe(&metrics);
    DirectExchanger exchanger(ColumnGather::kAllgatherv, std::string_view(name) == "none"
                                                             ? MessageCodec()
                                                             : MessageCodec(*parse_codec_choice(name), calibrated()));
    std::vector<std::uint64_t> got(mask.size(), 0x7777);
    {
      const ScopedPhase phase(metrics, Phase::kColumnExchange);
      exchanger.gather_bitmap(comm, words, got, mask);
    }
    EXPECT_EQ(got, want);
    const PhaseCounters& c = metrics[Phase::kColumnExchange];
    EXPECT_EQ(c.id_bytes, peers * my_ids * 8);
    // Plain gathers send the packed words: the mask's positions, not the slice.
    EXPECT_EQ(c.raw_bytes, peers * ((my_positions + 63) / 64) * 8);
    comm.observe(nullptr);
  }
}

// A mask of the wrong length is refused before anything is sent.
TEST(CodecExchange, MaskedBitmapGatherRefusesAMaskOfTheWrongLength) {
  const Communicator comm = world();
  DirectExchanger exchanger(ColumnGather::kAllgatherv);
  const std::vector<std::uint64_t> words(3, 1);
  std::vector<std::uint64_t> all(3 * static_cast<std::size_t>(comm.size()));
  const std::vector<std::uint64_t> mask(all.size() + 1, ~std::uint64_t{0});
  EXPECT_THROW(exchanger.gather_bitmap(comm, words, all, mask), Error);
}

// auto frames only what pays: here compressing costs 10 ns per id at each end, so over
// the slow inter-node link it pays for long messages only, and never within a node (two
// ranks per node). Exchanges that mix frames and unframed messages (and unframed ones
// only) deliver what the plain exchange delivers.
TEST(CodecExchange, AutoMixesFramedAndUnframedMessages) {
  Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  const int p = comm.size();
  const int me = comm.rank();
  NetworkModel network;
  network.intra_node = {0.5e-6, 10e9};
  network.inter_node = {50e-6, 117.5e6};
  std::vector<int> nodes(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) nodes[static_cast<std::size_t>(r)] = r / 2;
  comm.attach_nodes(nodes);
  PhaseMetrics metrics;
  metrics.price_links(network.intra_node, network.inter_node);
  comm.observe(&metrics);
  auto model = std::make_shared<const CodecCostModel>(CodecCostModel::uniform({4, 10e-9, 10e-9}, 1e-9));
  DirectExchanger plain(ColumnGather::kAllgatherv);
  DirectExchanger coded(ColumnGather::kAllgatherv, MessageCodec(*parse_codec_choice("auto"), model));
  DirectExchanger coded_union(ColumnGather::kUnion, MessageCodec(*parse_codec_choice("auto"), model));
  const ScopedPhase phase(metrics, Phase::kRowExchange);

  // Long messages to odd ranks, one id to even ranks; ids 97 apart, too sparse for a
  // bitmap to pay.
  OutgoingBuilder builder(p, 1);
  for (int d = 0; d < p; ++d) {
    const int n = d % 2 == 1 ? 500 : 1;
    for (int k = 0; k < n; ++k) {
      builder.bucket(0, d).push_back(static_cast<std::uint64_t>(me) * 10000000 +
                                     static_cast<std::uint64_t>(d) * 100000 + static_cast<std::uint64_t>(k) * 97);
    }
  }
  const OutgoingIds outgoing = builder.finish();
  const IncomingIds want = plain.all_to_all(comm, outgoing, IdsAre::kSequence);
  const IncomingIds got = coded.all_to_all(comm, outgoing, IdsAre::kSequence);
  EXPECT_EQ(got.ids, want.ids);
  EXPECT_EQ(got.offsets, want.offsets);
  const PhaseCounters& c = metrics[Phase::kRowExchange];
  std::uint64_t long_off_node = 0;
  for (int d = 1; d < p; d += 2) long_off_node += static_cast<std::uint64_t>(d / 2 != me / 2);
  std::uint64_t framed = 0;
  for (std::size_t k = 1; k < kCodecCount; ++k) framed += c.frames[k];
  EXPECT_EQ(framed, long_off_node);
  EXPECT_EQ(c.frames[static_cast<std::size_t>(CodecId::kNone)], static_cast<std::uint64_t>(p - 1) - long_off_node);

  // Gathers: rank 0 contributes little (unframed), the others much (framed off-node).
  std::vector<std::uint64_t> mine;
  for (std::uint64_t v = 0; v < (me == 0 ? 2U : 400U); ++v) mine.push_back(static_cast<std::uint64_t>(me) * 10000 + v);
  EXPECT_EQ(coded.gather_ids(comm, mine), plain.gather_ids(comm, mine));
  EXPECT_EQ(coded_union.gather_ids(comm, mine), plain.gather_ids(comm, mine));
  // Bitmaps: dense on even ranks (unframed words), one bit on odd ones (a framed list).
  std::vector<std::uint64_t> words(64, 0);
  if (me % 2 == 0) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(me) + 3);
    for (auto& w : words) w = rng();
  } else {
    words[5] = 1U << 3;
  }
  std::vector<std::uint64_t> want_words(words.size() * static_cast<std::size_t>(p));
  std::vector<std::uint64_t> got_words(want_words.size(), 7);
  plain.gather_bitmap(comm, words, want_words);
  coded.gather_bitmap(comm, words, got_words);
  EXPECT_EQ(got_words, want_words);
  comm.observe(nullptr);
}

// A hostile message aborts the receiving rank's exchange with a DecodeError rather than
// a crash: here every rank receives frames whose checksum was broken in flight.
TEST(CodecExchange, CorruptedFramesAreRefused) {
  const Communicator comm = Communicator::duplicate(MPI_COMM_WORLD);
  if (comm.size() == 1) GTEST_SKIP() << "needs two ranks";
  ByteBuffer frame;
  const std::vector<std::uint64_t> ids = {1, 5, 9};
  encode_frame(CodecId::kBitpack, ids, IdOrder::kSortedSet, frame);
  std::vector<std::uint8_t> bytes(frame.data(), frame.data() + frame.size());
  bytes.back() ^= 0x10;
  std::vector<std::uint64_t> counts;
  const std::vector<std::uint8_t> all = comm.allgatherv(std::span<const std::uint8_t>(bytes), counts);
  const auto peer = static_cast<std::size_t>((comm.rank() + 1) % comm.size());
  EXPECT_THROW(decode_frame(std::span(all).subspan(peer * bytes.size(), bytes.size()), 10), DecodeError);
}

}  // namespace
}  // namespace zbfs

namespace zbfs {
namespace {

// The probe against a node layout given by hand: with every rank on its own node the
// inter-node class and the loaded swap are measured (P/2 pairs), with one node neither.
// Every rank gets the same figures.
TEST(NetworkProbe, MeasuresPingPongAndTheLoadedSwapPerLayout) {
  const Communicator comm = world();
  const int p = comm.size();
  std::vector<int> own_nodes(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) own_nodes[static_cast<std::size_t>(r)] = r;
  const NetworkMeasurement spread = measure_network(comm, own_nodes);
  EXPECT_EQ(spread.inter_node.measured, p > 1);
  EXPECT_FALSE(spread.intra_node.measured);
  EXPECT_EQ(spread.inter_node_loaded.measured, p > 1);
  if (p > 1) {
    EXPECT_EQ(spread.inter_node_loaded.pairs, p / 2);
    ASSERT_EQ(spread.inter_node_loaded.samples.size(), 4U);  // 8 B, 64 KiB, 1 MiB, 4 MiB
    EXPECT_EQ(spread.inter_node_loaded.samples.back().bytes, 4U << 20);
    const LinkCost& loaded = spread.inter_node_loaded.fit;
    EXPECT_EQ(loaded.latency_s, spread.inter_node_loaded.samples.front().one_way_s);
    EXPECT_GT(loaded.latency_s, 0.0);
    EXPECT_GT(loaded.bandwidth_bytes_per_s, 0.0);
    const double fastest = comm.allreduce(loaded.bandwidth_bytes_per_s, ReduceOp::kMax);
    EXPECT_EQ(fastest, loaded.bandwidth_bytes_per_s);
    NetworkChoice measure;
    EXPECT_EQ(network_model_for(measure, &spread).inter_node.bandwidth_bytes_per_s, loaded.bandwidth_bytes_per_s);
    EXPECT_EQ(network_model_for(measure, &spread).inter_node.latency_s, loaded.latency_s);
  }

  const std::vector<int> one_node(static_cast<std::size_t>(p), 0);
  const NetworkMeasurement shared = measure_network(comm, one_node);
  EXPECT_FALSE(shared.inter_node.measured);
  EXPECT_FALSE(shared.inter_node_loaded.measured);
  EXPECT_EQ(shared.intra_node.measured, p > 1);
}

}  // namespace
}  // namespace zbfs
