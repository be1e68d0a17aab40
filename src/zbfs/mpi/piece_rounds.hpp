// PieceRounds: how an exchange's rounds move between ranks (--transport), chosen once per
// run by the exchanger factory. Two implementations:
// - TwoSidedRounds: matched messages. A round of pieces is Communicator::exchange_probed;
//   plain words use MPI's own collectives (allgather(v), a shift by sendrecv).
// - RmaRounds: MPI-3 one-sided puts into windows allocated once per run (RmaExchange);
//   plain words travel as pieces of the same rounds.
// The exchanger above encodes, books and decodes; a PieceRounds only moves bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "zbfs/mpi/communicator.hpp"
#include "zbfs/mpi/rma_exchange.hpp"

namespace zbfs {

// What a transport holds for the run (one-sided windows).
struct TransportStats {
  std::uint64_t window_bytes = 0;    // this rank's windows, all groups
  std::uint64_t window_growths = 0;  // times a round outgrew a window and it grew
};

class PieceRounds {
 public:
  virtual ~PieceRounds() = default;
  // One round of pieces, one per member (flagged or not); the contract of
  // Communicator::exchange_probed. Collective over `comm`.
  virtual std::vector<Communicator::Arrival> exchange(const Communicator& comm,
                                                      std::span<const Communicator::Piece> pieces, CommPattern kind,
                                                      const Communicator::PlaceArrivals& place) = 0;
  // Every member's words (member s: words[s] of them) concatenated in rank order into
  // `all`. Collective.
  virtual void gather_words(const Communicator& comm, std::span<const std::uint64_t> mine,
                            std::span<const std::uint64_t> words, std::span<std::uint64_t> all) = 0;
  // `mine` to member `next`, and member `previous`'s words (as many) into `received`.
  // Collective.
  virtual void shift_words(const Communicator& comm, std::span<const std::uint64_t> mine, int next,
                           std::span<std::uint64_t> received, int previous) = 0;
  [[nodiscard]] virtual TransportStats stats() const = 0;
};

class TwoSidedRounds final : public PieceRounds {
 public:
  std::vector<Communicator::Arrival> exchange(const Communicator& comm, std::span<const Communicator::Piece> pieces,
                                              CommPattern kind, const Communicator::PlaceArrivals& place) override;
  void gather_words(const Communicator& comm, std::span<const std::uint64_t> mine, std::span<const std::uint64_t> words,
                    std::span<std::uint64_t> all) override;
  void shift_words(const Communicator& comm, std::span<const std::uint64_t> mine, int next,
                   std::span<std::uint64_t> received, int previous) override;
  [[nodiscard]] TransportStats stats() const override { return {}; }
};

class RmaRounds final : public PieceRounds {
 public:
  std::vector<Communicator::Arrival> exchange(const Communicator& comm, std::span<const Communicator::Piece> pieces,
                                              CommPattern kind, const Communicator::PlaceArrivals& place) override;
  void gather_words(const Communicator& comm, std::span<const std::uint64_t> mine, std::span<const std::uint64_t> words,
                    std::span<std::uint64_t> all) override;
  void shift_words(const Communicator& comm, std::span<const std::uint64_t> mine, int next,
                   std::span<std::uint64_t> received, int previous) override;
  [[nodiscard]] TransportStats stats() const override { return {rma_.window_bytes(), rma_.growths()}; }

 private:
  RmaExchange rma_;
};

}  // namespace zbfs
