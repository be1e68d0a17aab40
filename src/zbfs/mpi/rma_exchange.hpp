// RmaExchange: the personalised exchange of Communicator::exchange_probed (one piece of
// any length per member, each flagged or not; the receiver says where the arrivals go)
// carried by MPI-3 one-sided operations instead of matched messages (--transport rma):
// one window per group of ranks, kept for the run; a sender reserves room with a remote
// fetch-and-add, puts its piece and notifies with an atomic add, so no receiver matches
// messages and no collective completes a round. docs/transports.md has the windows'
// halves, the spills and how a window grows.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

class RmaExchange {
 public:
  RmaExchange();
  ~RmaExchange();
  RmaExchange(const RmaExchange&) = delete;
  RmaExchange& operator=(const RmaExchange&) = delete;

  // Collective over `comm`; the contract of Communicator::exchange_probed.
  std::vector<Communicator::Arrival> exchange(const Communicator& comm, std::span<const Communicator::Piece> pieces,
                                              CommPattern kind, const Communicator::PlaceArrivals& place);

  // How often windows grew, and the bytes they hold now (all communicators, this rank).
  [[nodiscard]] std::uint64_t growths() const { return growths_; }
  [[nodiscard]] std::uint64_t window_bytes() const;

 private:
  class Window;
  // The window for `comm` with halves of at least `half_bytes` (made or grown
  // collectively).
  Window& window_for(const Communicator& comm, std::uint64_t half_bytes);

  // One exchange's steps in half `h` of `window`: reserve room at each receiver, put the
  // pieces (or spill them as messages: the requests returned) and notify (`sent`: the
  // bytes to each member); wait for every member's notification (returned); read the
  // records put here up to the half's `fill`, and receive the spilled pieces.
  static std::vector<MPI_Request> send_pieces(const Communicator& comm, Window& window, std::uint64_t h,
                                              std::span<const Communicator::Piece> pieces,
                                              std::vector<std::uint64_t>& sent);
  static std::uint64_t await_notifications(const Communicator& comm, Window& window, std::uint64_t h);
  static void read_records(const Communicator& comm, Window& window, std::uint64_t h, std::uint64_t records,
                           std::uint64_t fill, std::vector<Communicator::Arrival>& arrivals,
                           std::vector<const std::uint8_t*>& from);
  static void receive_spills(const Communicator& comm, Window& window, std::uint64_t h, std::uint64_t spilled,
                             std::vector<Communicator::Arrival>& arrivals, std::vector<const std::uint8_t*>& from,
                             std::vector<std::vector<std::uint8_t>>& spilled_in);

  std::map<std::vector<int>, std::unique_ptr<Window>> windows_;
  std::uint64_t growths_ = 0;
};

}  // namespace zbfs
