// DeviceWire: moves bytes that live in the device backend's target memory between the
// members of a communicator without staging them in host memory (--device-exchange
// cuda-aware or nccl; backend.hpp). An implementation supplies one primitive, a batch of
// sends and receives run together; the exchanges the distributed device search needs
// (a personalised all-to-all, an all-gather, a ring shift) are built on it here once, so
// a new wire (NVSHMEM, a one-sided transport) is one more implementation of transfer().
// Sizes travel first, on the host (a count all-to-all or all-gather, booked as usual);
// the data moves device to device, and is booked through Communicator::book_transfers,
// so the phase table and the network model see a wire's bytes as they see MPI's.
// On the host launcher's target (cuda-host) target memory is host memory, so the MPI
// wire runs there with any MPI library: that is how the wires' logic is tested without
// a GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zbfs/backend/backend.hpp"
#include "zbfs/backend/execution_target.hpp"
#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

class DeviceWire {
 public:
  // `bytes` bytes at `data` (target memory) to or from `member`.
  struct Transfer {
    int member = 0;
    std::uint8_t* data = nullptr;
    std::uint64_t bytes = 0;
  };
  virtual ~DeviceWire() = default;
  [[nodiscard]] virtual DeviceExchange kind() const = 0;
  // Runs every send and receive at once and returns when all have completed. Every
  // member of `comm` calls it in the same exchange; a member may send to itself.
  virtual void transfer(const Communicator& comm, std::span<const Transfer> sends,
                        std::span<const Transfer> receives) = 0;
};

// Where arrivals go: room for `bytes` bytes in target memory.
using TargetRoom = std::function<std::uint8_t*(std::uint64_t bytes)>;

// Personalised all-to-all: member d gets send_bytes[d] bytes of `send` (the messages one
// after another in member order). Returns the bytes that arrived from each member, laid
// out one after another in member order in room(their sum).
std::vector<std::uint64_t> wire_all_to_all(DeviceWire& wire, const Communicator& comm, const std::uint8_t* send,
                                           std::span<const std::uint64_t> send_bytes, const TargetRoom& room);
// Every member's `bytes` bytes at `mine`, concatenated in member order in room(total);
// returns each member's byte count.
std::vector<std::uint64_t> wire_all_gather(DeviceWire& wire, const Communicator& comm, const std::uint8_t* mine,
                                           std::uint64_t bytes, const TargetRoom& room);
// The same when every member already knows every member's count (member_bytes).
void wire_all_gather_known(DeviceWire& wire, const Communicator& comm, const std::uint8_t* mine,
                           std::span<const std::uint64_t> member_bytes, std::uint8_t* all);
// A ring shift of `bytes` bytes: `send` to the next member, `received` from the previous.
void wire_shift(DeviceWire& wire, const Communicator& comm, const std::uint8_t* send, std::uint8_t* received,
                std::uint64_t bytes);

// The wire for --device-exchange `kind` (cuda-aware or nccl) on `target`. Throws a usage
// error (one line, exit status 2) where it cannot run: nccl on a build without NCCL or
// on the host launcher; cuda-aware on a device with an MPI library that does not say it
// is CUDA-aware (on the host launcher any MPI library carries target memory).
std::unique_ptr<DeviceWire> make_device_wire(DeviceExchange kind, ExecutionTarget target);
// The same checks alone (require_device_exchange, and a CUDA-aware MPI library for
// cuda-aware on a device), made before any work; the same on every rank of a job.
void require_device_wire(DeviceExchange kind, Backend backend);

}  // namespace zbfs
