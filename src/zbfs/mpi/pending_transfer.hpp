// PendingTransfer: one nonblocking point-to-point transfer in flight (an owned
// MPI_Request). wait() completes it and test() checks without blocking. The buffer must
// outlive the transfer. Destroying one that has not completed, which happens only when
// an error unwinds past it (and the job is about to end), never blocks: a receive is
// cancelled and a send left to finish on its own.
#pragma once

#include <mpi.h>

namespace zbfs {

class PendingTransfer {
 public:
  PendingTransfer() = default;
  PendingTransfer(MPI_Request request, bool receive) : request_(request), receive_(receive) {}
  ~PendingTransfer();
  PendingTransfer(PendingTransfer&& other) noexcept;
  PendingTransfer& operator=(PendingTransfer&& other) noexcept;
  PendingTransfer(const PendingTransfer&) = delete;
  PendingTransfer& operator=(const PendingTransfer&) = delete;

  // Blocks until the transfer completes (at once when it has).
  void wait();
  // Whether it has completed; completes it when it has.
  [[nodiscard]] bool test();
  [[nodiscard]] bool done() const { return request_ == MPI_REQUEST_NULL; }

 private:
  void abandon() noexcept;

  MPI_Request request_ = MPI_REQUEST_NULL;
  bool receive_ = false;
};

}  // namespace zbfs
