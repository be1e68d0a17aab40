#include "zbfs/mpi/communicator.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include "zbfs/core/error.hpp"
#include "zbfs/mpi/collective_traffic.hpp"
#include "zbfs/mpi/nonblocking_barrier.hpp"
#include "zbfs/mpi/probed_message.hpp"

namespace zbfs {

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(ExitCode::kFailure,
              std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

int mpi_count(std::uint64_t count, const char* what) {
  if (count > static_cast<std::uint64_t>(INT_MAX)) {
    throw Error(ExitCode::kFailure, std::string(what) + ": " + std::to_string(count) +
                                        " elements exceed MPI's int count limit; use more ranks");
  }
  return static_cast<int>(count);
}

namespace {

// A new communicator of comm's members in comm's order (its own context: its messages
// never meet comm's). MPI_Comm_dup; in the SMPI build a split of one colour, which makes
// the same: SimGrid 3.32's MPI_Comm_dup does work quadratic in the members and charges it
// to the simulated clock (docs/simulation.md), and every Communicator makes one.
MPI_Comm copy_of(MPI_Comm comm) {
  MPI_Comm copy = MPI_COMM_NULL;
#ifdef ZBFS_SIMGRID
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_split(comm, 0, rank, &copy), "MPI_Comm_split");
#else
  check_mpi(MPI_Comm_dup(comm, &copy), "MPI_Comm_dup");
#endif
  return copy;
}

}  // namespace

MPI_Comm duplicate_returning_errors(MPI_Comm comm) {
  MPI_Comm copy = copy_of(comm);
  check_mpi(MPI_Comm_set_errhandler(copy, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  return copy;
}

namespace {

// The world ranks of comm's members, in comm's order.
std::vector<int> world_ranks_of(MPI_Comm comm, int size) {
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Group world = MPI_GROUP_NULL;
  check_mpi(MPI_Comm_group(comm, &group), "MPI_Comm_group");
  check_mpi(MPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group");
  std::vector<int> ranks(static_cast<std::size_t>(size));
  std::vector<int> in_world(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<int>(i);
  const int rc = MPI_Group_translate_ranks(group, size, ranks.data(), world, in_world.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  check_mpi(rc, "MPI_Group_translate_ranks");
  return in_world;
}

}  // namespace

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  probed_comm_ = duplicate_returning_errors(comm_);
  world_ranks_ = world_ranks_of(comm_, size_);
}

Communicator Communicator::duplicate(MPI_Comm comm) { return Communicator(copy_of(comm)); }

Communicator Communicator::world() { return duplicate(MPI_COMM_WORLD); }

Communicator Communicator::unmetered() const { return duplicate(comm_); }

Communicator Communicator::split_shared() const {
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  return Communicator(node);
}

void Communicator::send_bytes(std::span<const char> bytes, int partner, int tag) const {
  check_mpi(MPI_Send(bytes.data(), mpi_count(bytes.size(), "send"), MPI_CHAR, partner, tag, comm_), "MPI_Send");
}

void Communicator::receive_bytes(std::span<char> bytes, int partner, int tag) const {
  check_mpi(
      MPI_Recv(bytes.data(), mpi_count(bytes.size(), "receive"), MPI_CHAR, partner, tag, comm_, MPI_STATUS_IGNORE),
      "MPI_Recv");
}

PendingTransfer Communicator::isend_bytes(std::span<const char> bytes, int partner, int tag) const {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Isend(bytes.data(), mpi_count(bytes.size(), "send"), MPI_CHAR, partner, tag, comm_, &request),
            "MPI_Isend");
  return {request, false};
}

PendingTransfer Communicator::ireceive_bytes(std::span<char> bytes, int partner, int tag) const {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Irecv(bytes.data(), mpi_count(bytes.size(), "receive"), MPI_CHAR, partner, tag, comm_, &request),
            "MPI_Irecv");
  return {request, true};
}

std::vector<std::uint8_t> Communicator::shift_bytes(std::span<const std::uint8_t> send, int to, int from) const {
  mark();
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Isend(send.data(), mpi_count(send.size(), "shift"), MPI_BYTE, to, kShiftTag, comm_, &request),
            "MPI_Isend");
  PendingTransfer sending(request, false);
  MPI_Status status;
  ProbedMessage message(from, kShiftTag, comm_, status);
  int count = 0;
  check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
  std::vector<std::uint8_t> received(static_cast<std::size_t>(count));
  message.receive(received.data(), count, MPI_BYTE);
  sending.wait();
  const std::uint64_t messages = to == rank_ ? 0 : 1;
  ClassTraffic priced;
  priced.add(link_to(to), static_cast<double>(messages), static_cast<double>(messages * send.size()));
  record(CommPattern::kPairwise, messages, messages * send.size(), priced);
  return received;
}

void Communicator::swap_bytes_probed(std::span<const char> sent, std::span<char> received, int partner, int tag) const {
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  check_mpi(MPI_Isend(sent.data(), mpi_count(sent.size(), "swap"), MPI_CHAR, partner, tag, comm_, &requests[0]),
            "MPI_Isend");
  MPI_Status status;
  ProbedMessage message(partner, tag, comm_, status);
  requests[1] = message.start_receive(received.data(), mpi_count(received.size(), "swap"), MPI_CHAR);
  check_mpi(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE), "MPI_Waitall");
}

namespace {

// Completes a request while sleeping between checks (see quiet_barrier).
void wait_quietly(MPI_Request& request) {
  int done = 0;
  while (true) {
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace

void Communicator::quiet_barrier() const {
  NonblockingBarrier barrier(comm_);
  while (!barrier.test()) std::this_thread::sleep_for(std::chrono::microseconds(200));
}

double Communicator::quiet_max(double value) const {
  double result = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, comm_, &request), "MPI_Iallreduce");
  wait_quietly(request);
  return result;
}

Communicator::~Communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // Freeing is local in practice (no message is exchanged); after MPI_Finalize it is illegal.
  if (finalized) return;
  if (probed_comm_ != MPI_COMM_NULL) MPI_Comm_free(&probed_comm_);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

Communicator::Communicator(Communicator&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      probed_comm_(std::exchange(other.probed_comm_, MPI_COMM_NULL)),
      rank_(other.rank_),
      size_(other.size_),
      observer_(other.observer_),
      role_(other.role_),
      node_of_member_(std::move(other.node_of_member_)),
      world_ranks_(std::move(other.world_ranks_)),
      on_node_(other.on_node_),
      off_node_(other.off_node_),
      time_waits_(other.time_waits_),
      sparse_calls_(other.sparse_calls_) {}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    Communicator old(std::move(*this));
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    probed_comm_ = std::exchange(other.probed_comm_, MPI_COMM_NULL);
    rank_ = other.rank_;
    size_ = other.size_;
    observer_ = other.observer_;
    role_ = other.role_;
    node_of_member_ = std::move(other.node_of_member_);
    world_ranks_ = std::move(other.world_ranks_);
    on_node_ = other.on_node_;
    off_node_ = other.off_node_;
    time_waits_ = other.time_waits_;
    sparse_calls_ = other.sparse_calls_;
  }
  return *this;
}

Communicator Communicator::split(int color, int key) const {
  MPI_Comm part = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm_, color, key, &part), "MPI_Comm_split");
  Communicator result(part);
  result.observer_ = observer_;  // a node layout, if any, is given to the new one by its owner
  result.time_waits_ = time_waits_;
  return result;
}

