#include "zbfs/mpi/piece_rounds.hpp"

#include <algorithm>
#include <string>

#include "zbfs/core/byte_buffer.hpp"

namespace zbfs {

namespace {

using Piece = Communicator::Piece;
using Arrival = Communicator::Arrival;

std::span<const std::uint8_t> byte_view(std::span<const std::uint64_t> words) {
  return {reinterpret_cast<const std::uint8_t*>(words.data()), words.size_bytes()};
}
std::span<std::uint8_t> byte_view(std::span<std::uint64_t> words) {
  return {reinterpret_cast<std::uint8_t*>(words.data()), words.size_bytes()};
}

}  // namespace

std::vector<Arrival> TwoSidedRounds::exchange(const Communicator& comm, std::span<const Piece> pieces, CommPattern kind,
                                              const Communicator::PlaceArrivals& place) {
  return comm.exchange_probed(pieces, kind, place);
}

void TwoSidedRounds::gather_words(const Communicator& comm, std::span<const std::uint64_t> mine,
                                  std::span<const std::uint64_t> words, std::span<std::uint64_t> all) {
  const bool equal = std::all_of(words.begin(), words.end(), [&](std::uint64_t w) { return w == mine.size(); });
  if (equal) {
    comm.allgather(mine, all);
  } else {
    comm.allgatherv_into(mine, words, all);
  }
}

void TwoSidedRounds::shift_words(const Communicator& comm, std::span<const std::uint64_t> mine, int next,
                                 std::span<std::uint64_t> received, int previous) {
  comm.shift_into(mine, next, received, previous);
}

std::vector<Arrival> RmaRounds::exchange(const Communicator& comm, std::span<const Piece> pieces, CommPattern kind,
                                         const Communicator::PlaceArrivals& place) {
  return rma_.exchange(comm, pieces, kind, place);
}

void RmaRounds::gather_words(const Communicator& comm, std::span<const std::uint64_t> mine,
                             std::span<const std::uint64_t> words, std::span<std::uint64_t> all) {
  // Each member's words, as they are, put into every member's window; they land in `all`.
  std::vector<Piece> pieces(static_cast<std::size_t>(comm.size()), Piece{byte_view(mine), false});
  rma_.exchange(comm, pieces, CommPattern::kGather, [&](std::span<const Arrival> arrivals) {
    for (std::size_t s = 0; s < arrivals.size(); ++s) {
      const std::uint64_t expected = words[s] * sizeof(std::uint64_t);
      if (arrivals[s].flagged || arrivals[s].bytes != expected) {
        throw DecodeError("gathered words: " + std::to_string(arrivals[s].bytes) + " bytes from member " +
                          std::to_string(s) + ", expected " + std::to_string(expected));
      }
    }
    return byte_view(all);
  });
}

void RmaRounds::shift_words(const Communicator& comm, std::span<const std::uint64_t> mine, int next,
                            std::span<std::uint64_t> received, int previous) {
  // The words as they are, put into the successor's window.
  std::vector<Piece> pieces(static_cast<std::size_t>(comm.size()));
  pieces[static_cast<std::size_t>(next)] = {byte_view(mine), false};
  rma_.exchange(comm, pieces, CommPattern::kPairwise, [&](std::span<const Arrival> arrivals) {
    std::uint64_t total = 0;
    for (const Arrival& a : arrivals) total += a.bytes;
    const Arrival& from = arrivals[static_cast<std::size_t>(previous)];
    if (total != received.size_bytes() || from.bytes != total || from.flagged) {
      throw DecodeError("bitmap shift: " + std::to_string(total) + " bytes, expected " +
                        std::to_string(received.size_bytes()));
    }
    return byte_view(received);
  });
}

}  // namespace zbfs
