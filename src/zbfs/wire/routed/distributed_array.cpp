#include "zbfs/wire/routed/distributed_array.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "zbfs/core/error.hpp"
#include "zbfs/core/memory.hpp"

namespace zbfs {
namespace {

// Groups items by owner rank, keeping the callers' order within an owner (a counting
// sort: one owner lookup per item), and returns the counts per owner.
template <class T, class OwnerOf>
std::vector<std::uint64_t> group_by_owner(std::vector<T>& items, int ranks, OwnerOf owner_of) {
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(ranks), 0);
  std::vector<int> owners(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    owners[i] = owner_of(items[i]);
    ++counts[static_cast<std::size_t>(owners[i])];
  }
  std::vector<std::uint64_t> next(counts.size(), 0);
  for (std::size_t r = 1; r < counts.size(); ++r) next[r] = next[r - 1] + counts[r - 1];
  std::vector<T> grouped(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) grouped[next[static_cast<std::size_t>(owners[i])]++] = items[i];
  items = std::move(grouped);
  return counts;
}

}  // namespace

ArrayPlacement ArrayPlacement::even(std::uint64_t size, int ranks) {
  const auto p = static_cast<std::uint64_t>(ranks);
  ArrayPlacement placement{size, std::max<std::uint64_t>(1, size / p + (size % p != 0 ? 1 : 0)), {}};
  for (int r = 0; r < ranks; ++r) placement.rank_of_block.push_back(r);
  return placement;
}

ArrayPlacement ArrayPlacement::of_vertices(const ProcessGrid& grid) {
  const VertexBlocks& blocks = grid.blocks();
  ArrayPlacement placement{blocks.num_vertices(), blocks.block(), {}};
  for (int piece = 0; piece < blocks.num_pieces(); ++piece)
    placement.rank_of_block.push_back(grid.owner_of(blocks.first_vertex(piece)));
  return placement;
}

DistributedArray::DistributedArray(const Communicator& comm, ArrayPlacement placement, std::size_t width,
                                   const RoutePlan& plan, Merge merge, std::uint64_t initial)
    : placement_(std::move(placement)), width_(width), writes_(plan, merge), reads_(plan, merge) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<int> block_of_rank(ranks, -1);
  bool one_each = placement_.rank_of_block.size() == ranks && placement_.block > 0;
  for (std::size_t b = 0; one_each && b < ranks; ++b) {
    const int r = placement_.rank_of_block[b];
    one_each = r >= 0 && static_cast<std::size_t>(r) < ranks && block_of_rank[static_cast<std::size_t>(r)] < 0;
    if (one_each) block_of_rank[static_cast<std::size_t>(r)] = static_cast<int>(b);
  }
  if (!one_each || placement_.block > std::numeric_limits<std::uint64_t>::max() / ranks ||
      placement_.block * ranks < placement_.size) {
    throw Error(ExitCode::kFailure, "distributed array: the placement must give each of the " + std::to_string(ranks) +
                                        " ranks one block, the blocks covering all " + std::to_string(placement_.size) +
                                        " elements");
  }
  // Writes travel as (index * width + field): that must not wrap.
  if (width_ == 0 || placement_.size > std::numeric_limits<std::uint64_t>::max() / width_) {
    throw Error(ExitCode::kFailure, "distributed array: " + std::to_string(width_) + " fields per element for " +
                                        std::to_string(placement_.size) + " elements is out of range");
  }
  const auto mine_block = static_cast<std::uint64_t>(block_of_rank[static_cast<std::size_t>(comm.rank())]);
  first_ = std::min(placement_.size, mine_block * placement_.block);
  const std::uint64_t mine = std::min(placement_.size, first_ + placement_.block) - first_;
  const std::optional<std::uint64_t> available = available_memory_bytes();
  if (mine > std::numeric_limits<std::uint64_t>::max() / sizeof(std::uint64_t) / width_ ||
      (available && mine * width_ > *available / sizeof(std::uint64_t))) {
    throw Error(ExitCode::kUsage, "distributed array of " + std::to_string(placement_.size) + " elements of " +
                                      std::to_string(width_) + " fields: this rank's block needs " +
                                      format_bytes(mine * width_ * sizeof(std::uint64_t)) + ", " +
                                      (available ? format_bytes(*available) : std::string("less")) + " available");
  }
  local_.assign(static_cast<std::size_t>(mine * width_), initial);
}

