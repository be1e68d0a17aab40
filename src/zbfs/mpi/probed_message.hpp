// ProbedMessage: a message matched by a probe and received later, so that a receiver sizes
// its buffer first. Open MPI and every MPI-3 library: MPI_Mprobe and MPI_Mrecv/MPI_Imrecv,
// which keep another thread from taking the message in between. The simulated-cluster
// build (ZBFS_SIMGRID; SimGrid 3.32's SMPI has no matched probes): MPI_Probe, then a
// receive by the probed source and tag. Its ranks run one thread, and MPI delivers a
// source's messages in order, so that receive takes the probed message.
#pragma once

#include <mpi.h>

#include <optional>

#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

class ProbedMessage {
 public:
  // Blocks until a message from `source` with `tag` (or MPI_ANY_SOURCE, MPI_ANY_TAG)
  // arrives on `comm`; `status` gives its source, tag and size.
  ProbedMessage(int source, int tag, MPI_Comm comm, MPI_Status& status) : comm_(comm) {
#ifdef ZBFS_SIMGRID
    check_mpi(MPI_Probe(source, tag, comm, &status), "MPI_Probe");
    source_ = status.MPI_SOURCE;
    tag_ = status.MPI_TAG;
#else
    check_mpi(MPI_Mprobe(source, tag, comm, &message_, &status), "MPI_Mprobe");
#endif
  }

  // The same without blocking: nothing when no such message has arrived.
  static std::optional<ProbedMessage> try_probe(int source, int tag, MPI_Comm comm, MPI_Status& status) {
    int found = 0;
    ProbedMessage probed(comm);
#ifdef ZBFS_SIMGRID
    check_mpi(MPI_Iprobe(source, tag, comm, &found, &status), "MPI_Iprobe");
    probed.source_ = status.MPI_SOURCE;
    probed.tag_ = status.MPI_TAG;
#else
    check_mpi(MPI_Improbe(source, tag, comm, &found, &probed.message_, &status), "MPI_Improbe");
#endif
    if (found == 0) return std::nullopt;
    return probed;
  }

  void receive(void* into, int count, MPI_Datatype type) {
#ifdef ZBFS_SIMGRID
    check_mpi(MPI_Recv(into, count, type, source_, tag_, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
#else
    check_mpi(MPI_Mrecv(into, count, type, &message_, MPI_STATUS_IGNORE), "MPI_Mrecv");
#endif
  }

  [[nodiscard]] MPI_Request start_receive(void* into, int count, MPI_Datatype type) {
    MPI_Request request = MPI_REQUEST_NULL;
#ifdef ZBFS_SIMGRID
    check_mpi(MPI_Irecv(into, count, type, source_, tag_, comm_, &request), "MPI_Irecv");
#else
    check_mpi(MPI_Imrecv(into, count, type, &message_, &request), "MPI_Imrecv");
#endif
    return request;
  }

 private:
  explicit ProbedMessage(MPI_Comm comm) : comm_(comm) {}

  MPI_Comm comm_;
#ifdef ZBFS_SIMGRID
  int source_ = MPI_ANY_SOURCE;
  int tag_ = MPI_ANY_TAG;
#else
  MPI_Message message_ = MPI_MESSAGE_NULL;
#endif
};

}  // namespace zbfs