void Communicator::attach_nodes(std::span<const int> node_of_world) {
  node_of_member_.resize(world_ranks_.size());
  on_node_ = 0;
  for (std::size_t i = 0; i < world_ranks_.size(); ++i) {
    const auto w = static_cast<std::size_t>(world_ranks_[i]);
    if (w >= node_of_world.size()) throw Error(ExitCode::kFailure, "attach_nodes: node map too short");
    node_of_member_[i] = node_of_world[w];
  }
  for (const int node : node_of_member_) on_node_ += node == node_of_member_[static_cast<std::size_t>(rank_)] ? 1 : 0;
  off_node_ = size_ - on_node_;
}

void Communicator::barrier() const {
  mark();
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
  count_rounds(0);
}

std::vector<Communicator::SparseMessage> Communicator::sparse_exchange(std::span<const SparseMessage> outgoing) const {
  mark_collective();
  const int tag = kSparseTags[sparse_calls_++ % 2];
  std::vector<SparseMessage> incoming;
  std::vector<MPI_Request> sends;
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  ClassTraffic priced;
  for (const SparseMessage& m : outgoing) {
    if (m.rank < 0 || m.rank >= size_)
      throw Error(ExitCode::kFailure, "sparse exchange: no rank " + std::to_string(m.rank));
    if (m.words.empty()) continue;
    if (m.rank == rank_) {
      incoming.push_back(m);
      continue;
    }
    sends.emplace_back();
    check_mpi(MPI_Issend(m.words.data(), mpi_count(m.words.size(), "sparse exchange"), MPI_UINT64_T, m.rank, tag, comm_,
                         &sends.back()),
              "MPI_Issend");
    ++messages;
    bytes += m.words.size() * sizeof(std::uint64_t);
    priced.add(link_to(m.rank), 1, static_cast<double>(m.words.size() * sizeof(std::uint64_t)));
  }
  std::optional<NonblockingBarrier> barrier;
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm_, &arrived, &status), "MPI_Iprobe");
    if (arrived != 0) {
      int count = 0;
      check_mpi(MPI_Get_count(&status, MPI_UINT64_T, &count), "MPI_Get_count");
      SparseMessage m{status.MPI_SOURCE, std::vector<std::uint64_t>(static_cast<std::size_t>(count))};
      check_mpi(MPI_Recv(m.words.data(), count, MPI_UINT64_T, status.MPI_SOURCE, tag, comm_, MPI_STATUS_IGNORE),
                "MPI_Recv");
      incoming.push_back(std::move(m));
      continue;
    }
    if (!barrier) {
      int done = 0;
      check_mpi(MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
      if (done != 0) barrier.emplace(comm_);
    } else if (barrier->test()) {
      break;
    }
  }
  std::stable_sort(incoming.begin(), incoming.end(),
                   [](const SparseMessage& a, const SparseMessage& b) { return a.rank < b.rank; });
  record(CommPattern::kPersonalized, messages, bytes, priced);
  return incoming;
}

