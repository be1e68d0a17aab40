#include "zbfs/mpi/rma_exchange.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"
#include "zbfs/mpi/probed_message.hpp"

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
// sparse level's reports) then never spill.
constexpr std::uint64_t kMinimumHalf = std::uint64_t{64} << 10;
// The counters: per half, the fill counter (at 8 h) and the arrival counter (at 16 + 8 h).
constexpr std::uint64_t kCounters = 64;
constexpr std::uint64_t fill_at(std::uint64_t h) { return 8 * h; }
constexpr std::uint64_t arrivals_at(std::uint64_t h) { return 16 + 8 * h; }
// What a sender adds to a receiver's arrival counter: one notification, plus one record
// when its piece is in the window, or one spill when it comes as a message instead.
constexpr int kRecordShift = 20;
constexpr int kSpillShift = 40;
constexpr std::uint64_t kFieldMask = (std::uint64_t{1} << 20) - 1;
constexpr std::uint64_t kNotification = 1;
constexpr std::uint64_t kRecord = std::uint64_t{1} << kRecordShift;
constexpr std::uint64_t kSpill = std::uint64_t{1} << kSpillShift;

}  // namespace

// An MPI window of two halves and their counters on every member of a communicator, in a
// passive-target epoch from creation to destruction (both collective), with the
// communicators its spilled pieces (one per half) and its growth agreements travel on.
class RmaExchange::Window {
 public:
  Window(const Communicator& comm, std::uint64_t half) : half_(half) {
    if (comm.size() > static_cast<int>(kFieldMask)) {
      throw Error(ExitCode::kUsage,
                  "--transport rma counts members in 20 bits: at most " + std::to_string(kFieldMask) +
                      " ranks per communicator",
                  ErrorScope::kAllRanks);
    }
    const std::uint64_t bytes = kCounters + 2 * half;
    check_mpi(MPI_Win_allocate(static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, comm.native(), &base_, &win_),
              "MPI_Win_allocate");
    // Errors come back as return codes (one line and the job's end), as on communicators.
    MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
    std::memset(base_, 0, static_cast<std::size_t>(kCounters));
    for (MPI_Comm& c : spill_) c = duplicate_returning_errors(comm.native());
    agree_ = duplicate_returning_errors(comm.native());
    check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
    // No member may reserve room here before the counters are zero.
    check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
    check_mpi(MPI_Barrier(comm.native()), "MPI_Barrier");
  }
  ~Window() {
    // Collective, and only reached in step on every member (a failing rank aborts the job
    // instead of unwinding here alone); every member started the last agreement.
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized != 0) return;
    if (agreement_ != MPI_REQUEST_NULL) MPI_Wait(&agreement_, MPI_STATUS_IGNORE);
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
    for (MPI_Comm& c : spill_) MPI_Comm_free(&c);
    MPI_Comm_free(&agree_);
  }
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  [[nodiscard]] std::uint64_t half() const { return half_; }
  // The half (0 or 1) the next exchange uses; each exchange flips it.
  std::uint64_t next_half() { return calls_++ % 2; }
  [[nodiscard]] MPI_Comm spill_comm(std::uint64_t h) const { return spill_[h]; }

  // Starts reserving *bytes at `target`'s half `h`: *offset gets the fill counter's old
  // value once flush_all() has returned (both must live until then).
  void reserve(int target, std::uint64_t h, const std::uint64_t* bytes, std::uint64_t* offset) const {
    check_mpi(MPI_Fetch_and_op(bytes, offset, MPI_UINT64_T, target, static_cast<MPI_Aint>(fill_at(h)), MPI_SUM, win_),
              "MPI_Fetch_and_op");
  }
  void put(int target, std::uint64_t h, std::uint64_t offset, const void* data, std::uint64_t bytes) const {
    if (bytes == 0) return;
    check_mpi(MPI_Put(data, mpi_count(bytes, "put"), MPI_BYTE, target,
                      static_cast<MPI_Aint>(kCounters + h * half_ + offset), mpi_count(bytes, "put"), MPI_BYTE, win_),
              "MPI_Put");
  }
  // Adds *value to `target`'s arrival counter of half `h` (*value must live until the
  // next flush).
  void notify(int target, std::uint64_t h, const std::uint64_t* value) const {
    check_mpi(MPI_Accumulate(value, 1, MPI_UINT64_T, target, static_cast<MPI_Aint>(arrivals_at(h)), 1, MPI_UINT64_T,
                             MPI_SUM, win_),
              "MPI_Accumulate");
  }
  void flush_all() const { check_mpi(MPI_Win_flush_all(win_), "MPI_Win_flush_all"); }
  // This rank's counter at `at`, read atomically.
  std::uint64_t read(int me, std::uint64_t at) const {
    std::uint64_t value = 0;
    check_mpi(MPI_Fetch_and_op(nullptr, &value, MPI_UINT64_T, me, static_cast<MPI_Aint>(at), MPI_NO_OP, win_),
              "MPI_Fetch_and_op");
    check_mpi(MPI_Win_flush(me, win_), "MPI_Win_flush");
    return value;
  }
  // This rank's counter at `at`, read and reset by atomics.
  std::uint64_t take(int me, std::uint64_t at) const {
    const std::uint64_t zero = 0;
    std::uint64_t value = 0;
    check_mpi(MPI_Fetch_and_op(&zero, &value, MPI_UINT64_T, me, static_cast<MPI_Aint>(at), MPI_REPLACE, win_),
              "MPI_Fetch_and_op");
    check_mpi(MPI_Win_flush(me, win_), "MPI_Win_flush");
    return value;
  }
  // This rank's half `h`, once the puts into it are complete.
  [[nodiscard]] const std::uint8_t* local_half(std::uint64_t h) const {
    check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
    return static_cast<const std::uint8_t*>(base_) + kCounters + h * half_;
  }
  // The growth agreement: every member offers the half it needed (0: its window was big
  // enough) at the end of an exchange, without waiting; the next exchange takes the
  // largest offer before it starts.
  void offer(std::uint64_t needed) {
    offered_ = needed;
    check_mpi(MPI_Iallreduce(&offered_, &agreed_, 1, MPI_UINT64_T, MPI_MAX, agree_, &agreement_), "MPI_Iallreduce");
  }
  std::uint64_t agreed() {
    if (agreement_ == MPI_REQUEST_NULL) return 0;
    check_mpi(MPI_Wait(&agreement_, MPI_STATUS_IGNORE), "MPI_Wait");
    return agreed_;
  }

 private:
  std::uint64_t half_;
  void* base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
  MPI_Comm spill_[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
  MPI_Comm agree_ = MPI_COMM_NULL;
  MPI_Request agreement_ = MPI_REQUEST_NULL;
  std::uint64_t offered_ = 0;
  std::uint64_t agreed_ = 0;
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

std::vector<MPI_Request> RmaExchange::send_pieces(const Communicator& comm, Window& window, std::uint64_t h,
                                                  std::span<const Communicator::Piece> pieces,
                                                  std::vector<std::uint64_t>& sent) {
  const auto members = static_cast<std::size_t>(comm.size());
  const auto me = static_cast<std::size_t>(comm.rank());
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
  // A piece that finds no room goes as a message on the half's spill communicator.
  std::vector<std::uint64_t> notice(members, kNotification);
  std::vector<MPI_Request> spills;
  for (std::size_t d = 0; d < members; ++d) {
    if (wanted[d] == 0) continue;
    const std::uint64_t at = offset[d];
    if (at + wanted[d] > window.half()) {
      spills.emplace_back(MPI_REQUEST_NULL);
      check_mpi(MPI_Isend(pieces[d].bytes.data(), mpi_count(pieces[d].bytes.size(), "rma spill"), MPI_BYTE,
                          static_cast<int>(d), pieces[d].flagged ? 1 : 0, window.spill_comm(h), &spills.back()),
                "MPI_Isend");
      notice[d] += kSpill;
      sent[d] = pieces[d].bytes.size();
      continue;
    }
    headers[d] = {static_cast<std::uint32_t>(me), pieces[d].flagged ? 1U : 0U, pieces[d].bytes.size()};
    window.put(static_cast<int>(d), h, at, &headers[d], sizeof(RecordHeader));
    window.put(static_cast<int>(d), h, at + sizeof(RecordHeader), pieces[d].bytes.data(), pieces[d].bytes.size());
    notice[d] += kRecord;
    sent[d] = wanted[d];
  }
  // The puts are complete at their targets before the notifications that announce them.
  window.flush_all();
  for (std::size_t d = 0; d < members; ++d) {
    if (d != me) window.notify(static_cast<int>(d), h, &notice[d]);
  }
  window.flush_all();
  return spills;
}

std::uint64_t RmaExchange::await_notifications(const Communicator& comm, Window& window, std::uint64_t h) {
  const auto members = static_cast<std::uint64_t>(comm.size());
  const int my_rank = comm.rank();
  // Every other member's notification: then every record put here is complete, and no
  // member reserves in this half again before this rank's next exchange is under way.
  std::uint64_t arrived = window.read(my_rank, arrivals_at(h));
  for (int polls = 1; (arrived & kFieldMask) < members - 1; ++polls) {
    // A member still on its way may need this core (more ranks than cores): after a
    // short spin, every poll first gives it up.
    if (polls > 64) std::this_thread::yield();
    arrived = window.read(my_rank, arrivals_at(h));
  }
  if ((arrived & kFieldMask) != members - 1) throw Error(ExitCode::kFailure, "rma exchange: too many notifications");
  window.take(my_rank, arrivals_at(h));
  return arrived;
}

void RmaExchange::read_records(const Communicator& comm, Window& window, std::uint64_t h, std::uint64_t records,
                               std::uint64_t fill, std::vector<Communicator::Arrival>& arrivals,
                               std::vector<const std::uint8_t*>& from) {
  const auto members = static_cast<std::size_t>(comm.size());
  const auto me = static_cast<std::size_t>(comm.rank());
  // The pieces that fit are the first reservations, back to back from the half's start.
  const std::uint64_t written = std::min(fill, window.half());
  const std::uint8_t* half = window.local_half(h);
  std::uint64_t at = 0;
  for (std::uint64_t r = 0; r < records; ++r) {
    RecordHeader header;
    if (at + sizeof(RecordHeader) > written) throw Error(ExitCode::kFailure, "rma exchange: a record past the fill");
    std::memcpy(&header, half + at, sizeof(RecordHeader));
    const auto source = static_cast<std::size_t>(header.source);
    // The length is bounded before it is padded, so that no sum wraps.
    if (source >= members || source == me || from[source] != nullptr || header.bytes > written - at ||
        at + record_bytes(header.bytes) > written) {
      throw Error(ExitCode::kFailure, "rma exchange: a malformed record in the window");
    }
    arrivals[source] = {header.bytes, header.flagged != 0};
    from[source] = half + at + sizeof(RecordHeader);
    at += record_bytes(header.bytes);
  }
}

void RmaExchange::receive_spills(const Communicator& comm, Window& window, std::uint64_t h, std::uint64_t spilled,
                                 std::vector<Communicator::Arrival>& arrivals, std::vector<const std::uint8_t*>& from,
                                 std::vector<std::vector<std::uint8_t>>& spilled_in) {
  const auto members = static_cast<std::size_t>(comm.size());
  for (std::uint64_t k = 0; k < spilled; ++k) {
    MPI_Status status;
    ProbedMessage matched(MPI_ANY_SOURCE, MPI_ANY_TAG, window.spill_comm(h), status);
    int count = 0;
    check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
    const auto source = static_cast<std::size_t>(status.MPI_SOURCE);
    if (source >= members || from[source] != nullptr) {
      throw Error(ExitCode::kFailure, "rma exchange: a spilled piece from a member already heard");
    }
    spilled_in[source].resize(static_cast<std::size_t>(count));
    matched.receive(spilled_in[source].data(), count, MPI_BYTE);
    arrivals[source] = {static_cast<std::uint64_t>(count), status.MPI_TAG == 1};
    from[source] = spilled_in[source].data();
  }
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
  std::vector<std::vector<std::uint8_t>> spilled_in(members);
  if (members > 1) {
    // The previous exchange's agreement: when a receiver's half was too small, every
    // member grows the window now, alike.
    Window* window = &window_for(comm, 0);
    if (const std::uint64_t needed = window->agreed(); needed > window->half()) {
      window = &window_for(comm, needed + needed / 4);
    }
    const std::uint64_t h = window->next_half();
    comm.start_transfers();
    std::vector<std::uint64_t> sent(members, 0);
    std::vector<MPI_Request> spills = send_pieces(comm, *window, h, pieces, sent);
    const std::uint64_t arrived = await_notifications(comm, *window, h);
    const std::uint64_t spilled = arrived >> kSpillShift;
    const std::uint64_t fill = window->take(comm.rank(), fill_at(h));
    read_records(comm, *window, h, (arrived >> kRecordShift) & kFieldMask, fill, arrivals, from);
    receive_spills(comm, *window, h, spilled, arrivals, from, spilled_in);
    if (!spills.empty()) {
      check_mpi(MPI_Waitall(static_cast<int>(spills.size()), spills.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    }
    comm.book_transfers(kind, sent);
    // What this half needed, when it was too small: the windows grow before the next
    // exchange, agreed meanwhile.
    window->offer(spilled > 0 ? fill : 0);
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
