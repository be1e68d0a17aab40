// Exchanger: the one interface through which every frontier and predecessor exchange of
// the distributed BFS and validator passes, so that compression, relay routing and
// aggregation can be plugged in without touching the kernels. All members are collective
// over the communicator they are given. DirectExchanger maps each call onto one MPI
// collective; its column gather is either an allgatherv or a set-union allreduce.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "zbfs/exchange/column_gather.hpp"
#include "zbfs/exchange/id_messages.hpp"
#include "zbfs/mpi/communicator.hpp"

namespace zbfs {

class Exchanger {
 public:
  virtual ~Exchanger() = default;
  // Sparse personalised all-to-all of vertex ids.
  virtual IncomingIds all_to_all(const Communicator& comm, const OutgoingIds& outgoing) = 0;
  // Union of every rank's sorted, duplicate-free id list, sorted, on every rank.
  virtual std::vector<std::uint64_t> gather_ids(const Communicator& comm, std::span<const std::uint64_t> mine) = 0;
  // Concatenation of equal-sized bitmap slices (64-bit words) in rank order.
  virtual void gather_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine,
                             std::span<std::uint64_t> all) = 0;
};

class DirectExchanger final : public Exchanger {
 public:
  explicit DirectExchanger(ColumnGather column_gather) : column_gather_(column_gather) {}
  IncomingIds all_to_all(const Communicator& comm, const OutgoingIds& outgoing) override;
  std::vector<std::uint64_t> gather_ids(const Communicator& comm, std::span<const std::uint64_t> mine) override;
  void gather_bitmap(const Communicator& comm, std::span<const std::uint64_t> mine,
                     std::span<std::uint64_t> all) override;

 private:
  ColumnGather column_gather_;
};

// The set-union allreduce on its own (exposed for tests): recursive halving over the id
// range with pairwise exchanges, each rank ending with the union of one id range, then
// an allgatherv of the ranges. Non-power-of-two counts fold the extra ranks in first.
std::vector<std::uint64_t> union_allreduce(const Communicator& comm, std::span<const std::uint64_t> mine);

}  // namespace zbfs