std::vector<Communicator::SparseMessage> Communicator::peer_exchange(std::span<const SparseMessage> outgoing,
                                                                     std::span<const int> to,
                                                                     std::span<const int> from) const {
  mark_collective();
  std::vector<std::uint64_t> send_sizes(to.size(), 0);
  std::vector<const SparseMessage*> send_of(to.size(), nullptr);
  std::vector<SparseMessage> incoming;
  for (const SparseMessage& m : outgoing) {
    if (m.rank == rank_) {
      if (!m.words.empty()) incoming.push_back(m);
      continue;
    }
    const auto at = std::lower_bound(to.begin(), to.end(), m.rank);
    if (at == to.end() || *at != m.rank) {
      throw Error(ExitCode::kFailure, "peer exchange: rank " + std::to_string(m.rank) + " is not a peer");
    }
    const auto k = static_cast<std::size_t>(at - to.begin());
    if (send_of[k] != nullptr) throw Error(ExitCode::kFailure, "peer exchange: two messages for one peer");
    send_of[k] = &m;
    send_sizes[k] = m.words.size();
  }
  std::vector<std::uint64_t> recv_sizes(from.size(), 0);
  std::vector<MPI_Request> requests;
  requests.reserve(2 * (to.size() + from.size()));
  for (std::size_t k = 0; k < from.size(); ++k) {
    requests.emplace_back();
    check_mpi(MPI_Irecv(&recv_sizes[k], 1, MPI_UINT64_T, from[k], kPeerSizeTag, comm_, &requests.back()), "MPI_Irecv");
  }
  for (std::size_t k = 0; k < to.size(); ++k) {
    requests.emplace_back();
    check_mpi(MPI_Isend(&send_sizes[k], 1, MPI_UINT64_T, to[k], kPeerSizeTag, comm_, &requests.back()), "MPI_Isend");
  }
  check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  requests.clear();
  for (std::size_t k = 0; k < from.size(); ++k) {
    if (recv_sizes[k] == 0) continue;
    incoming.push_back({from[k], std::vector<std::uint64_t>(static_cast<std::size_t>(recv_sizes[k]))});
    std::vector<std::uint64_t>& words = incoming.back().words;
    requests.emplace_back();
    check_mpi(MPI_Irecv(words.data(), mpi_count(words.size(), "peer exchange"), MPI_UINT64_T, from[k], kPeerDataTag,
                        comm_, &requests.back()),
              "MPI_Irecv");
  }
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  ClassTraffic priced;
  for (std::size_t k = 0; k < to.size(); ++k) {
    if (send_sizes[k] == 0) continue;
    const std::vector<std::uint64_t>& words = send_of[k]->words;
    requests.emplace_back();
    check_mpi(MPI_Isend(words.data(), mpi_count(words.size(), "peer exchange"), MPI_UINT64_T, to[k], kPeerDataTag,
                        comm_, &requests.back()),
              "MPI_Isend");
    ++messages;
    bytes += words.size() * sizeof(std::uint64_t);
    priced.add(link_to(to[k]), 1, static_cast<double>(words.size() * sizeof(std::uint64_t)));
  }
  check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  // The sizes are messages too: a word to every peer.
  messages += to.size();
  bytes += to.size() * sizeof(std::uint64_t);
  for (const int peer : to) priced.add(link_to(peer), 1, sizeof(std::uint64_t));
  std::stable_sort(incoming.begin(), incoming.end(),
                   [](const SparseMessage& a, const SparseMessage& b) { return a.rank < b.rank; });
  record(CommPattern::kPersonalized, messages, bytes, priced);
  return incoming;
}

