#include "zbfs/mpi/pending_transfer.hpp"

#include <utility>

#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

PendingTransfer::~PendingTransfer() { abandon(); }

PendingTransfer::PendingTransfer(PendingTransfer&& other) noexcept
    : request_(std::exchange(other.request_, MPI_REQUEST_NULL)), receive_(other.receive_) {}

PendingTransfer& PendingTransfer::operator=(PendingTransfer&& other) noexcept {
  if (this != &other) {
    abandon();
    request_ = std::exchange(other.request_, MPI_REQUEST_NULL);
    receive_ = other.receive_;
  }
  return *this;
}

void PendingTransfer::wait() {
  if (done()) return;
  check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
}

bool PendingTransfer::test() {
  if (done()) return true;
  int flag = 0;
  check_mpi(MPI_Test(&request_, &flag, MPI_STATUS_IGNORE), "MPI_Test");
  return flag != 0;
}

void PendingTransfer::abandon() noexcept {
  if (done()) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) return;
  // A cancelled receive completes locally; a send is freed and finishes in the background.
  if (receive_) {
    MPI_Cancel(&request_);
    MPI_Wait(&request_, MPI_STATUS_IGNORE);
  } else {
    MPI_Request_free(&request_);
  }
  request_ = MPI_REQUEST_NULL;
}

}  // namespace zbfs
