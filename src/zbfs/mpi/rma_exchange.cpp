#include "zbfs/mpi/rma_exchange.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"

namespace zbfs {
namespace {

// A record in a window half: who sent it, whether it is flagged, how long its piece is;
// the piece follows, padded to 8 bytes so that the next header is aligned.
struct RecordHeader {
  std::uint32_t source = 0;
  std::uint32_t flagged = 0;
  std::uint64_t bytes = 0;
};
static_assert(sizeof(RecordHeader) == 16);

constexpr std::uint64_t padded(std::uint64_t bytes) { return (bytes + 7) / 8 * 8; }
constexpr std::uint64_t record_bytes(std::uint64_t piece) { return sizeof(RecordHeader) + padded(piece); }

// The first window's halves, and never less: small exchanges (termination counts, a
// sparse level's reports) then never grow one.
constexpr std::uint64_t kMinimumHalf = std::uint64_t{64} << 10;
// Two fill counters, one per half, then the halves.
constexpr std::uint64_t kCounters = 64;

}  // namespace

// An MPI window of two halves and their fill counters on every member of a communicator,
// in a passive-target epoch from creation to destruction (both collective).
class RmaExchange::Window {
 public:
  Window(const Communicator& comm, std::uint64_t half) : half_(half) {
    const std::uint64_t bytes = kCounters + 2 * half;
    check_mpi(MPI_Win_allocate(static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, comm.native(), &base_, &win_),
              "MPI_Win_allocate");
    // Errors come back as return codes (one line and the job's end), as on communicators.
    MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
    std::memset(base_, 0, static_cast<std::size_t>(kCounters));
    check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
    // No member may reserve room here before the counters are zero.
    check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
    check_mpi(MPI_Barrier(comm.native()), "MPI_Barrier");
  }
  ~Window() {
    // Collective, and only reached in step on every member (a failing rank aborts the job
    // instead of unwinding here alone).
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
  }
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  [[nodiscard]] std::uint64_t half() const { return half_; }
  // The half (0 or 1) the next exchange uses; each exchange flips it.
  std::uint64_t next_half() { return calls_++ % 2; }

  // Starts reserving *bytes at `target`'s half `h`: *offset gets the fill counter's old
  // value once flush_all() has returned (both must live until then).
  void reserve(int target, std::uint64_t h, const std::uint64_t* bytes, std::uint64_t* offset) const {
    check_mpi(MPI_Fetch_and_op(bytes, offset, MPI_UINT64_T, target, static_cast<MPI_Aint>(8 * h), MPI_SUM, win_),
              "MPI_Fetch_and_op");
  }
  void put(int target, std::uint64_t h, std::uint64_t offset, const void* data, std::uint64_t bytes) const {
    if (bytes == 0) return;
    check_mpi(MPI_Put(data, mpi_count(bytes, "put"), MPI_BYTE, target,
                      static_cast<MPI_Aint>(kCounters + h * half_ + offset), mpi_count(bytes, "put"), MPI_BYTE, win_),
              "MPI_Put");
  }
  void flush_all() const { check_mpi(MPI_Win_flush_all(win_), "MPI_Win_flush_all"); }
  // This rank's fill counter of half `h`, read and reset by atomics.
  std::uint64_t take_fill(int me, std::uint64_t h) const {
    const std::uint64_t zero = 0;
    std::uint64_t fill = 0;
    check_mpi(MPI_Fetch_and_op(&zero, &fill, MPI_UINT64_T, me, static_cast<MPI_Aint>(8 * h), MPI_REPLACE, win_),
              "MPI_Fetch_and_op");
    check_mpi(MPI_Win_flush(me, win_), "MPI_Win_flush");
    return fill;
  }
  // This rank's half `h`, once the puts into it are complete.
  [[nodiscard]] const std::uint8_t* local_half(std::uint64_t h) const {
    check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
    return static_cast<const std::uint8_t*>(base_) + kCounters + h * half_;
  }