std::vector<Communicator::Arrival> Communicator::exchange_probed(std::span<const Piece> pieces, CommPattern kind,
                                                                 const PlaceArrivals& place) const {
  const auto members = static_cast<std::size_t>(size_);
  const auto me = static_cast<std::size_t>(rank_);
  if (pieces.size() != members) throw Error(ExitCode::kFailure, "exchange_probed: one piece per member expected");
  mark_collective();
  // Tag 1 carries the flag, tag 0 its absence.
  std::vector<MPI_Request> requests;
  requests.reserve(2 * members);
  std::uint64_t bytes = 0;
  ClassTraffic priced;
  for (std::size_t d = 0; d < members; ++d) {
    if (d == me) continue;
    const Piece& piece = pieces[d];
    requests.emplace_back();
    check_mpi(MPI_Isend(piece.bytes.data(), mpi_count(piece.bytes.size(), "exchange_probed"), MPI_BYTE,
                        static_cast<int>(d), piece.flagged ? 1 : 0, probed_comm_, &requests.back()),
              "MPI_Isend");
    bytes += piece.bytes.size();
    priced.add(link_to(static_cast<int>(d)), 1, static_cast<double>(piece.bytes.size()));
  }
  std::vector<Arrival> arrivals(members);
  std::vector<std::optional<ProbedMessage>> matched(members);
  arrivals[me] = {pieces[me].bytes.size(), pieces[me].flagged};
  for (std::size_t s = 0; s < members; ++s) {
    if (s == me) continue;
    MPI_Status status;
    matched[s].emplace(static_cast<int>(s), MPI_ANY_TAG, probed_comm_, status);
    int count = 0;
    check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
    arrivals[s] = {static_cast<std::uint64_t>(count), status.MPI_TAG == 1};
  }
  const std::span<std::uint8_t> into = place(arrivals);
  std::uint64_t total = 0;
  for (const Arrival& a : arrivals) total += a.bytes;
  if (into.size() != total) throw Error(ExitCode::kFailure, "exchange_probed: the buffer does not fit the arrivals");
  std::uint64_t at = 0;
  for (std::size_t s = 0; s < members; ++s) {
    std::uint8_t* const where = into.data() + at;
    at += arrivals[s].bytes;
    if (s == me) {
      if (!pieces[me].bytes.empty()) std::memcpy(where, pieces[me].bytes.data(), pieces[me].bytes.size());
      continue;
    }
    requests.push_back(matched[s]->start_receive(where, static_cast<int>(arrivals[s].bytes), MPI_BYTE));
  }
  check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  if (kind == CommPattern::kGather) {
    // What every peer got (the piece of the next member; this rank's own with no peer).
    const std::uint64_t mine = pieces[(me + 1) % members].bytes.size();
    count_gather(mine, total - arrivals[me].bytes + mine);
  } else {
    record(kind, members - 1, bytes, priced);
  }
  return arrivals;
}

std::vector<std::string> Communicator::allgather_strings(const std::string& mine) const {
  std::vector<std::uint64_t> counts;
  const std::vector<char> all = allgatherv(std::span<const char>(mine.data(), mine.size()), counts);
  std::vector<std::string> result;
  std::size_t offset = 0;
  for (const std::uint64_t c : counts) {
    result.emplace_back(all.data() + offset, static_cast<std::size_t>(c));
    offset += static_cast<std::size_t>(c);
  }
  return result;
}

void Communicator::broadcast_string(std::string& text, int root) const {
  std::uint64_t length = text.size();
  broadcast(std::span<std::uint64_t>(&length, 1), root);
  text.resize(static_cast<std::size_t>(length));
  broadcast(std::span<char>(text.data(), text.size()), root);
}

