// DistributedArray: a batched distributed array of fixed-width elements (`width` 64-bit
// fields each) on top of a route. Elements live in blocks, one block per rank (an
// ArrayPlacement: even blocks in rank order, or the vertex pieces of a ProcessGrid). A
// step collects reads and writes from every rank; execute() carries them out together:
// writes first, then reads, which see the step's writes. When several writes hit one
// field of one element in a step, the smallest value wins (the rule merging implements on
// the way, so the result does not depend on the route or on merging). Reads of one
// element by many ranks are merged on the way unless merging is off; the owner answers
// each once and the replies are copied back along the paths (RoutedExchange::read).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbfs/mpi/communicator.hpp"
#include "zbfs/topology/process_grid.hpp"
#include "zbfs/wire/direct/message_codec.hpp"
#include "zbfs/wire/routed/routed_exchange.hpp"

namespace zbfs {

// Where the elements live: element i is in block i / block, on rank rank_of_block[that].
// Every rank holds exactly one block (the last ones may be short or empty).
struct ArrayPlacement {
  std::uint64_t size = 0;
  std::uint64_t block = 1;
  std::vector<int> rank_of_block;

  // Blocks as even as possible, block r on rank r.
  static ArrayPlacement even(std::uint64_t size, int ranks);
  // The grid's vertex pieces: vertex v on grid.owner_of(v), at v - grid.my_first_vertex().
  static ArrayPlacement of_vertices(const ProcessGrid& grid);
};

class DistributedArray {
 public:
  // Collective in spirit (every rank builds one with the same placement, width and plan);
  // allocates this rank's block, every field of every element `initial`.
  DistributedArray(const Communicator& comm, ArrayPlacement placement, std::size_t width, const RoutePlan& plan,
                   Merge merge, std::uint64_t initial = 0);
  // One field per element, even blocks.
  DistributedArray(const Communicator& comm, std::uint64_t size, const RoutePlan& plan, Merge merge,
                   std::uint64_t initial = 0)
      : DistributedArray(comm, ArrayPlacement::even(size, comm.size()), 1, plan, merge, initial) {}

  // Encode the hops of both exchanges with `codec` (kept by the caller; see RoutedExchange).
  void set_codec(MessageCodec* codec, std::uint64_t max_items);

  // Queue a read of one element; the ticket names its result after execute().
  std::size_t read(std::uint64_t index);
  // Queue reads of many elements: their tickets are the returned one and those following.
  std::size_t read(std::span<const std::uint64_t> indices);
  void write(std::uint64_t index, std::uint64_t value, std::size_t field = 0);
  // Collective: every rank's queued writes, then reads, which return the first `fields`
  // fields of each element (all of them when 0). Clears the queues.
  void execute(const Communicator& comm, std::size_t fields = 0);
  // Field `field` (< the fields read) of a read's element.
  [[nodiscard]] std::uint64_t result(std::size_t ticket, std::size_t field = 0) const {
    return results_.at(ticket * fields_read_ + field);
  }

  [[nodiscard]] std::uint64_t size() const { return placement_.size; }
  [[nodiscard]] std::size_t width() const { return width_; }
  [[nodiscard]] int owner(std::uint64_t index) const {
    return placement_.rank_of_block[static_cast<std::size_t>(index / placement_.block)];
  }
  [[nodiscard]] std::uint64_t first_index() const { return first_; }
  [[nodiscard]] std::uint64_t local_size() const { return local_.size() / width_; }
  // This rank's elements: element first_index() + o has its fields at [o * width, (o + 1) * width).
  [[nodiscard]] std::span<std::uint64_t> local() { return local_; }
  [[nodiscard]] std::uint64_t& at(std::uint64_t offset, std::size_t field = 0) {
    return local_[static_cast<std::size_t>(offset) * width_ + field];
  }
  // The last execute()'s writes and reads.
  [[nodiscard]] const RouteStats& write_stats() const { return writes_.stats(); }
  [[nodiscard]] const RouteStats& read_stats() const { return reads_.stats(); }

 private:
  void check_index(std::uint64_t index) const;

  ArrayPlacement placement_;
  std::size_t width_;
  std::uint64_t first_ = 0;
  std::vector<std::uint64_t> local_;
  RoutedExchange writes_;
  RoutedExchange reads_;
  std::vector<KeyedItem> queued_writes_;  // key: index * width + field
  std::vector<std::uint64_t> queued_reads_;
  std::size_t fields_read_ = 1;
  std::vector<std::uint64_t> results_;
};

}  // namespace zbfs
