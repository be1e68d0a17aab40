#include "zbfs/backend/nccl_wire.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "zbfs/core/error.hpp"

namespace zbfs {
namespace {

void check_nccl(ncclResult_t rc, const char* what) {
  if (rc != ncclSuccess) throw Error(ExitCode::kFailure, std::string(what) + ": " + ncclGetErrorString(rc));
}

void check_cuda(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw Error(ExitCode::kFailure, std::string(what) + ": " + cudaGetErrorString(rc));
}

// An owned NCCL communicator.
class NcclComm {
 public:
  explicit NcclComm(const Communicator& comm) {
    ncclUniqueId id{};
    if (comm.rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    std::vector<char> bytes(sizeof(id));
    std::memcpy(bytes.data(), &id, sizeof(id));
    comm.broadcast(std::span<char>(bytes), 0);
    std::memcpy(&id, bytes.data(), sizeof(id));
    check_nccl(ncclCommInitRank(&comm_, comm.size(), id, comm.rank()), "ncclCommInitRank");
  }
  ~NcclComm() {
    if (comm_ != nullptr) ncclCommDestroy(comm_);
  }
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  [[nodiscard]] ncclComm_t get() const { return comm_; }

 private:
  ncclComm_t comm_ = nullptr;
};

class NcclDeviceWire final : public DeviceWire {
 public:
  NcclDeviceWire() { check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~NcclDeviceWire() override {
    comms_.clear();
    cudaStreamDestroy(stream_);
  }
  NcclDeviceWire(const NcclDeviceWire&) = delete;
  NcclDeviceWire& operator=(const NcclDeviceWire&) = delete;

  [[nodiscard]] DeviceExchange kind() const override { return DeviceExchange::kNccl; }
  void transfer(const Communicator& comm, std::span<const Transfer> sends,
                std::span<const Transfer> receives) override {
    const ncclComm_t nccl = comm_for(comm);
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (const Transfer& r : receives) {
      if (r.bytes != 0) check_nccl(ncclRecv(r.data, r.bytes, ncclUint8, r.member, nccl, stream_), "ncclRecv");
    }
    for (const Transfer& s : sends) {
      if (s.bytes != 0) check_nccl(ncclSend(s.data, s.bytes, ncclUint8, s.member, nccl, stream_), "ncclSend");
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    check_cuda(cudaStreamSynchronize(stream_), "NCCL transfers");
  }

 private:
  // One NCCL communicator per group of ranks, found by its members (every member finds
  // it alike, and made at the group's first transfer, collectively).
  ncclComm_t comm_for(const Communicator& comm) {
    std::vector<int> members = comm.world_ranks();
    auto found = comms_.find(members);
    if (found == comms_.end()) found = comms_.try_emplace(std::move(members), comm).first;
    return found->second.get();
  }

  cudaStream_t stream_ = nullptr;
  std::map<std::vector<int>, NcclComm> comms_;
};

}  // namespace

std::unique_ptr<DeviceWire> make_nccl_wire() { return std::make_unique<NcclDeviceWire>(); }

}  // namespace zbfs
