// The NCCL device wire (--device-exchange nccl): a batch of transfers is one NCCL group
// of sends and receives on the wire's stream, so NCCL picks NVLink between a node's GPUs
// and the network between nodes. Each group of ranks gets its NCCL communicator at its
// first transfer (collective: rank 0 draws the unique id and broadcasts it over MPI).
// Built only with NCCL (ZBFS_HAVE_NCCL); NCCL needs a device, so the host launcher has
// no NCCL wire.
#pragma once

#include <memory>

#include "zbfs/backend/device_wire.hpp"

namespace zbfs {

std::unique_ptr<DeviceWire> make_nccl_wire();

}  // namespace zbfs