void Communicator::throw_first_error(const std::optional<std::string>& mine, ExitCode code) const {
  if (allreduce(std::uint64_t{mine ? 1U : 0U}, ReduceOp::kMax) == 0) return;
  for (const std::string& message : allgather_strings(mine.value_or(""))) {
    if (!message.empty()) throw Error(code, message, ErrorScope::kAllRanks);
  }
  // Only an empty message gets here.
  throw Error(code, "an unnamed error on some rank", ErrorScope::kAllRanks);
}

void Communicator::mark_collective() const {
  // Whether to wait depends only on the setting every member shares, never on local state
  // such as an attached observer: a member that skipped the barrier would hang the others.
  if (time_waits_ && size_ > 1) {
    const Stopwatch waiting;
    check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
    if (observer_ != nullptr) observer_->on_wait(waiting.elapsed_s());
  }
  mark();
}

MPI_Op Communicator::to_mpi(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return MPI_SUM;
    case ReduceOp::kMin: return MPI_MIN;
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kBitOr: return MPI_BOR;
    case ReduceOp::kBitXor: return MPI_BXOR;
  }
  return MPI_SUM;
}

void Communicator::record(CommPattern pattern, std::uint64_t messages, std::uint64_t bytes,
                          const ClassTraffic& priced) const {
  if (observer_ == nullptr || size_ <= 1) return;
  observer_->on_call(role_, pattern, messages, bytes, node_of_member_.empty() ? nullptr : &priced,
                     since_mark_.elapsed_s());
  since_mark_.restart();
}

void Communicator::book_transfers(CommPattern pattern, std::span<const std::uint64_t> bytes_to) const {
  if (bytes_to.size() != static_cast<std::size_t>(size_)) {
    throw Error(ExitCode::kFailure, "book_transfers: " + std::to_string(bytes_to.size()) + " members given, the " +
                                        "communicator has " + std::to_string(size_));
  }
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  ClassTraffic priced;
  for (int m = 0; m < size_; ++m) {
    const std::uint64_t sent = bytes_to[static_cast<std::size_t>(m)];
    if (m == rank_ || sent == 0) continue;
    ++messages;
    bytes += sent;
    priced.add(link_to(m), 1, static_cast<double>(sent));
  }
  record(pattern, messages, bytes, priced);
}

void Communicator::book_stream(std::span<const std::uint64_t> messages_to, std::span<const std::uint64_t> bytes_to,
                               double mpi_s, double wait_s) const {
  if (messages_to.size() != static_cast<std::size_t>(size_) || bytes_to.size() != messages_to.size()) {
    throw Error(ExitCode::kFailure, "book_stream: " + std::to_string(bytes_to.size()) + " members given, the " +
                                        "communicator has " + std::to_string(size_));
  }
  if (observer_ == nullptr || size_ <= 1) return;
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  ClassTraffic priced;
  for (int m = 0; m < size_; ++m) {
    const auto i = static_cast<std::size_t>(m);
    if (m == rank_) continue;
    messages += messages_to[i];
    bytes += bytes_to[i];
    priced.add(link_to(m), static_cast<double>(messages_to[i]), static_cast<double>(bytes_to[i]));
  }
  observer_->on_stream(role_, messages, bytes, node_of_member_.empty() ? nullptr : &priced, mpi_s, wait_s);
}

void Communicator::count_gather(std::uint64_t my_bytes, std::uint64_t total_bytes) const {
  // Counted as this rank's sends of a direct exchange (its data to every peer); priced
  // as the ring, whose time follows what each rank receives.
  const auto peers = static_cast<std::uint64_t>(size_ - 1);
  record(CommPattern::kGather, peers, peers * my_bytes,
         ring_gather_traffic(size_, off_node_, static_cast<double>(total_bytes - my_bytes)));
}

void Communicator::count_personalized_uniform(std::uint64_t bytes_per_peer) const {
  const auto peers = static_cast<std::uint64_t>(size_ - 1);
  ClassTraffic priced;
  priced.add(LinkClass::kIntraNode, on_node_ - 1, static_cast<double>((on_node_ - 1) * bytes_per_peer));
  priced.add(LinkClass::kInterNode, off_node_, static_cast<double>(off_node_ * bytes_per_peer));
  record(CommPattern::kPersonalized, peers, peers * bytes_per_peer, priced);
}

void Communicator::count_rounds(std::uint64_t bytes) const {
  const auto rounds = static_cast<std::uint64_t>(ceil_log2(static_cast<std::uint64_t>(size_)));
  record(CommPattern::kReduce, rounds, rounds * bytes, doubling_traffic(size_, on_node_, static_cast<double>(bytes)));
}

}  // namespace zbfs
