#include "zbfs/mpi/message_stream.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "zbfs/core/error.hpp"
#include "zbfs/core/timer.hpp"

namespace zbfs {
namespace {

// Tag bits: whether the message is flagged, whether it is its sender's last.
constexpr int kFlaggedTag = 1;
constexpr int kLastTag = 2;

// Adds the time since it was made to `total` (the stream's time inside MPI).
class ScopedMpiTime {
 public:
  explicit ScopedMpiTime(double& total) : total_(total) {}
  ~ScopedMpiTime() { total_ += clock_.elapsed_s(); }
  ScopedMpiTime(const ScopedMpiTime&) = delete;
  ScopedMpiTime& operator=(const ScopedMpiTime&) = delete;

 private:
  double& total_;
  Stopwatch clock_;
};

// One lane to and from every other member.
std::vector<MessageStream::Lane> every_other_member(const Communicator& comm) {
  MessageStream::Lane lane;
  for (int r = 0; r < comm.size(); ++r) {
    if (r == comm.rank()) continue;
    lane.to.push_back(r);
    lane.from.push_back(r);
  }
  return {std::move(lane)};
}

}  // namespace

StreamChannel::StreamChannel(const Communicator& comm) {
  for (MPI_Comm& c : comms_) c = duplicate_returning_errors(comm.native());
}

StreamChannel::~StreamChannel() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) return;
  for (MPI_Comm& c : comms_) {
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  }
}

MessageStream::MessageStream(const Communicator& comm, StreamChannel& channel, std::uint64_t shuffle_seed)
    : MessageStream(comm, channel, every_other_member(comm), shuffle_seed) {}

MessageStream::MessageStream(const Communicator& comm, StreamChannel& channel, std::vector<Lane> lanes,
                             std::uint64_t shuffle_seed)
    : comm_(comm),
      channel_(channel.next()),
      messages_to_(static_cast<std::size_t>(comm.size()), 0),
      bytes_to_(static_cast<std::size_t>(comm.size()), 0),
      lanes_(std::move(lanes)),
      shuffle_(shuffle_seed != 0),
      random_(shuffle_seed) {
  if (lanes_.empty() || lanes_.size() > static_cast<std::size_t>(kMaxLanes)) {
    throw Error(ExitCode::kFailure, "message stream: " + std::to_string(lanes_.size()) + " lanes");
  }
  const auto members = static_cast<std::size_t>(comm.size());
  const auto member = [&](int r) {
    if (r < 0 || r >= comm.size() || r == comm.rank()) {
      throw Error(ExitCode::kFailure, "message stream: a lane names member " + std::to_string(r));
    }
    return static_cast<std::size_t>(r);
  };
  for (Lane& lane : lanes_) {
    std::sort(lane.to.begin(), lane.to.end());
    lane.to.erase(std::unique(lane.to.begin(), lane.to.end()), lane.to.end());
    may_send_.emplace_back(members, false);
    expects_.emplace_back(members, 0);
    for (const int r : lane.to) may_send_.back()[member(r)] = true;
    int missing = 0;
    for (const int r : lane.from) {
      if (expects_.back()[member(r)] == 0) ++missing;
      expects_.back()[member(r)] = 1;
    }
    lasts_missing_.push_back(missing);
    if (missing > 0) ++lanes_missing_;
    closed_.push_back(false);
  }
}

MessageStream::~MessageStream() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) return;
  // Only an error gets here with sends in flight: they finish on their own.
  for (MPI_Request& r : requests_) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
}

void MessageStream::send(int lane, int destination, std::vector<std::uint8_t> bytes, bool flagged) {
  if (lane < 0 || static_cast<std::size_t>(lane) >= lanes_.size()) {
    throw Error(ExitCode::kFailure, "message stream: no lane " + std::to_string(lane));
  }
  if (destination < 0 || destination >= comm_.size() ||
      !may_send_[static_cast<std::size_t>(lane)][static_cast<std::size_t>(destination)]) {
    throw Error(ExitCode::kFailure, "message stream: no member " + std::to_string(destination) + " to send to");
  }
  if (closed_[static_cast<std::size_t>(lane)]) {
    throw Error(ExitCode::kFailure, "message stream: a send after the lane closed");
  }
  Outgoing message{lane, destination, flagged, std::move(bytes)};
  if (shuffle_) {
    held_.push_back(std::move(message));
    return;
  }
  post(std::move(message), false);
}

void MessageStream::post(Outgoing message, bool last) {
  const ScopedMpiTime timed(times_.mpi_s);
  const auto d = static_cast<std::size_t>(message.destination);
  ++messages_to_[d];
  bytes_to_[d] += message.bytes.size();
  const int tag = message.lane << 2 | (last ? kLastTag : 0) | (message.flagged ? kFlaggedTag : 0);
  requests_.emplace_back(MPI_REQUEST_NULL);
  buffers_.push_back(std::move(message.bytes));
  const std::vector<std::uint8_t>& bytes = buffers_.back();
  check_mpi(MPI_Isend(bytes.data(), mpi_count(bytes.size(), "message stream"), MPI_BYTE, message.destination, tag,
                      channel_, &requests_.back()),
            "MPI_Isend");
}

