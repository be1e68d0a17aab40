// DistributedArray: a batched distributed array of 64-bit values on top of a route.
// Elements are block-distributed (element i lives on rank i / block). A step collects
// reads and writes from every rank; execute() carries them out together: writes first,
// then reads, which see the step's writes. When several writes hit one element in a
// step, the smallest value wins (the rule merging implements on the way, so the result
// does not depend on the route or on merging). Reads of one element by many ranks are
// merged on the way unless merging is off; the owner answers each once and the replies
// are copied back along the paths (RoutedExchange::read).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/mpi/communicator.hpp"
#include "zbfs/route/routed_exchange.hpp"

namespace zbfs {

class DistributedArray {
 public:
  // Collective in spirit (every rank builds one with the same size and plan); allocates
  // this rank's block, every element `initial`.
  DistributedArray(const Communicator& comm, std::uint64_t size, const RoutePlan& plan, Merge merge,
                   std::uint64_t initial = 0);

  // Queue a read; the ticket names its result after execute().
  std::size_t read(std::uint64_t index);
  void write(std::uint64_t index, std::uint64_t value);
  // Collective: every rank's queued writes, then reads. Clears the queues.
  void execute(const Communicator& comm);
  [[nodiscard]] std::uint64_t result(std::size_t ticket) const { return results_.at(ticket); }

  [[nodiscard]] std::uint64_t size() const { return size_; }
  [[nodiscard]] std::uint64_t block() const { return block_; }
  [[nodiscard]] int owner(std::uint64_t index) const { return static_cast<int>(index / block_); }
  [[nodiscard]] std::uint64_t first_index() const { return first_; }
  [[nodiscard]] std::span<std::uint64_t> local() { return local_; }
  // The last execute()'s writes and reads.
  [[nodiscard]] const RouteStats& write_stats() const { return writes_.stats(); }
  [[nodiscard]] const RouteStats& read_stats() const { return reads_.stats(); }

 private:
  void check_index(std::uint64_t index) const;

  std::uint64_t size_;
  std::uint64_t block_;
  std::uint64_t first_;
  std::vector<std::uint64_t> local_;
  RoutedExchange writes_;
  RoutedExchange reads_;
  std::vector<KeyedItem> queued_writes_;  // key: index
  std::vector<std::uint64_t> queued_reads_;
  std::vector<std::uint64_t> results_;
};

}  // namespace zbfs
