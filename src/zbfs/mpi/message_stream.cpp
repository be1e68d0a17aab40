#include "zbfs/mpi/message_stream.hpp"

#include <algorithm>
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
    : comm_(comm),
      channel_(channel.next()),
      messages_to_(static_cast<std::size_t>(comm.size()), 0),
      bytes_to_(static_cast<std::size_t>(comm.size()), 0),
      last_from_(static_cast<std::size_t>(comm.size()), false),
      lasts_missing_(comm.size() - 1),
      shuffle_(shuffle_seed != 0),
      random_(shuffle_seed) {}

MessageStream::~MessageStream() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) return;
  // Only an error gets here with sends in flight: they finish on their own.
  for (MPI_Request& r : requests_) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
}

void MessageStream::send(int destination, std::vector<std::uint8_t> bytes, bool flagged) {
  if (destination < 0 || destination >= comm_.size() || destination == comm_.rank()) {
    throw Error(ExitCode::kFailure, "message stream: no member " + std::to_string(destination) + " to send to");
  }
  if (finished_) throw Error(ExitCode::kFailure, "message stream: a send after the finish");
  Outgoing message{destination, flagged, std::move(bytes)};
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
  const int tag = (message.flagged ? kFlaggedTag : 0) | (last ? kLastTag : 0);
  requests_.emplace_back(MPI_REQUEST_NULL);
  buffers_.push_back(std::move(message.bytes));
  const std::vector<std::uint8_t>& bytes = buffers_.back();
  check_mpi(MPI_Isend(bytes.data(), mpi_count(bytes.size(), "message stream"), MPI_BYTE, message.destination, tag,
                      channel_, &requests_.back()),
            "MPI_Isend");
}

bool MessageStream::receive(MPI_Message& matched, const MPI_Status& status, std::vector<Message>& arrived) {
  int count = 0;
  check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
  Message message;
  message.source = status.MPI_SOURCE;
  message.flagged = (status.MPI_TAG & kFlaggedTag) != 0;
  message.bytes.resize(static_cast<std::size_t>(count));
  check_mpi(MPI_Mrecv(message.bytes.data(), count, MPI_BYTE, &matched, MPI_STATUS_IGNORE), "MPI_Mrecv");
  const bool last = (status.MPI_TAG & kLastTag) != 0;
  if (last) {
    const auto s = static_cast<std::size_t>(message.source);
    if (last_from_[s]) {
      throw Error(ExitCode::kFailure, "message stream: member " + std::to_string(s) + " sent two last messages");
    }
    last_from_[s] = true;
    --lasts_missing_;
  }
  arrived.push_back(std::move(message));
  return last;
}

void MessageStream::poll(std::vector<Message>& arrived) {
  if (shuffle_) release_some();
  const ScopedMpiTime timed(times_.mpi_s);
  reap();
  while (lasts_missing_ > 0) {
    int found = 0;
    MPI_Message matched = MPI_MESSAGE_NULL;
    MPI_Status status;
    check_mpi(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, channel_, &found, &matched, &status), "MPI_Improbe");
    if (found == 0) break;
    receive(matched, status, arrived);
  }
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
  // About half of what is held goes now, the rest waits for a later poll or the finish.
  const std::size_t going = static_cast<std::size_t>(random_() % (held_.size() + 1));
  for (std::size_t i = 0; i < going; ++i) post(std::move(held_[i]), false);
  held_.erase(held_.begin(), held_.begin() + static_cast<std::ptrdiff_t>(going));
}

void MessageStream::finish(std::span<const Communicator::Piece> last, std::vector<Message>& arrived) {
  const int members = comm_.size();
  if (last.size() != static_cast<std::size_t>(members)) {
    throw Error(ExitCode::kFailure, "message stream: one last message per member expected");
  }
  if (finished_) throw Error(ExitCode::kFailure, "message stream: finished twice");
  finished_ = true;
  if (shuffle_) {
    // Held messages go before the last ones, in a shuffled order: the last must follow
    // everything its sender sent.
    std::shuffle(held_.begin(), held_.end(), random_);
    for (Outgoing& message : held_) post(std::move(message), false);
    held_.clear();
  }
  // Starting with the next member spreads the last messages over the receivers.
  for (int k = 1; k < members; ++k) {
    const int d = (comm_.rank() + k) % members;
    const Communicator::Piece& piece = last[static_cast<std::size_t>(d)];
    post({d, piece.flagged, std::vector<std::uint8_t>(piece.bytes.begin(), piece.bytes.end())}, true);
  }
  while (lasts_missing_ > 0) {
    MPI_Message matched = MPI_MESSAGE_NULL;
    MPI_Status status;
    {
      // Blocked until something comes: waiting for transfers and for late members.
      const ScopedMpiTime timed(times_.wait_s);
      check_mpi(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, channel_, &matched, &status), "MPI_Mprobe");
    }
    const ScopedMpiTime timed(times_.mpi_s);
    receive(matched, status, arrived);
  }
  {
    const ScopedMpiTime timed(times_.wait_s);
    check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }
  requests_.clear();
  buffers_.clear();
  comm_.book_stream(messages_to_, bytes_to_, times_.mpi_s, times_.wait_s);
}

}  // namespace zbfs
