// RmaExchange: the personalised exchange of Communicator::exchange_probed (one piece of
// any length per member, each flagged or not; the receiver says where the arrivals go)
// carried by MPI-3 one-sided operations instead of matched messages (--transport rma).
//
// Each group of ranks it serves gets one window (MPI_Win_allocate) at its first exchange,
// kept for the run and in a passive-target epoch (lock_all) for its whole life. Windows
// are found by the group's members (their world ranks, in order), which every member
// sees alike: communicators with the same members share a window (their exchanges are
// collectives of the same ranks, one after another), and a communicator made later at a
// freed one's address finds nothing stale.
//
// A sender reserves room at each receiver with one remote fetch-and-add on the
// receiver's fill counter (all issued at once, then one flush), puts its piece there
// behind a 16-byte record header (source, flag, length), flushes, and then notifies
// every other member with one atomic add on its arrival counter (a notification, and
// whether a record was put). A receiver is done when every member's notification is in:
// no receiver matches messages, no sizes travel first, and no collective completes the
// round. The window has two halves used by alternate exchanges, so that a rank already
// in the next exchange cannot write into a half its receiver still reads; counters are
// touched only by atomics (a reset is an atomic replace).
//
// A piece that finds no room in its receiver's half goes as a message instead (the
// notification says so) on a communicator kept for these spills, so the round still
// completes. Each exchange ends by offering, without waiting, what its half would have
// needed (a nonblocking allreduce); the next exchange takes the agreement first and,
// when some half was too small, every member grows the window alike (collectively, after
// every rank has checked its memory: a machine without room ends the job with one line,
// as the memory check does). The first window is sized by the first exchange that needs
// one, so the runs' windows are allocated while kernel 1 warms up and reused by every
// search.
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
