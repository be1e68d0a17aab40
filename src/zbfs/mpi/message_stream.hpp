// MessageStream: one pipelined personalised exchange over a communicator's members
// (--overlap on): a sender posts each message as soon as it has one and takes whatever
// has arrived whenever it polls, so the transfers run while it computes; each member
// ends its part with one last message to every other member, and the stream ends on a
// member when every other's last message is in (MPI's non-overtaking rule). A stream
// may carry several lanes (a route's hops). docs/transports.md has the lanes, the
// channels and the shuffle test hook.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "zbfs/mpi/communicator.hpp"
#include "zbfs/mpi/probed_message.hpp"

namespace zbfs {

// The two communicators that streams over one group of ranks alternate on. Owned: freed
// on destruction. Making one is collective over the communicator.
class StreamChannel {
 public:
  explicit StreamChannel(const Communicator& comm);
  ~StreamChannel();
  StreamChannel(const StreamChannel&) = delete;
  StreamChannel& operator=(const StreamChannel&) = delete;

  // The communicator of the next stream (they alternate).
  MPI_Comm next() { return comms_[next_++ % 2]; }

 private:
  MPI_Comm comms_[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
  unsigned next_ = 0;
};

class MessageStream {
 public:
  struct Message {
    int source = 0;
    int lane = 0;
    bool flagged = false;
    std::vector<std::uint8_t> bytes;
  };
  // The members a lane sends to and hears from (neither holds this rank).
  struct Lane {
    std::vector<int> to;
    std::vector<int> from;
  };
  // At most this many lanes (the tag carries the lane above two flag bits, and MPI
  // promises tags up to 32767).
  static constexpr int kMaxLanes = 4096;
  // What the stream spent: time inside its MPI calls, and time at its finish blocked
  // until the last messages came (waiting for the transfers still in flight and for
  // members that had not finished).
  struct Times {
    double mpi_s = 0;
    double wait_s = 0;
  };

  // Opens a stream over `comm` on the channel's next communicator, with one lane to and
  // from every other member. Every member opens its streams over one channel in the same
  // order. `shuffle_seed`: the test hook (0: off).
  MessageStream(const Communicator& comm, StreamChannel& channel, std::uint64_t shuffle_seed = 0);
  // The same with the given lanes (every member's lanes agree: r is in my lane's `to`
  // exactly when I am in r's lane's `from`).
  MessageStream(const Communicator& comm, StreamChannel& channel, std::vector<Lane> lanes,
                std::uint64_t shuffle_seed = 0);
  // Unwinding past an unfinished stream happens only on an error that ends the job: its
  // sends are left to finish on their own.
  ~MessageStream();
  MessageStream(const MessageStream&) = delete;
  MessageStream& operator=(const MessageStream&) = delete;

  // Posts `bytes` to member `destination` (not this rank; on a lane, one of its `to`)
  // without waiting; the stream keeps the buffer until the send completes.
  void send(int destination, std::vector<std::uint8_t> bytes, bool flagged) {
    send(0, destination, std::move(bytes), flagged);
  }
  void send(int lane, int destination, std::vector<std::uint8_t> bytes, bool flagged);
  // Moves every message that has arrived into `arrived`, without waiting.
  void poll(std::vector<Message>& arrived);
  // Blocks until at least one message arrives (none may come once every lane is done),
  // then moves it and whatever else is in into `arrived`.
  void wait(std::vector<Message>& arrived);
  // Sends each of the lane's `to` members its last message on it (last[d], flagged or
  // not; the entries of other members must be empty). No send on the lane may follow.
  void close(int lane, std::span<const Communicator::Piece> last);
  [[nodiscard]] bool closed(int lane) const { return closed_[static_cast<std::size_t>(lane)]; }
  // Whether every `from` member's last message on the lane is in.
  [[nodiscard]] bool done(int lane) const { return lasts_missing_[static_cast<std::size_t>(lane)] == 0; }
  // Once every lane is closed and done: completes the sends and books the stream's
  // traffic and times with the communicator.
  void complete();
  // The one-lane stream's end: closes lane 0 with `last` (this rank's own entry is
  // ignored), receives until every member's last message is in (into `arrived`, the last
  // ones too), and completes. Collective.
  void finish(std::span<const Communicator::Piece> last, std::vector<Message>& arrived);

  [[nodiscard]] const Times& times() const { return times_; }

  // The test hook's seed for an exchanger's n-th stream, so that the order varies from
  // stream to stream (0 stays 0: off).
  static std::uint64_t nth_shuffle_seed(std::uint64_t seed, std::uint64_t n) {
    return seed == 0 ? 0 : seed + 0x9e3779b97f4a7c15ULL * n;
  }

 private:
  struct Outgoing {
    int lane = 0;
    int destination = 0;
    bool flagged = false;
    std::vector<std::uint8_t> bytes;
  };
  void post(Outgoing message, bool last);
  // Takes every matched message there is, without waiting.
  void take_arrived(std::vector<Message>& arrived);
  [[nodiscard]] bool all_done() const { return lanes_missing_ == 0; }
  // Receives the matched message; returns whether it was its sender's last.
  bool receive(ProbedMessage& matched, const MPI_Status& status, std::vector<Message>& arrived);
  // Frees the buffers of completed sends.
  void reap();
  void release_some();  // the test hook: sends some held messages

  const Communicator& comm_;
  MPI_Comm channel_;
  std::vector<MPI_Request> requests_;               // sends in flight ...
  std::vector<std::vector<std::uint8_t>> buffers_;  // ... and their buffers
  std::vector<std::uint64_t> messages_to_;
  std::vector<std::uint64_t> bytes_to_;
  std::vector<Lane> lanes_;
  std::vector<std::vector<bool>> may_send_;  // per lane, per member: in its `to`
  std::vector<std::vector<char>> expects_;   // per lane, per member: 1 in `from`, 2 its last is in
  std::vector<int> lasts_missing_;           // per lane
  std::vector<bool> closed_;
  int lanes_missing_ = 0;  // lanes not done
  bool completed_ = false;
  Times times_;
  bool shuffle_ = false;
  std::mt19937_64 random_;
  std::vector<Outgoing> held_;  // the test hook's messages not yet sent
};

}  // namespace zbfs