bool MessageStream::receive(ProbedMessage& matched, const MPI_Status& status, std::vector<Message>& arrived) {
  int count = 0;
  check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
  Message message;
  message.source = status.MPI_SOURCE;
  message.lane = status.MPI_TAG >> 2;
  message.flagged = (status.MPI_TAG & kFlaggedTag) != 0;
  message.bytes.resize(static_cast<std::size_t>(count));
  matched.receive(message.bytes.data(), count, MPI_BYTE);
  const auto s = static_cast<std::size_t>(message.source);
  const auto lane = static_cast<std::size_t>(message.lane);
  if (lane >= lanes_.size() || expects_[lane][s] == 0) {
    throw Error(ExitCode::kFailure, "message stream: member " + std::to_string(s) + " sent on lane " +
                                        std::to_string(lane) + ", which does not come from it");
  }
  if (expects_[lane][s] == 2) {
    throw Error(ExitCode::kFailure, "message stream: member " + std::to_string(s) + " sent after its last message");
  }
  const bool last = (status.MPI_TAG & kLastTag) != 0;
  if (last) {
    expects_[lane][s] = 2;
    if (--lasts_missing_[lane] == 0) --lanes_missing_;
  }
  arrived.push_back(std::move(message));
  return last;
}

void MessageStream::take_arrived(std::vector<Message>& arrived) {
  while (!all_done()) {
    MPI_Status status;
    std::optional<ProbedMessage> matched = ProbedMessage::try_probe(MPI_ANY_SOURCE, MPI_ANY_TAG, channel_, status);
    if (!matched) break;
    receive(*matched, status, arrived);
  }
}

void MessageStream::poll(std::vector<Message>& arrived) {
  if (shuffle_) release_some();
  const ScopedMpiTime timed(times_.mpi_s);
  reap();
  take_arrived(arrived);
}

void MessageStream::wait(std::vector<Message>& arrived) {
  if (shuffle_) release_some();
  if (all_done()) return;
  MPI_Status status;
  std::optional<ProbedMessage> matched;
  {
    // Blocked until something comes: waiting for transfers and for late members.
    const ScopedMpiTime timed(times_.wait_s);
    matched.emplace(MPI_ANY_SOURCE, MPI_ANY_TAG, channel_, status);
  }
  const ScopedMpiTime timed(times_.mpi_s);
  receive(*matched, status, arrived);
  take_arrived(arrived);
}

void MessageStream::reap() {
  // Completed sends: their buffers go.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    int done = 0;
    check_mpi(MPI_Test(&requests_[i], &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done != 0) continue;
    if (kept != i) {
      requests_[kept] = requests_[i];
      buffers_[kept] = std::move(buffers_[i]);
    }
    ++kept;
  }
  requests_.resize(kept);
  buffers_.resize(kept);
}

void MessageStream::release_some() {
  if (held_.empty()) return;
  std::shuffle(held_.begin(), held_.end(), random_);
  // About half of what is held goes now, the rest waits for a later poll or the close.
  const std::size_t going = static_cast<std::size_t>(random_() % (held_.size() + 1));
  for (std::size_t i = 0; i < going; ++i) post(std::move(held_[i]), false);
  held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(going));
}

void MessageStream::close(int lane, std::span<const Communicator::Piece> last) {
  if (lane < 0 || static_cast<std::size_t>(lane) >= lanes_.size()) {
    throw Error(ExitCode::kFailure, "message stream: no lane " + std::to_string(lane));
  }
  const auto l = static_cast<std::size_t>(lane);
  if (last.size() != static_cast<std::size_t>(comm_.size())) {
    throw Error(ExitCode::kFailure, "message stream: one last message per member expected");
  }
  if (closed_[l]) throw Error(ExitCode::kFailure, "message stream: lane " + std::to_string(lane) + " closed twice");
  closed_[l] = true;
  if (shuffle_) {
    // The lane's held messages go before its last ones, in a shuffled order: a last
    // message must follow everything its sender sent on the lane.
    std::shuffle(held_.begin(), held_.end(), random_);
    std::vector<Outgoing> others;
    for (Outgoing& message : held_) {
      if (message.lane == lane) {
        post(std::move(message), false);
      } else {
        others.push_back(std::move(message));
      }
    }
    held_ = std::move(others);
  }
  for (std::size_t d = 0; d < last.size(); ++d) {
    if (!may_send_[l][d] && d != static_cast<std::size_t>(comm_.rank()) && !last[d].bytes.empty()) {
      throw Error(ExitCode::kFailure, "message stream: a last message for member " + std::to_string(d) +
                                          ", which lane " + std::to_string(lane) + " does not reach");
    }
  }
  // Starting after this member spreads the last messages over the receivers.
  const std::vector<int>& to = lanes_[l].to;
  const auto first = static_cast<std::size_t>(std::upper_bound(to.begin(), to.end(), comm_.rank()) - to.begin());
  for (std::size_t k = 0; k < to.size(); ++k) {
    const int d = to[(first + k) % to.size()];
    const Communicator::Piece& piece = last[static_cast<std::size_t>(d)];
    post({lane, d, piece.flagged, std::vector<std::uint8_t>(piece.bytes.begin(), piece.bytes.end())}, true);
  }
}

void MessageStream::complete() {
  for (std::size_t l = 0; l < lanes_.size(); ++l) {
    if (!closed_[l] || lasts_missing_[l] != 0) {
      throw Error(ExitCode::kFailure, "message stream: completed with lane " + std::to_string(l) + " open");
    }
  }
  if (completed_) throw Error(ExitCode::kFailure, "message stream: finished twice");
  completed_ = true;
  {
    const ScopedMpiTime timed(times_.wait_s);
    check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }
  requests_.clear();
  buffers_.clear();
  comm_.book_stream(messages_to_, bytes_to_, times_.mpi_s, times_.wait_s);
}

void MessageStream::finish(std::span<const Communicator::Piece> last, std::vector<Message>& arrived) {
  if (completed_ || closed_[0]) throw Error(ExitCode::kFailure, "message stream: finished twice");
  if (lanes_.size() != 1) throw Error(ExitCode::kFailure, "message stream: finish ends a one-lane stream");
  close(0, last);
  while (!all_done()) wait(arrived);
  complete();
}

}  // namespace zbfs
