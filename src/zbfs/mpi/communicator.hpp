// Communicator: an owned MPI communicator (RAII; freed on destruction) with the typed
// collectives zbfs uses. Every member that communicates is collective over the
// communicator. A failing MPI call throws Error; main() then aborts the whole job, so no
// rank is left waiting. Each call is reported to the attached TrafficObserver
// (mpi/traffic.hpp), counted as this rank's sends in the textbook algorithm of each
// collective: direct exchange for all-to-all and all-gather ((P-1) messages of this
// rank's data), recursive doubling for allreduce (ceil(log2 P) messages of the whole
// buffer), with the time spent inside MPI. Given the node layout (attach_nodes), the
// report splits the traffic by link class (mpi/collective_traffic.hpp), which the
// observer prices. With wait timing on, every collective first waits in a timed barrier:
// the time until the last member arrives is reported as waiting, so that the time inside
// MPI is the collective itself, which is what a network model can predict. Point-to-point
// calls are not preceded by a barrier; their wait for the partner stays inside MPI.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zbfs/core/error.hpp"
#include "zbfs/core/link_cost.hpp"
#include "zbfs/core/timer.hpp"
#include "zbfs/mpi/datatype.hpp"
#include "zbfs/mpi/pending_transfer.hpp"
#include "zbfs/mpi/traffic.hpp"

namespace zbfs {

enum class ReduceOp { kSum, kMin, kMax, kBitOr, kBitXor };

// Throws Error naming `what` and MPI's message when rc is not MPI_SUCCESS.
void check_mpi(int rc, const char* what);
// An MPI count from a size; throws when it does not fit in int.
int mpi_count(std::uint64_t count, const char* what);
// A duplicate of `comm` whose errors return instead of aborting (the caller frees it):
// for the communicators mpi/'s exchanges keep to themselves.
MPI_Comm duplicate_returning_errors(MPI_Comm comm);

class Communicator {
 public:
  Communicator() = default;
  // Duplicates `comm` (the new communicator is owned, errors return instead of aborting).
  static Communicator duplicate(MPI_Comm comm);
  // Collective over the job: a duplicate of MPI_COMM_WORLD.
  static Communicator world();
  // Collective: a duplicate of this communicator with nothing attached (no observer, no
  // node layout, no wait timing), for traffic that must not be booked, such as the
  // network probe's own.
  [[nodiscard]] Communicator unmetered() const;
  // Collective: the members that share this rank's node (MPI_COMM_TYPE_SHARED), ordered by rank.
  [[nodiscard]] Communicator split_shared() const;
  ~Communicator();
  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&& other) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  [[nodiscard]] int rank() const { return rank_; }
  // The MPI communicator, for the other RAII wrappers of mpi/ (windows).
  [[nodiscard]] MPI_Comm native() const { return comm_; }
  // The members' ranks in MPI_COMM_WORLD, in this communicator's order: the same on
  // every member, and the same for every communicator of these members in this order (a
  // key for what a group of ranks keeps, such as windows; an address can be reused).
  [[nodiscard]] const std::vector<int>& world_ranks() const { return world_ranks_; }
  [[nodiscard]] int size() const { return size_; }
  // Where each call is reported (nullptr: nowhere). Local.
  void observe(TrafficObserver* observer) { observer_ = observer; }
  [[nodiscard]] TrafficObserver* observer() const { return observer_; }
  [[nodiscard]] CommRole role() const { return role_; }
  // Local, but every member must set the same, since the barrier is collective: turns
  // the timed barrier before each collective on or off (see above).
  void time_waits(bool on) { time_waits_ = on; }
  [[nodiscard]] bool times_waits() const { return time_waits_; }
  void set_role(CommRole role) { role_ = role; }
  // The node of every member, so that traffic is split by link class; node_of_world[r] is
  // the node of world rank r. Local: every rank calls it with the same arguments.
  void attach_nodes(std::span<const int> node_of_world);
  [[nodiscard]] bool knows_nodes() const { return !node_of_member_.empty(); }
  // The members on this rank's node (this rank included), 1 without a node layout.
  [[nodiscard]] int members_on_my_node() const { return on_node_; }
  // The class of the link to `member`, and of the slowest link to any member (what a
  // gather's data crosses); intra-node without a node layout.
  [[nodiscard]] LinkClass link_to(int member) const {
    return node_of_member_.empty() ||
                   node_of_member_[static_cast<std::size_t>(member)] == node_of_member_[static_cast<std::size_t>(rank_)]
               ? LinkClass::kIntraNode
               : LinkClass::kInterNode;
  }
  [[nodiscard]] LinkClass slowest_link() const { return off_node_ > 0 ? LinkClass::kInterNode : LinkClass::kIntraNode; }

