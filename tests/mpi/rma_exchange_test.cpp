// The one-sided exchange (mpi/rma_exchange.hpp) keeps exchange_probed's contract: every
// member's piece arrives whole, flagged as sent, in source order where the receiver
// placed it; empty and flagged-empty pieces included; over many rounds (the halves
// alternate), on the job and on its halves (windows found by their members), and when a
// round outgrows the window (its pieces spill as messages and the window grows).
#include "zbfs/mpi/rma_exchange.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/mpi/piece_rounds.hpp"

namespace zbfs {
namespace {

Communicator world() { return Communicator::duplicate(MPI_COMM_WORLD); }

// Piece from s to d in round r: its length and its bytes.
std::uint64_t length_of(int s, int d, int r, std::uint64_t scale) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(s * 7919 + d * 104729 + r * 1299709));
  return rng() % 4 == 0 ? 0 : rng() % scale;
}
std::uint8_t byte_of(int s, int d, int r, std::uint64_t k) { return static_cast<std::uint8_t>(s * 13 + d * 5 + r + k); }

void check_rounds(const Communicator& comm, RmaExchange& rma, int rounds, std::uint64_t scale) {
  const int p = comm.size();
  const int me = comm.rank();
  for (int r = 0; r < rounds; ++r) {
    std::vector<std::vector<std::uint8_t>> out(static_cast<std::size_t>(p));
    std::vector<Communicator::Piece> pieces(static_cast<std::size_t>(p));
    for (int d = 0; d < p; ++d) {
      auto& bytes = out[static_cast<std::size_t>(d)];
      bytes.resize(length_of(me, d, r, scale));
      for (std::uint64_t k = 0; k < bytes.size(); ++k) bytes[k] = byte_of(me, d, r, k);
      pieces[static_cast<std::size_t>(d)] = {bytes, (me + d + r) % 3 == 0};
    }
    std::vector<std::uint8_t> received;
    const std::vector<Communicator::Arrival> arrivals =
        rma.exchange(comm, pieces, CommPattern::kPersonalized, [&](std::span<const Communicator::Arrival> a) {
          std::uint64_t total = 0;
          for (const auto& x : a) total += x.bytes;
          received.assign(total, 0xEE);
          return std::span<std::uint8_t>(received);
        });
    ASSERT_EQ(arrivals.size(), static_cast<std::size_t>(p));
    std::uint64_t at = 0;
    for (int s = 0; s < p; ++s) {
      const Communicator::Arrival& a = arrivals[static_cast<std::size_t>(s)];
      ASSERT_EQ(a.bytes, length_of(s, me, r, scale)) << "round " << r << " from " << s;
      if (a.bytes > 0 || s == me) {
        EXPECT_EQ(a.flagged, (s + me + r) % 3 == 0) << "round " << r << " from " << s;
      }
      for (std::uint64_t k = 0; k < a.bytes; ++k) {
        ASSERT_EQ(received[at + k], byte_of(s, me, r, k)) << "round " << r << " from " << s << " byte " << k;
      }
      at += a.bytes;
    }
  }
}

TEST(RmaExchange, ManyRoundsDeliverEveryPieceInPlace) {
  const Communicator comm = world();
  RmaExchange rma;
  check_rounds(comm, rma, 40, 300);
}

// A piece that finds no room arrives as a message (the round still delivers every
// piece), and the windows grow before the next round, once every member agrees.
TEST(RmaExchange, PiecesThatOutgrowTheWindowSpillAndTheWindowGrows) {
  const Communicator comm = world();
  RmaExchange rma;
  check_rounds(comm, rma, 3, 100);
  const std::uint64_t before = rma.window_bytes();
  check_rounds(comm, rma, 1, 200000);  // spills
  check_rounds(comm, rma, 3, 200000);
  if (comm.size() > 1) {
    EXPECT_GE(rma.growths(), 1U);
    EXPECT_GT(rma.window_bytes(), before);
  }
  check_rounds(comm, rma, 5, 100);
}

TEST(RmaExchange, HalvesOfTheJobGetTheirOwnWindows) {
  const Communicator comm = world();
  const Communicator half = comm.split(comm.rank() % 2, comm.rank());
  const Communicator same = comm.split(0, comm.rank());  // the job's members again
  RmaExchange rma;
  for (int i = 0; i < 3; ++i) {
    check_rounds(comm, rma, 2, 500);
    check_rounds(half, rma, 2, 500);
    check_rounds(same, rma, 2, 500);
  }
}

// Both transports behind PieceRounds move plain words alike: a gather of unequal slices
// and a ring shift, as the collectives deliver them.
TEST(PieceRounds, OneSidedWordsArriveAsTheCollectivesDeliverThem) {
  const Communicator comm = world();
  const int p = comm.size();
  const int me = comm.rank();
  std::vector<std::uint64_t> words(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) words[static_cast<std::size_t>(s)] = static_cast<std::uint64_t>(s % 3) * 5;
  std::uint64_t total = 0;
  for (const std::uint64_t w : words) total += w;
  std::vector<std::uint64_t> mine(words[static_cast<std::size_t>(me)]);
  for (std::size_t k = 0; k < mine.size(); ++k) mine[k] = static_cast<std::uint64_t>(me) * 1000 + k;
  TwoSidedRounds two_sided;
  RmaRounds one_sided;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::uint64_t> expected(total);
    std::vector<std::uint64_t> got(total);
    two_sided.gather_words(comm, mine, words, expected);
    one_sided.gather_words(comm, mine, words, got);
    EXPECT_EQ(got, expected) << "round " << round;
    const std::vector<std::uint64_t> ring(7, static_cast<std::uint64_t>(me) + 100 * static_cast<std::uint64_t>(round));
    std::vector<std::uint64_t> from_two_sided(7);
    std::vector<std::uint64_t> from_one_sided(7);
    const int next = (me + 1) % p;
    const int previous = (me + p - 1) % p;
    two_sided.shift_words(comm, ring, next, from_two_sided, previous);
    one_sided.shift_words(comm, ring, next, from_one_sided, previous);
    EXPECT_EQ(from_one_sided, from_two_sided);
    EXPECT_EQ(from_one_sided[0], static_cast<std::uint64_t>(previous) + 100 * static_cast<std::uint64_t>(round));
  }
  if (p > 1) {
    EXPECT_GT(one_sided.stats().window_bytes, 0U);
  }
  EXPECT_EQ(two_sided.stats().window_bytes, 0U);
}

}  // namespace
}  // namespace zbfs