void DistributedArray::set_codec(MessageCodec* codec, std::uint64_t max_items) {
  writes_.set_codec(codec, max_items);
  reads_.set_codec(codec, max_items);
}

void DistributedArray::check_index(std::uint64_t index) const {
  if (index >= placement_.size) {
    throw Error(ExitCode::kFailure, "distributed array: index " + std::to_string(index) + " past the end (" +
                                        std::to_string(placement_.size) + ")");
  }
}

std::size_t DistributedArray::read(std::uint64_t index) {
  check_index(index);
  queued_reads_.push_back(index);
  return queued_reads_.size() - 1;
}

std::size_t DistributedArray::read(std::span<const std::uint64_t> indices) {
  for (const std::uint64_t index : indices) check_index(index);
  const std::size_t first_ticket = queued_reads_.size();
  queued_reads_.insert(queued_reads_.end(), indices.begin(), indices.end());
  return first_ticket;
}

void DistributedArray::write(std::uint64_t index, std::uint64_t value, std::size_t field) {
  check_index(index);
  if (field >= width_) {
    throw Error(ExitCode::kFailure, "distributed array: field " + std::to_string(field) + " of elements with " +
                                        std::to_string(width_) + " fields");
  }
  queued_writes_.push_back({index * width_ + field, value});
}

void DistributedArray::execute(const Communicator& comm, std::size_t fields) {
  const int ranks = comm.size();
  fields_read_ = fields == 0 ? width_ : fields;
  if (fields_read_ > width_) {
    throw Error(ExitCode::kFailure, "distributed array: reading " + std::to_string(fields_read_) +
                                        " fields of elements with " + std::to_string(width_));
  }
  // Writes: routed to the owners (merged on the way: the smallest value per field),
  // applied with the same rule.
  const std::vector<std::uint64_t> write_counts =
      group_by_owner(queued_writes_, ranks, [&](const KeyedItem& w) { return owner(w.key / width_); });
  for (const KeyedItem& w : writes_.exchange(comm, queued_writes_, write_counts)) {
    if (w.key / width_ < first_ || w.key - first_ * width_ >= local_.size()) {
      throw Error(ExitCode::kFailure, "distributed array: a write reached the wrong owner");
    }
    std::uint64_t& slot = local_[static_cast<std::size_t>(w.key - first_ * width_)];
    slot = std::min(slot, w.value);
  }
  queued_writes_.clear();

  // Reads: grouped by owner, answered, and put back in the order they were queued.
  std::vector<std::pair<std::uint64_t, std::size_t>> order;  // (index, ticket)
  order.reserve(queued_reads_.size());
  for (std::size_t t = 0; t < queued_reads_.size(); ++t) order.emplace_back(queued_reads_[t], t);
  const std::vector<std::uint64_t> read_counts =
      group_by_owner(order, ranks, [&](const auto& r) { return owner(r.first); });
  std::vector<std::uint64_t> keys;
  keys.reserve(order.size());
  for (const auto& r : order) keys.push_back(r.first);
  const std::size_t width = fields_read_;
  const std::vector<std::uint64_t> values =
      reads_.read(comm, keys, read_counts, width, [&](std::uint64_t index, std::uint64_t* out) {
        if (index < first_ || (index - first_) * width_ >= local_.size()) {
          throw Error(ExitCode::kFailure, "distributed array: a read reached the wrong owner");
        }
        std::copy_n(local_.begin() + static_cast<std::ptrdiff_t>((index - first_) * width_), width, out);
      });
  results_.assign(order.size() * width, 0);
  for (std::size_t i = 0; i < order.size(); ++i) {
    std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(i * width), width,
                results_.begin() + static_cast<std::ptrdiff_t>(order[i].second * width));
  }
  queued_reads_.clear();
}

}  // namespace zbfs