 private:
  std::uint64_t half_;
  void* base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
  std::uint64_t calls_ = 0;
};

RmaExchange::RmaExchange() = default;
RmaExchange::~RmaExchange() = default;

std::uint64_t RmaExchange::window_bytes() const {
  std::uint64_t total = 0;
  for (const auto& [comm, window] : windows_) total += kCounters + 2 * window->half();
  return total;
}

RmaExchange::Window& RmaExchange::window_for(const Communicator& comm, std::uint64_t half_bytes) {
  const std::vector<int>& members = comm.world_ranks();
  auto found = windows_.find(members);
  if (found != windows_.end() && found->second->half() >= half_bytes) return *found->second;
  // Every member allocates alike, after all have checked that they can.
  const std::uint64_t half = std::max(kMinimumHalf, padded(half_bytes));
  const std::optional<std::uint64_t> available = available_memory_bytes();
  const std::uint64_t short_of_room = available && kCounters + 2 * half > *available ? 1 : 0;
  if (comm.allreduce(short_of_room, ReduceOp::kMax) != 0) {
    throw Error(ExitCode::kFailure,
                "--transport rma: a window of " + format_bytes(kCounters + 2 * half) +
                    " does not fit in a rank's memory; use --transport two-sided",
                ErrorScope::kAllRanks);
  }
  if (found != windows_.end()) {
    found->second.reset();
    ++growths_;
  }
  auto& slot = windows_[members];
  slot = std::make_unique<Window>(comm, half);
  return *slot;
}

std::vector<Communicator::Arrival> RmaExchange::exchange(const Communicator& comm,
                                                         std::span<const Communicator::Piece> pieces, CommPattern kind,
                                                         const Communicator::PlaceArrivals& place) {
  const auto members = static_cast<std::size_t>(comm.size());
  const auto me = static_cast<std::size_t>(comm.rank());
  if (pieces.size() != members) throw Error(ExitCode::kFailure, "rma exchange: one piece per member expected");
  std::vector<Communicator::Arrival> arrivals(members);
  arrivals[me] = {pieces[me].bytes.size(), pieces[me].flagged};
  std::vector<const std::uint8_t*> from(members, nullptr);
  if (members > 1) {
    std::uint64_t need = 0;  // the largest half any attempt asked for
    for (;;) {
      Window& window = window_for(comm, need);
      const std::uint64_t h = window.next_half();
      comm.start_transfers();
      std::uint64_t overflow = 0;
      std::vector<std::uint64_t> sent(members, 0);
      std::vector<RecordHeader> headers(members);
      // Every reservation at once, then one flush: one round trip, not one per receiver.
      std::vector<std::uint64_t> wanted(members, 0);
      std::vector<std::uint64_t> offset(members, 0);
      for (std::size_t d = 0; d < members; ++d) {
        if (d == me || (pieces[d].bytes.empty() && !pieces[d].flagged)) continue;
        wanted[d] = record_bytes(pieces[d].bytes.size());
        window.reserve(static_cast<int>(d), h, &wanted[d], &offset[d]);
      }
      window.flush_all();
      for (std::size_t d = 0; d < members; ++d) {
        if (wanted[d] == 0) continue;
        const std::uint64_t bytes = wanted[d];
        const std::uint64_t at = offset[d];
        if (at + bytes > window.half()) {
          overflow = std::max(overflow, at + bytes);
          continue;
        }
        headers[d] = {static_cast<std::uint32_t>(me), pieces[d].flagged ? 1U : 0U, pieces[d].bytes.size()};
        window.put(static_cast<int>(d), h, at, &headers[d], sizeof(RecordHeader));
        window.put(static_cast<int>(d), h, at + sizeof(RecordHeader), pieces[d].bytes.data(), pieces[d].bytes.size());
        sent[d] = bytes;
      }
      window.flush_all();
      // The puts are booked now, with the time since start_transfers(); the allreduce
      // books its own.
      comm.book_transfers(kind, sent);
      // Every reservation and put has completed once every member is here, and all learn
      // of an overflow; only then is the fill counter final (and reset for the half's
      // next use, which no member can reach before this rank's next allreduce).
      const std::uint64_t worst = comm.allreduce(overflow, ReduceOp::kMax);
      const std::uint64_t fill = window.take_fill(comm.rank(), h);
      if (worst == 0) {
        if (fill > window.half()) throw Error(ExitCode::kFailure, "rma exchange: a window filled past its end");
        const std::uint8_t* half = window.local_half(h);
        for (std::uint64_t at = 0; at < fill;) {
          RecordHeader header;
          std::memcpy(&header, half + at, sizeof(RecordHeader));
          const auto source = static_cast<std::size_t>(header.source);
          // The length is bounded before it is padded, so that no sum wraps.
          if (source >= members || source == me || from[source] != nullptr || header.bytes > fill - at ||
              at + record_bytes(header.bytes) > fill) {
            throw Error(ExitCode::kFailure, "rma exchange: a malformed record in the window");
          }
          arrivals[source] = {header.bytes, header.flagged != 0};
          from[source] = half + at + sizeof(RecordHeader);
          at += record_bytes(header.bytes);
        }
        break;
      }
      // Undone: the records that did land are dropped, and the windows grow to fit.
      // Each receiver's fill is all it was asked to hold: the largest, and a quarter more.
      const std::uint64_t demand = comm.allreduce(fill, ReduceOp::kMax);
      need = demand + demand / 4;
    }
  }
  const std::span<std::uint8_t> into = place(arrivals);
  std::uint64_t total = 0;
  for (const Communicator::Arrival& a : arrivals) total += a.bytes;
  if (into.size() != total) throw Error(ExitCode::kFailure, "rma exchange: the buffer does not fit the arrivals");
  std::uint64_t at = 0;
  for (std::size_t s = 0; s < members; ++s) {
    const std::uint8_t* piece = s == me ? pieces[me].bytes.data() : from[s];
    if (arrivals[s].bytes != 0) std::memcpy(into.data() + at, piece, arrivals[s].bytes);
    at += arrivals[s].bytes;
  }
  return arrivals;
}

}  // namespace zbfs