  // Collective: ranks with equal color form a new communicator, ordered by key.
  [[nodiscard]] Communicator split(int color, int key) const;

  void barrier() const;

  template <class T>
  void allreduce(std::span<T> values, ReduceOp op) const {
    if (values.empty()) return;
    mark_collective();
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, values.data(), mpi_count(values.size(), "allreduce"), mpi_datatype<T>(),
                            to_mpi(op), comm_),
              "MPI_Allreduce");
    count_rounds(values.size_bytes());
  }
  template <class T>
  [[nodiscard]] T allreduce(T value, ReduceOp op) const {
    allreduce(std::span<T>(&value, 1), op);
    return value;
  }

  // Every rank contributes mine.size() elements (the same count everywhere); `all`
  // receives size() * mine.size() elements in rank order.
  template <class T>
  void allgather(std::span<const T> mine, std::span<T> all) const {
    mark_collective();
    check_mpi(MPI_Allgather(mine.data(), mpi_count(mine.size(), "allgather"), mpi_datatype<T>(), all.data(),
                            mpi_count(mine.size(), "allgather"), mpi_datatype<T>(), comm_),
              "MPI_Allgather");
    count_gather(mine.size_bytes(), mine.size_bytes() * static_cast<std::uint64_t>(size_));
  }

  // Every rank's one value, in rank order.
  template <class T>
  [[nodiscard]] std::vector<T> allgather_value(T mine) const {
    std::vector<T> all(static_cast<std::size_t>(size_));
    allgather(std::span<const T>(&mine, 1), std::span<T>(all));
    return all;
  }

  // Variable contributions, concatenated in rank order; `counts` gets each rank's count.
  template <class T>
  std::vector<T> allgatherv(std::span<const T> mine, std::vector<std::uint64_t>& counts) const {
    counts = allgather_value(std::uint64_t{mine.size()});
    std::uint64_t total = 0;
    for (const std::uint64_t c : counts) total += c;
    std::vector<T> all(total);
    allgatherv_into(mine, counts, std::span<T>(all));
    return all;
  }

  // allgatherv with every rank's count already known (counts[rank()] == mine.size()):
  // `all` (the sum of the counts long) receives the contributions in rank order.
  template <class T>
  void allgatherv_into(std::span<const T> mine, std::span<const std::uint64_t> counts, std::span<T> all) const {
    mark_collective();
    std::vector<int> recv_counts(counts.size());
    std::vector<int> displs(counts.size());
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
      recv_counts[i] = mpi_count(counts[i], "allgatherv");
      displs[i] = mpi_count(total, "allgatherv displacement");
      total += counts[i];
    }
    if (total != all.size()) throw Error(ExitCode::kFailure, "allgatherv: receive buffer does not match the counts");
    check_mpi(MPI_Allgatherv(mine.data(), mpi_count(mine.size(), "allgatherv"), mpi_datatype<T>(), all.data(),
                             recv_counts.data(), displs.data(), mpi_datatype<T>(), comm_),
              "MPI_Allgatherv");
    count_gather(mine.size_bytes(), total * sizeof(T));
  }

  // One element to and from every rank: recv[s] is what rank s sent to this rank.
  template <class T>
  void alltoall(std::span<const T> send, std::span<T> recv) const {
    mark_collective();
    check_mpi(MPI_Alltoall(send.data(), 1, mpi_datatype<T>(), recv.data(), 1, mpi_datatype<T>(), comm_),
              "MPI_Alltoall");
    count_personalized_uniform(sizeof(T));
  }

  // Personalised exchange: send_counts[d] elements of `send` (grouped by destination, in
  // rank order) go to rank d. Returns what arrived, grouped by source; recv_counts[s] is
  // how many came from s.
  template <class T>
  std::vector<T> alltoallv(std::span<const T> send, std::span<const std::uint64_t> send_counts,
                           std::vector<std::uint64_t>& recv_counts) const {
    recv_counts.assign(static_cast<std::size_t>(size_), 0);
    alltoall(send_counts, std::span<std::uint64_t>(recv_counts));
    std::uint64_t total = 0;
    for (const std::uint64_t c : recv_counts) total += c;
    std::vector<T> recv(total);
    alltoallv_into(send, send_counts, recv_counts, std::span<T>(recv));
    return recv;
  }

  // alltoallv with the counts from every source already known: `recv` (their sum long)
  // receives the messages grouped by source.
  template <class T>
  void alltoallv_into(std::span<const T> send, std::span<const std::uint64_t> send_counts,
                      std::span<const std::uint64_t> recv_counts, std::span<T> recv) const {
    mark_collective();
    std::vector<int> sc(recv_counts.size());
    std::vector<int> sd(recv_counts.size());
    std::vector<int> rc(recv_counts.size());
    std::vector<int> rd(recv_counts.size());
    std::uint64_t send_total = 0;
    std::uint64_t recv_total = 0;
    std::uint64_t messages = 0;
    std::uint64_t bytes = 0;
    ClassTraffic priced;
    for (std::size_t i = 0; i < recv_counts.size(); ++i) {
      sc[i] = mpi_count(send_counts[i], "alltoallv");
      sd[i] = mpi_count(send_total, "alltoallv displacement");
      rc[i] = mpi_count(recv_counts[i], "alltoallv");
      rd[i] = mpi_count(recv_total, "alltoallv displacement");
      send_total += send_counts[i];
      recv_total += recv_counts[i];
      if (static_cast<int>(i) != rank_ && send_counts[i] > 0) {
        ++messages;
        bytes += send_counts[i] * sizeof(T);
        priced.add(link_to(static_cast<int>(i)), 1, static_cast<double>(send_counts[i] * sizeof(T)));
      }
    }
    if (send_total > send.size() || recv_total != recv.size()) {
      throw Error(ExitCode::kFailure, "alltoallv: buffers do not match the counts");
    }
    check_mpi(MPI_Alltoallv(send.data(), sc.data(), sd.data(), mpi_datatype<T>(), recv.data(), rc.data(), rd.data(),
                            mpi_datatype<T>(), comm_),
              "MPI_Alltoallv");
    record(CommPattern::kPersonalized, messages, bytes, priced);
  }

  // Element-wise sum over ranks of `send` (size() * recv.size() elements); rank r keeps
  // block r of the result in `recv`.
  template <class T>
  void reduce_scatter_block_sum(std::span<const T> send, std::span<T> recv) const {
    mark_collective();
    check_mpi(MPI_Reduce_scatter_block(send.data(), recv.data(), mpi_count(recv.size(), "reduce_scatter"),
                                       mpi_datatype<T>(), MPI_SUM, comm_),
              "MPI_Reduce_scatter_block");
    count_personalized_uniform(recv.size_bytes());
  }

  template <class T>
  void broadcast(std::span<T> values, int root) const {
    mark_collective();
    check_mpi(MPI_Bcast(values.data(), mpi_count(values.size(), "broadcast"), mpi_datatype<T>(), root, comm_),
              "MPI_Bcast");
    count_rounds(values.size_bytes());
  }

  // Point to point: swaps variable-length arrays with `partner` (which calls this too).
  template <class T>
  std::vector<T> sendrecv(std::span<const T> send, int partner) const {
    const std::uint64_t send_count = send.size();
    const std::uint64_t recv_count = sendrecv_value(send_count, partner);
    std::vector<T> recv(recv_count);
    sendrecv_into(send, partner, std::span<T>(recv));
    return recv;
  }

  // Point to point: one value each way with `partner` (sizes, descriptors).
  template <class T>
  T sendrecv_value(T send, int partner) const {
    mark();
    T recv{};
    check_mpi(MPI_Sendrecv(&send, 1, mpi_datatype<T>(), partner, kSizeTag, &recv, 1, mpi_datatype<T>(), partner,
                           kSizeTag, comm_, MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
    ClassTraffic priced;
    priced.add(link_to(partner), 1, sizeof(T));
    record(CommPattern::kPairwise, 1, sizeof(T), priced);
    return recv;
  }

  // Point to point with the partner's count already known (recv.size()).
  template <class T>
  void sendrecv_into(std::span<const T> send, int partner, std::span<T> recv) const {
    shift_into(send, partner, recv, partner);
  }
  // Point to point: `send` goes to `to` while `recv` (its size known) comes from `from`;
  // a ring shift when every member sends to its successor.
  template <class T>
  void shift_into(std::span<const T> send, int to, std::span<T> recv, int from) const {
    mark();
    check_mpi(
        MPI_Sendrecv(send.data(), mpi_count(send.size(), "sendrecv"), mpi_datatype<T>(), to, kDataTag, recv.data(),
                     mpi_count(recv.size(), "sendrecv"), mpi_datatype<T>(), from, kDataTag, comm_, MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
    const std::uint64_t messages = send.empty() || to == rank_ ? 0 : 1;
    ClassTraffic priced;
    priced.add(link_to(to), static_cast<double>(messages), static_cast<double>(messages * send.size_bytes()));
    record(CommPattern::kPairwise, messages, messages * send.size_bytes(), priced);
  }

  // Point to point: `send` goes to `to` while a message of any length comes from `from`
  // (probed), and is returned.
  [[nodiscard]] std::vector<std::uint8_t> shift_bytes(std::span<const std::uint8_t> send, int to, int from) const;

  // Dynamic sparse data exchange (NBX: Hoefler, Siebert and Lumsdaine, 2010): each
  // non-empty message goes out as a synchronous send and messages are received as they
  // are probed; once all of this rank's sends are matched it enters a non-blocking
  // barrier, and the exchange ends when the barrier does. No count all-to-all: only the
  // messages that carry something are started. A message to this rank is handed over
  // without MPI. Collective. Returns what arrived, sorted by source rank. Consecutive
  // calls alternate tags, so a rank already in the next call cannot be mistaken for one
  // of this call's senders.
  struct SparseMessage {
    int rank = 0;  // destination going out, source coming in
    std::vector<std::uint64_t> words;
  };
  [[nodiscard]] std::vector<SparseMessage> sparse_exchange(std::span<const SparseMessage> outgoing) const;

  // A sparse exchange among known peers: this rank may send to `to` and hear from `from`
  // (sorted, without this rank; every member's `to` must name exactly the members whose
  // `from` names it, as a route's hop peers do). Sizes first, a word to each peer in `to`,
  // then the non-empty messages, each round received with posted receives: no probing
  // and no barrier, so a rank blocks in MPI_Waitall instead of polling (a simulator
  // charges every poll), and costs two latencies whatever the communicator's size.
  // `outgoing`'s ranks must be in `to` (or this rank: handed over without MPI).
  // Collective over the members that name each other. Returns what arrived, non-empty,
  // sorted by source rank.
  [[nodiscard]] std::vector<SparseMessage> peer_exchange(std::span<const SparseMessage> outgoing,
                                                         std::span<const int> to, std::span<const int> from) const;

  // Variable-length messages in one round, with no sizes exchanged first (a count
  // all-to-all costs a full latency of its own, which small and compressed messages
  // feel): every other member gets its piece, empty or not, with a flag carried in the
  // tag; each member's message is probed for its size and flag, `place` is given them
  // all (this rank's own piece as it is) and returns the buffer they land in, back to
  // back in rank order (their sum long), and this rank's own piece is copied there.
  // Returns the arrivals `place` was given. Collective. `kind`: kGather when every piece
  // is the same data (booked as a gather), else kPersonalized. The messages travel on a
  // duplicate communicator that carries nothing else, so probing a member for any tag
  // can only match its next message of these exchanges.
  struct Piece {
    std::span<const std::uint8_t> bytes;
    bool flagged = false;
  };
  struct Arrival {
    std::uint64_t bytes = 0;
    bool flagged = false;
  };
  using PlaceArrivals = std::function<std::span<std::uint8_t>(std::span<const Arrival>)>;
  std::vector<Arrival> exchange_probed(std::span<const Piece> pieces, CommPattern kind,
                                       const PlaceArrivals& place) const;

  // Point to point, not booked (the network probe's timed messages): a blocking send or
  // receive of raw bytes with `tag`.
  void send_bytes(std::span<const char> bytes, int partner, int tag) const;
  void receive_bytes(std::span<char> bytes, int partner, int tag) const;
  // Books transfers this rank made outside this class over the communicator's members
  // (a device wire's: CUDA-aware MPI calls, NCCL): bytes_to[m] bytes sent to member m
  // (this rank's own and empty ones are not messages), as `pattern`, with the time since
  // start_transfers() as time inside the transport.
  void start_transfers() const { mark(); }
  void book_transfers(CommPattern pattern, std::span<const std::uint64_t> bytes_to) const;
  // Books a pipelined exchange this rank made over the members (mpi/message_stream.hpp):
  // messages_to[m] messages of bytes_to[m] bytes in all to member m, with mpi_s spent
  // inside its MPI calls and wait_s blocked at its end for the last arrivals.
  void book_stream(std::span<const std::uint64_t> messages_to, std::span<const std::uint64_t> bytes_to, double mpi_s,
                   double wait_s) const;
  // Point to point, not booked: a nonblocking send or receive of raw bytes with `tag`
  // (the buffer must outlive the transfer). A receive takes exactly bytes.size() bytes.
  [[nodiscard]] PendingTransfer isend_bytes(std::span<const char> bytes, int partner, int tag) const;
  [[nodiscard]] PendingTransfer ireceive_bytes(std::span<char> bytes, int partner, int tag) const;
  // Point to point, not booked: swaps equal-sized byte arrays with `partner` the way
  // exchange_probed moves a message (the send posted first, then the partner's message
  // probed and received).
  void swap_bytes_probed(std::span<const char> sent, std::span<char> received, int partner, int tag) const;
  // Collective, not booked: a barrier and a maximum during which every member sleeps
  // between tests of its request instead of spinning, so that on an oversubscribed
  // machine idle members leave the cores to the members being measured.
  void quiet_barrier() const;
  [[nodiscard]] double quiet_max(double value) const;

  // Collective: each rank's string, in rank order, on every rank.
  [[nodiscard]] std::vector<std::string> allgather_strings(const std::string& mine) const;
  // Collective: `text` as `root` has it, on every rank.
  void broadcast_string(std::string& text, int root) const;

  // Collective: when any rank has an error message, every rank throws Error with the
  // lowest rank's (reported once; exit status `code`, a usage error by default);
  // otherwise returns. For errors only some ranks see (a bad line in one rank's share of a
  // file, a failed write) that must end the job alike everywhere, not abort it.
  void throw_first_error(const std::optional<std::string>& mine, ExitCode code = ExitCode::kUsage) const;

 private:
  explicit Communicator(MPI_Comm comm);
  static MPI_Op to_mpi(ReduceOp op);
  // Reporting of one call (no-ops without an observer or in a group of one).
  void count_gather(std::uint64_t my_bytes, std::uint64_t total_bytes) const;
  void count_personalized_uniform(std::uint64_t bytes_per_peer) const;
  void count_rounds(std::uint64_t bytes) const;
  // Also books the time since mark() (or the previous record()) as time inside MPI.
  void record(CommPattern pattern, std::uint64_t messages, std::uint64_t bytes, const ClassTraffic& priced) const;
  void mark() const { since_mark_.restart(); }
  // mark() for a collective: first, with wait timing on, the timed barrier.
  void mark_collective() const;
  static constexpr int kSizeTag = 1;
  static constexpr int kDataTag = 2;
  static constexpr int kSparseTags[2] = {3, 4};
  static constexpr int kShiftTag = 5;
  static constexpr int kPeerSizeTag = 6;
  static constexpr int kPeerDataTag = 7;

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm probed_comm_ = MPI_COMM_NULL;  // exchange_probed's messages only
  int rank_ = 0;
  int size_ = 1;
  TrafficObserver* observer_ = nullptr;
  CommRole role_ = CommRole::kOther;
  std::vector<int> node_of_member_;  // empty: no node layout given
  std::vector<int> world_ranks_;     // each member's rank in MPI_COMM_WORLD
  int on_node_ = 1;
  int off_node_ = 0;
  bool time_waits_ = false;
  mutable Stopwatch since_mark_;       // a call in progress: when its MPI part began
  mutable unsigned sparse_calls_ = 0;  // which of kSparseTags the next sparse_exchange uses
};

}  // namespace zbfs
