#include "zbfs/backend/device_wire.hpp"

#include <numeric>
#include <string>

#include "zbfs/core/error.hpp"
#include "zbfs/mpi/environment.hpp"
#ifdef ZBFS_HAVE_NCCL
#include "zbfs/backend/nccl_wire.hpp"
#endif

namespace zbfs {
namespace {

// Nonblocking MPI sends and receives on target memory: a CUDA-aware library moves device
// buffers itself (GPUDirect where the hardware has it); on the host launcher's target
// they are host buffers.
class MpiDeviceWire final : public DeviceWire {
 public:
  [[nodiscard]] DeviceExchange kind() const override { return DeviceExchange::kCudaAware; }
  void transfer(const Communicator& comm, std::span<const Transfer> sends,
                std::span<const Transfer> receives) override {
    std::vector<PendingTransfer> pending;
    pending.reserve(sends.size() + receives.size());
    // Receives first, so that no send waits for its match to be posted.
    for (const Transfer& r : receives) {
      if (r.bytes == 0) continue;
      pending.push_back(comm.ireceive_bytes({reinterpret_cast<char*>(r.data), r.bytes}, r.member, kTag));
    }
    for (const Transfer& s : sends) {
      if (s.bytes == 0) continue;
      pending.push_back(comm.isend_bytes({reinterpret_cast<const char*>(s.data), s.bytes}, s.member, kTag));
    }
    for (PendingTransfer& p : pending) p.wait();
  }

 private:
  // Apart from the Communicator's own tags; a call's transfers complete before it
  // returns, and MPI keeps one sender's messages in order, so calls cannot mix.
  static constexpr int kTag = 11;
};

std::vector<std::uint64_t> offsets_of(std::span<const std::uint64_t> bytes) {
  std::vector<std::uint64_t> at(bytes.size() + 1, 0);
  std::partial_sum(bytes.begin(), bytes.end(), at.begin() + 1);
  return at;
}

}  // namespace

std::vector<std::uint64_t> wire_all_to_all(DeviceWire& wire, const Communicator& comm, const std::uint8_t* send,
                                           std::span<const std::uint64_t> send_bytes, const TargetRoom& room) {
  const auto members = static_cast<std::size_t>(comm.size());
  if (send_bytes.size() != members) throw Error(ExitCode::kFailure, "device all-to-all: one count per member needed");
  std::vector<std::uint64_t> recv_bytes(members, 0);
  comm.alltoall(send_bytes, std::span<std::uint64_t>(recv_bytes));
  const std::vector<std::uint64_t> send_at = offsets_of(send_bytes);
  const std::vector<std::uint64_t> recv_at = offsets_of(recv_bytes);
  std::uint8_t* into = room(recv_at.back());
  std::vector<DeviceWire::Transfer> sends;
  std::vector<DeviceWire::Transfer> receives;
  for (std::size_t m = 0; m < members; ++m) {
    const int member = static_cast<int>(m);
    sends.push_back({member, const_cast<std::uint8_t*>(send) + send_at[m], send_bytes[m]});
    receives.push_back({member, into + recv_at[m], recv_bytes[m]});
  }
  comm.start_transfers();
  wire.transfer(comm, sends, receives);
  comm.book_transfers(CommPattern::kPersonalized, send_bytes);
  return recv_bytes;
}

std::vector<std::uint64_t> wire_all_gather(DeviceWire& wire, const Communicator& comm, const std::uint8_t* mine,
                                           std::uint64_t bytes, const TargetRoom& room) {
  const std::vector<std::uint64_t> member_bytes = comm.allgather_value(bytes);
  const std::vector<std::uint64_t> at = offsets_of(member_bytes);
  wire_all_gather_known(wire, comm, mine, member_bytes, room(at.back()));
  return member_bytes;
}

void wire_all_gather_known(DeviceWire& wire, const Communicator& comm, const std::uint8_t* mine,
                           std::span<const std::uint64_t> member_bytes, std::uint8_t* all) {
  const auto members = static_cast<std::size_t>(comm.size());
  if (member_bytes.size() != members) throw Error(ExitCode::kFailure, "device all-gather: one count per member needed");
  const std::vector<std::uint64_t> at = offsets_of(member_bytes);
  const std::uint64_t my_bytes = member_bytes[static_cast<std::size_t>(comm.rank())];
  std::vector<DeviceWire::Transfer> sends;
  std::vector<DeviceWire::Transfer> receives;
  for (std::size_t m = 0; m < members; ++m) {
    const int member = static_cast<int>(m);
    sends.push_back({member, const_cast<std::uint8_t*>(mine), my_bytes});
    receives.push_back({member, all + at[m], member_bytes[m]});
  }
  comm.start_transfers();
  wire.transfer(comm, sends, receives);
  comm.book_transfers(CommPattern::kGather, std::vector<std::uint64_t>(members, my_bytes));
}

void wire_shift(DeviceWire& wire, const Communicator& comm, const std::uint8_t* send, std::uint8_t* received,
                std::uint64_t bytes) {
  const int p = comm.size();
  const int next = (comm.rank() + 1) % p;
  const int previous = (comm.rank() + p - 1) % p;
  const DeviceWire::Transfer out{next, const_cast<std::uint8_t*>(send), bytes};
  const DeviceWire::Transfer in{previous, received, bytes};
  comm.start_transfers();
  wire.transfer(comm, {&out, 1}, {&in, 1});
  std::vector<std::uint64_t> sent(static_cast<std::size_t>(p), 0);
  sent[static_cast<std::size_t>(next)] = bytes;
  comm.book_transfers(CommPattern::kPairwise, sent);
}

void require_device_wire(DeviceExchange kind, Backend backend) {
  require_device_exchange(kind, backend);
  if (kind == DeviceExchange::kCudaAware && backend == Backend::kCuda && !mpi_is_cuda_aware()) {
    throw_usage_error(
        "--device-exchange cuda-aware: this MPI library does not take device memory "
        "(MPIX_Query_cuda_support says no); use --device-exchange staged or nccl");
  }
}

std::unique_ptr<DeviceWire> make_device_wire(DeviceExchange kind, ExecutionTarget target) {
  require_device_wire(kind, target == ExecutionTarget::kDevice ? Backend::kCuda : Backend::kCudaHost);
  switch (kind) {
    case DeviceExchange::kCudaAware: return std::make_unique<MpiDeviceWire>();
    case DeviceExchange::kNccl:
#ifdef ZBFS_HAVE_NCCL
      return make_nccl_wire();
#else
      break;
#endif
    case DeviceExchange::kStaged: break;
  }
  throw Error(ExitCode::kFailure, "no device wire for --device-exchange " + std::string(to_string(kind)));
}

}  // namespace zbfs
