#include "zbfs/mpi/communicator.hpp"

#include <climits>
#include <utility>

#include "zbfs/core/error.hpp"

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

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

Communicator Communicator::duplicate(MPI_Comm comm) {
  MPI_Comm copy = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm, &copy), "MPI_Comm_dup");
  return Communicator(copy);
}

Communicator::~Communicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // Freeing is local in practice (no message is exchanged); after MPI_Finalize it is illegal.
  if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
}

Communicator::Communicator(Communicator&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      rank_(other.rank_),
      size_(other.size_),
      metrics_(other.metrics_) {}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    Communicator old(std::move(*this));
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    rank_ = other.rank_;
    size_ = other.size_;
    metrics_ = other.metrics_;
  }
  return *this;
}

Communicator Communicator::split(int color, int key) const {
  MPI_Comm part = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm_, color, key, &part), "MPI_Comm_split");
  Communicator result(part);
  result.metrics_ = metrics_;
  return result;
}

void Communicator::barrier() const {
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
  count_rounds(0);
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

MPI_Op Communicator::to_mpi(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return MPI_SUM;
    case ReduceOp::kMin: return MPI_MIN;
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kBitOr: return MPI_BOR;
  }
  return MPI_SUM;
}

void Communicator::count_direct(std::uint64_t bytes_per_peer) const {
  if (metrics_ == nullptr || size_ <= 1) return;
  const auto peers = static_cast<std::uint64_t>(size_ - 1);
  metrics_->add_traffic(peers, peers * bytes_per_peer, peers * bytes_per_peer);
}

void Communicator::count_rounds(std::uint64_t bytes) const {
  if (metrics_ == nullptr || size_ <= 1) return;
  std::uint64_t rounds = 0;
  while ((std::uint64_t{1} << rounds) < static_cast<std::uint64_t>(size_)) ++rounds;
  metrics_->add_traffic(rounds, rounds * bytes, rounds * bytes);
}

}  // namespace zbfs
